import Foundation

/// How long a recording runs, in *sample* time: the rules every recording of the store shares
/// (``AccelerometerRecording``, ``PressureRecording``).
///
/// A recording lasts ``duration`` seconds from its first sample's timestamp, so a source on a virtual
/// clock records the same samples as a live one, only faster. It is over once a sample reaches its end,
/// or once it is finished (by the caller, or by a failed write). A value type: its owner keeps it under
/// its own lock.
struct RecordingSpan: Sendable {
    /// Seconds of sample time, already clamped (``AccelerometerRecording/clamp(_:)``).
    private(set) var duration: TimeInterval
    /// When the recording was requested: its stored end is this plus ``duration``.
    let requestedStart: Date
    /// The first finite sample timestamp, seconds since boot.
    private(set) var firstTimestamp: Double?
    /// `true` once the recording is over.
    var finished: Bool

    /// A span of `duration` (clamped) seconds requested at `requestedStart`; over at once when it is 0.
    init(duration: TimeInterval, requestedStart: Date) {
        self.duration = duration
        self.requestedStart = requestedStart
        finished = duration <= 0
    }

    /// Whether a sample at `timestamp` (seconds since boot) is still inside the recording. The first
    /// finite timestamp starts the span; a sample at or past its end finishes it and is not admitted.
    mutating func admits(_ timestamp: Double) -> Bool {
        guard !finished else { return false }
        if timestamp.isFinite, firstTimestamp == nil { firstTimestamp = timestamp }
        if let first = firstTimestamp, timestamp >= first + duration {
            finished = true
            return false
        }
        return true
    }

    /// Makes the span last until at least `clamped` seconds after `lastTimestamp` (or after the first
    /// sample when `nil`, or when none has come). Returns the new requested end, or `nil` when the
    /// recording is already over.
    mutating func extend(by clamped: TimeInterval, after lastTimestamp: Double?) -> Date? {
        guard !finished else { return nil }
        let elapsed = firstTimestamp.flatMap { first in lastTimestamp.map { max($0 - first, 0) } } ?? 0
        duration = max(duration, elapsed + clamped)
        return requestedStart.addingTimeInterval(duration)
    }
}
