/// Thins a source's sample stream down to one consumer's update interval, by timestamp.
///
/// A sample is passed when it is due: at or after the previous passed sample plus the interval, with
/// half a source period of slack for jitter. Samples are never interpolated or repeated. A consumer
/// whose interval is no longer than the source's period gets every sample, however the timestamps
/// jitter: there is nothing to thin, and a late sample must not cost the one that catches up right
/// after it. After a gap longer than the interval the schedule restarts from the sample after the gap.
package struct Decimator: Sendable {
    /// The consumer's interval, seconds.
    package var interval: Double
    private var nextDue: Double?

    /// A decimator for a consumer whose update interval is `interval` seconds.
    package init(interval: Double) {
        self.interval = interval
    }

    /// Whether the sample at `t` (seconds) goes to the consumer, given the source's period (seconds).
    package mutating func accept(_ t: Double, sourcePeriod: Double) -> Bool {
        if interval <= sourcePeriod * (1 + 1e-9) {
            nextDue = t + interval
            return true
        }
        guard let due = nextDue else {
            nextDue = t + interval
            return true
        }
        let slack = 0.5 * min(sourcePeriod, interval)
        guard t + slack >= due else { return false }
        var next = due + interval
        if next <= t { next = t + interval }
        nextDue = next
        return true
    }
}
