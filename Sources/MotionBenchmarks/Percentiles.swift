import MotionSources

/// The median, the 99th percentile (nearest rank) and the maximum of a set of measurements, as the
/// benchmarks report latencies and errors (`{"p50": …, "p99": …, "max": …}`).
package struct Percentiles: Codable, Equatable, Sendable {
    /// The median.
    package var p50: Double
    /// The 99th percentile, nearest rank.
    package var p99: Double
    /// The largest value.
    package var max: Double

    /// The percentiles of `values` times `scale`, rounded to whole units when `rounded`; all 0 when
    /// `values` is empty.
    package init(_ values: [Double], scale: Double = 1, rounded: Bool = true) {
        let sorted = values.sorted()
        func value(_ v: Double?) -> Double {
            let scaled = (v ?? 0) * scale
            return rounded ? scaled.rounded() : scaled
        }
        p50 = value(sorted.nearestRankPercentile(0.5))
        p99 = value(sorted.nearestRankPercentile(0.99))
        max = value(sorted.last)
    }
}
