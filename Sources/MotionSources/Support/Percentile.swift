extension Array where Element == Double {
    /// The nearest-rank `p`-quantile of an array sorted ascending: the smallest element at or below
    /// which at least `p × count` elements lie (`p` = 0.5 the median, 0.99 the 99th percentile, 1 the
    /// maximum). `nil` for an empty array. The benchmarks' one definition of p50 and p99.
    ///
    /// - Parameter p: the quantile, clamped to 0…1 (NaN reads as 0).
    /// - Complexity: O(1); the array must already be sorted.
    package func nearestRankPercentile(_ p: Double) -> Double? {
        guard !isEmpty else { return nil }
        let q = p.isNaN ? 0 : Swift.min(Swift.max(p, 0), 1)
        let rank = (q * Double(count)).rounded(.up)  // 0…count, exact in Double for any real count
        return self[Swift.min(count - 1, Swift.max(0, Int(rank) - 1))]  // safe: 0 ≤ rank ≤ count
    }
}
