import Foundation
import MotionSources

/// One recording of barometer readings into a ``RecordingStore`` (``RecordedSensor/pressure``), fed
/// reading by reading by a caller that polls the barometer at ``rate``.
///
/// The rules are the accelerometer's (``AccelerometerRecording``): the recording lasts ``duration``
/// seconds of *sample* time from the first reading (at most 12 hours), so a barometer on a virtual
/// clock records the same readings as a live one, only faster; each reading is stored with its
/// wall-clock date, `timestamp + wallClockOffset`; readings go through a ``PressureWriter`` in
/// batches. The barometer is polled, so there is nothing to thin: the caller sets the pace.
///
/// ## Threading
/// Every member may be called from any thread.
package final class PressureRecording: Sendable {
    /// Readings per second, 1 Hz: the rate of SensorKit's ambient pressure, which Apple delivers
    /// `CMRecordedPressureData` through.
    package static let rate = 1.0

    /// The writer the readings go through.
    package let writer: PressureWriter
    /// The stored session of this recording.
    package let session: Int64
    /// Unix time of timestamp 0: `date = timestamp + wallClockOffset`.
    package let wallClockOffset: TimeInterval

    private let state: Locked<RecordingSpan>

    /// Stores a session for the barometer `source` and prepares to record.
    ///
    /// - Parameters:
    ///   - store: where readings go.
    ///   - source: the barometer's identifier (such as `sim:stairs` or `iio:bmp280`).
    ///   - duration: seconds to record, clamped to 0…12 hours (NaN gives 0).
    ///   - requestedAt: when the recording was requested. Default: now.
    ///   - wallClockOffset: unix time of timestamp 0. Default: ``MonotonicClock/unixTimeAtBoot()``.
    ///   - maximumBatchCount: readings per batch at most. Default 10.
    ///   - maximumBatchAge: seconds of sample time per batch at most. Default 1.5 (about two readings
    ///     at 1 Hz per transaction, so little is lost if the process is killed).
    /// - Throws: ``RecorderError`` when the session cannot be stored.
    package init(
        store: RecordingStore, source: String, duration: TimeInterval, requestedAt: Date = Date(),
        wallClockOffset: TimeInterval? = nil, maximumBatchCount: Int = 10, maximumBatchAge: Double = 1.5
    ) throws(RecorderError) {
        let clamped = AccelerometerRecording.clamp(duration)
        session = try store.beginSession(source: source, start: requestedAt, duration: clamped, sensor: .pressure)
        writer = PressureWriter(
            store: store, session: session, maximumBatchCount: maximumBatchCount, maximumBatchAge: maximumBatchAge, sensor: .pressure
        )
        self.wallClockOffset = wallClockOffset ?? MonotonicClock.unixTimeAtBoot()
        state = Locked(RecordingSpan(duration: clamped, requestedStart: requestedAt))
    }

    /// Records one reading: `pressure` in kPa, `temperature` in °C (`nil`: unknown), `timestamp` in
    /// seconds since boot. A reading whose pressure is NaN or infinite is not stored (the recording
    /// goes on); a temperature that is not finite is stored as unknown.
    ///
    /// - Returns: `false` once the recording is over: the reading is at or past the end (it is not
    ///   stored), ``finish()`` was called, or a write failed.
    /// - Throws: the ``RecorderError`` of a failed batch write, once; the recording is then over.
    @discardableResult
    package func receive(timestamp: Double, pressure: Double, temperature: Double?) throws(RecorderError) -> Bool {
        guard state.withLock({ $0.admits(timestamp) }) else { return false }
        let reading = PressureReading(
            date: Date(timeIntervalSince1970: timestamp + wallClockOffset), timestamp: timestamp,
            pressure: pressure, temperature: temperature
        )
        do {
            try writer.append(reading)
        } catch {
            state.withLock { $0.finished = true }
            throw error
        }
        return true
    }

    /// Makes the recording last until at least `duration` seconds after the latest reading (or after
    /// the first one, when none has come yet), clamped to 12 hours, and stores the new end, as
    /// ``AccelerometerRecording/extend(by:after:now:)``. Does nothing once the recording is over.
    ///
    /// - Returns: `false` when the recording is already over.
    @discardableResult
    package func extend(by duration: TimeInterval, after lastTimestamp: Double? = nil) throws(RecorderError) -> Bool {
        let clamped = AccelerometerRecording.clamp(duration)
        let end = state.withLock { $0.extend(by: clamped, after: lastTimestamp) }
        guard let end else { return false }
        try writer.store.updateSession(session, requestedEnd: end)
        return true
    }

    /// Ends the recording and writes what is buffered.
    ///
    /// - Throws: the error of the last write, if it failed.
    package func finish() throws(RecorderError) {
        state.withLock { $0.finished = true }
        try writer.close()
    }

    /// `true` once the recording is over (past its end, finished, or failed).
    package var isFinished: Bool { state.withLock { $0.finished } }

    /// The recording's length in seconds of sample time.
    package var duration: TimeInterval { state.withLock { $0.duration } }
}
