import Foundation
import MotionSources

/// One recording of accelerometer samples into a ``RecordingStore``, fed sample by sample; or, with
/// ``sensor`` ``RecordedSensor/rotationRate``, of rotation-rate samples (rad/s in place of g), under
/// the same rules.
///
/// The caller subscribes to a source (a `CMMotionManager` at ``rate``, or any other feed) and
/// passes each sample to ``receive(timestamp:x:y:z:)``, which answers whether the recording still
/// wants samples. The recording lasts ``duration`` seconds of *sample* time, counted from the first
/// sample, so a source on a virtual clock records the same samples as a live one, only faster.
/// Each sample is stored with its wall-clock date, `timestamp + wallClockOffset`.
///
/// ## Threading
/// Every member may be called from any thread.
package final class AccelerometerRecording: Sendable {
    /// Apple's recorder rate, 50 Hz.
    package static let rate = 50.0
    /// The longest recording, 12 hours in seconds, as Apple allows.
    package static let maximumDuration: TimeInterval = 12 * 3600

    /// The writer the samples go through.
    package let writer: RecordingWriter
    /// The stored session of this recording.
    package let session: Int64
    /// Unix time of timestamp 0: `date = timestamp + wallClockOffset`.
    package let wallClockOffset: TimeInterval
    /// What is recorded.
    package let sensor: RecordedSensor

    private struct State {
        var span: RecordingSpan
        /// The earliest time the next sample is kept, for thinning a faster source to ``rate``.
        var nextDue: Double?
    }

    private let state: Locked<State>

    /// Stores a session for `source` and prepares to record.
    ///
    /// - Parameters:
    ///   - store: where samples go.
    ///   - source: the source's identifier, stored with the session.
    ///   - duration: seconds to record, clamped to 0…``maximumDuration`` (NaN gives 0).
    ///   - requestedAt: when the recording was requested. Default: now.
    ///   - wallClockOffset: unix time of timestamp 0. Default: ``MonotonicClock/unixTimeAtBoot()``,
    ///     which is right for every live source.
    ///   - maximumBatchCount: see ``RecordingWriter``. Default 50.
    ///   - sensor: what is recorded. Default ``RecordedSensor/accelerometer``.
    /// - Throws: ``RecorderError`` when the session cannot be stored.
    package init(
        store: RecordingStore, source: String, duration: TimeInterval, requestedAt: Date = Date(),
        wallClockOffset: TimeInterval? = nil, maximumBatchCount: Int = 50, sensor: RecordedSensor = .accelerometer
    ) throws(RecorderError) {
        let clamped = Self.clamp(duration)
        self.sensor = sensor
        session = try store.beginSession(source: source, start: requestedAt, duration: clamped, sensor: sensor)
        writer = RecordingWriter(store: store, session: session, maximumBatchCount: maximumBatchCount, sensor: sensor)
        self.wallClockOffset = wallClockOffset ?? MonotonicClock.unixTimeAtBoot()
        state = Locked(State(span: RecordingSpan(duration: clamped, requestedStart: requestedAt)))
    }

    /// `duration` within 0…``maximumDuration``; NaN and negative values give 0.
    package static func clamp(_ duration: TimeInterval) -> TimeInterval {
        guard duration > 0 else { return 0 }
        return min(duration, maximumDuration)
    }

    /// Records one sample (acceleration in g, or rotation rate in rad/s; `timestamp` in seconds since
    /// boot). Samples closer
    /// together than 1/``rate`` are thinned out, so a faster source is stored at 50 Hz.
    ///
    /// - Returns: `false` once the recording is over: the sample is at or past the end (it is not
    ///   stored), ``finish()`` was called, or a write failed.
    /// - Throws: the ``RecorderError`` of a failed batch write, once; the recording is then over.
    @discardableResult
    package func receive(timestamp: Double, x: Double, y: Double, z: Double) throws(RecorderError) -> Bool {
        // nil: over; false: thinned out (the recording goes on); true: store it.
        let keep = state.withLock { s -> Bool? in
            guard s.span.admits(timestamp) else { return nil }
            // Thin a faster source to 50 Hz, so that the stored rate is the rate reported: keep a
            // sample when it is at most 30 % of a period early (jitter at 50 Hz passes; the odd
            // samples of a 100 Hz source do not); a late one moves the schedule along.
            guard timestamp.isFinite else { return true }
            let period = 1 / Self.rate
            if let due = s.nextDue, timestamp < due - 0.3 * period { return false }
            s.nextDue = max((s.nextDue ?? timestamp) + period, timestamp + 0.5 * period)
            return true
        }
        guard let keep else { return false }
        guard keep else { return true }
        let reading = AccelerometerReading(
            date: Date(timeIntervalSince1970: timestamp + wallClockOffset), timestamp: timestamp, x: x, y: y, z: z
        )
        do {
            try writer.append(reading)
        } catch {
            state.withLock { $0.span.finished = true }
            throw error
        }
        return true
    }

    /// Makes the recording last until at least `duration` seconds after the latest sample (or after
    /// the first one, when none has come yet), clamped to ``maximumDuration`` from now, and stores the
    /// new end. Does nothing once the recording is over.
    ///
    /// - Parameter lastTimestamp: the latest sample time known to the caller, seconds since boot.
    /// - Returns: `false` when the recording is already over.
    @discardableResult
    package func extend(by duration: TimeInterval, after lastTimestamp: Double? = nil, now: Date = Date()) throws(RecorderError) -> Bool {
        let clamped = Self.clamp(duration)
        let end = state.withLock { $0.span.extend(by: clamped, after: lastTimestamp) }
        guard let end else { return false }
        try writer.store.updateSession(session, requestedEnd: end)
        return true
    }

    /// Ends the recording and writes what is buffered.
    ///
    /// - Throws: the error of the last write, if it failed.
    package func finish() throws(RecorderError) {
        state.withLock { $0.span.finished = true }
        try writer.close()
    }

    /// `true` once the recording is over (past its end, finished, or failed).
    package var isFinished: Bool { state.withLock { $0.span.finished } }

    /// The recording's length in seconds of sample time.
    package var duration: TimeInterval { state.withLock { $0.span.duration } }
}
