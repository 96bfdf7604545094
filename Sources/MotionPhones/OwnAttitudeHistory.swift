import NIOCore

/// The last few timed values of one quantity, for lookups by time. Bounded: at most ``capacity``.
struct OwnAttitudeHistory<Value: Sendable>: Sendable {
    /// Values kept: 2 s at 256 Hz, more than any app's batch.
    static var capacity: Int { 512 }
    private var items = CircularBuffer<(timestamp: Double, value: Value)>(initialCapacity: 16)

    /// Adds a value; timestamps must not go backwards (a value older than the last is dropped).
    mutating func append(_ value: Value, at timestamp: Double) {
        if let last = items.last, timestamp < last.timestamp { return }
        if items.count >= Self.capacity { items.removeFirst() }
        items.append((timestamp, value))
    }

    /// The newest value at or before `timestamp` (0.5 ms of slack for rounding), searched from the end.
    func value(atOrBefore timestamp: Double) -> (timestamp: Double, value: Value)? {
        var i = items.endIndex
        while i != items.startIndex {
            i = items.index(before: i)
            if items[i].timestamp <= timestamp + 0.0005 { return items[i] }
        }
        return nil
    }

    mutating func removeAll() { items.removeAll(keepingCapacity: true) }
}
