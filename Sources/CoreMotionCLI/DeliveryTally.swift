/// What the delivery benchmarks (`bench delivery`, `bench soak`) count of the updates a handler
/// receives: how many, how many out of order, whether one past the cut-off arrived, and optionally
/// each update's latency.
struct DeliveryTally: Sendable {
    var delivered = 0
    var outOfOrder = 0
    /// `true` once an update stamped after the cut-off arrived: the queue has drained.
    var pastCutoff = false
    /// Latency of each counted update in µs, when recorded.
    var latencies: [Double] = []
    private var last = -Double.infinity

    init(latencyCapacity: Int = 0) {
        latencies.reserveCapacity(latencyCapacity)
    }

    /// Counts an update stamped `timestamp` (seconds since boot), received at `now`, unless it is
    /// past `cutoff`; with `recordLatency`, keeps `now − timestamp`.
    mutating func record(timestamp: Double, now: Double, cutoff: Double, recordLatency: Bool) {
        if timestamp > cutoff {
            pastCutoff = true
            return
        }
        delivered += 1
        if recordLatency { latencies.append((now - timestamp) * 1e6) }
        if timestamp <= last { outOfOrder += 1 }
        last = timestamp
    }
}
