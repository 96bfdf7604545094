import Foundation
import MotionSources

// What the benchmarks share in their reports: the percentiles of a list of measurements and the
// `--json` line.

/// The median, the 99th percentile (nearest rank) and the maximum of a set of measurements, as the
/// benchmarks report latencies and errors (`{"p50": …, "p99": …, "max": …}`).
struct Percentiles: Codable, Equatable, Sendable {
    var p50: Double
    var p99: Double
    var max: Double

    /// The percentiles of `values` times `scale`, rounded to whole units when `rounded`; all 0 when
    /// `values` is empty.
    init(_ values: [Double], scale: Double = 1, rounded: Bool = true) {
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

/// Prints `value` as JSON with sorted keys on standard output: one line, or indented when `pretty`.
func printJSON<Value: Encodable>(_ value: Value, pretty: Bool = false) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

extension Locked where State == DeliveryTally {
    /// Waits until an update stamped past the cut-off has arrived (the handler's queue has drained),
    /// at most `timeout` seconds.
    func waitForDrain(timeout: Double = 5) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if withLock({ $0.pastCutoff }) { return }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
    }
}
