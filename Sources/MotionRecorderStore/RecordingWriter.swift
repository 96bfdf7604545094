import Foundation
import MotionSources

/// A reading a ``RecordingWriterOf`` can buffer and store: ``AccelerometerReading`` (acceleration or
/// rotation rate) or ``PressureReading``.
package protocol StorableReading: Sendable {
    /// Seconds since boot.
    var timestamp: Double { get }
    /// `false` for a reading the store skips (a NaN or infinite number).
    var isFinite: Bool { get }
    /// Writes `readings` as one batch of `sensor`'s samples.
    static func insert(_ readings: [Self], into store: RecordingStore, session: Int64?, sensor: RecordedSensor) throws(RecorderError)
}

extension AccelerometerReading: StorableReading {
    /// See ``RecordingStore/insert(_:session:sensor:)``.
    package static func insert(
        _ readings: [Self], into store: RecordingStore, session: Int64?, sensor: RecordedSensor
    ) throws(RecorderError) {
        try store.insert(readings, session: session, sensor: sensor)
    }
}

extension PressureReading: StorableReading {
    /// See ``RecordingStore/insert(_:session:)``; `sensor` is always ``RecordedSensor/pressure``.
    package static func insert(
        _ readings: [Self], into store: RecordingStore, session: Int64?, sensor: RecordedSensor
    ) throws(RecorderError) {
        try store.insert(readings, session: session)
    }
}

/// The writer of accelerometer and rotation-rate readings.
package typealias RecordingWriter = RecordingWriterOf<AccelerometerReading>
/// The writer of pressure readings (``RecordedSensor/pressure``).
package typealias PressureWriter = RecordingWriterOf<PressureReading>

/// Buffers readings and writes them to a ``RecordingStore`` in batches, so that recording at
/// 50–100 Hz costs one transaction every half second rather than one per sample.
///
/// A batch is written when it holds ``maximumBatchCount`` readings or spans ``maximumBatchAge``
/// seconds of sample time (by `timestamp`), and by ``flush()`` and ``close()``. Time is taken from
/// the samples, not from a timer, so a recording on a virtual clock batches exactly as a live one.
/// Each batch is one transaction: a batch that fails is not written at all, and every batch written
/// before it stays.
///
/// ## Threading
/// Every member may be called from any thread; appends are serialised.
package final class RecordingWriterOf<Reading: StorableReading>: Sendable {
    /// The store written to.
    package let store: RecordingStore
    /// The session the samples belong to, if any.
    package let session: Int64?
    /// The table the samples go to (the readings' `x`, `y`, `z` are in its unit).
    package let sensor: RecordedSensor
    /// The most readings one batch holds. Default 50.
    package let maximumBatchCount: Int
    /// The longest span of sample time, in seconds, one batch covers before it is written. Default 0.5 s.
    package let maximumBatchAge: Double

    private struct State {
        var buffer: [Reading] = []
        var written = 0
        var skipped = 0
        var batches = 0
        var error: RecorderError?
        var closed = false
        var lastRetention: Date
    }

    private let state: Locked<State>

    /// Creates a writer.
    ///
    /// - Parameters:
    ///   - store: where batches go.
    ///   - session: the session the samples belong to (see ``RecordingStore/beginSession(source:start:duration:)``).
    ///   - maximumBatchCount: readings per batch at most (at least 1). Default 50.
    ///   - maximumBatchAge: seconds of sample time per batch at most. Default 0.5.
    ///   - sensor: what the readings are: acceleration in g (default) or rotation rate in rad/s
    ///     (``AccelerometerReading``), or ``RecordedSensor/pressure`` (``PressureReading``).
    package init(
        store: RecordingStore, session: Int64? = nil, maximumBatchCount: Int = 50, maximumBatchAge: Double = 0.5,
        sensor: RecordedSensor = .accelerometer
    ) {
        self.store = store
        self.session = session
        self.sensor = sensor
        self.maximumBatchCount = max(maximumBatchCount, 1)
        self.maximumBatchAge = maximumBatchAge.isFinite ? max(maximumBatchAge, 0) : 0.5
        state = Locked(State(lastRetention: Date()))
    }

    /// Adds a reading; writes the batch when it is full or old enough. A reading with a NaN or
    /// infinite number is counted in ``skippedCount`` and dropped.
    ///
    /// - Throws: the ``RecorderError`` of the batch write, once; after it (or after ``close()``)
    ///   readings are dropped and this returns without error.
    package func append(_ reading: Reading) throws(RecorderError) {
        let result: Result<Void, RecorderError> = state.withLock { s in
            guard !s.closed, s.error == nil else { return .success(()) }
            guard reading.isFinite else {
                s.skipped += 1
                return .success(())
            }
            s.buffer.append(reading)
            let span = reading.timestamp - (s.buffer.first?.timestamp ?? reading.timestamp)
            if s.buffer.count >= maximumBatchCount || span >= maximumBatchAge {
                return flushLocked(&s)
            }
            return .success(())
        }
        try result.get()
    }

    /// Writes the buffered readings now.
    package func flush() throws(RecorderError) {
        try state.withLock { s in flushLocked(&s) }.get()
    }

    /// Writes what is buffered and stops accepting readings. Calling it again does nothing.
    ///
    /// - Throws: the error of the last write, if it failed.
    package func close() throws(RecorderError) {
        try state.withLock { s -> Result<Void, RecorderError> in
            guard !s.closed else { return .success(()) }
            let r = flushLocked(&s)
            s.closed = true
            return r
        }.get()
    }

    /// Readings committed to the store so far.
    package var writtenCount: Int { state.withLock { $0.written } }
    /// Readings dropped for a NaN or infinite number.
    package var skippedCount: Int { state.withLock { $0.skipped } }
    /// Batches committed so far.
    package var batchCount: Int { state.withLock { $0.batches } }
    /// The error that stopped writing, if any.
    package var error: RecorderError? { state.withLock { $0.error } }

    private func flushLocked(_ s: inout State) -> Result<Void, RecorderError> {
        if let error = s.error { return .failure(error) }
        guard !s.buffer.isEmpty else { return .success(()) }
        do {
            try Reading.insert(s.buffer, into: store, session: session, sensor: sensor)
            s.written += s.buffer.count
            s.batches += 1
            s.buffer.removeAll(keepingCapacity: true)
            let now = Date()
            if now.timeIntervalSince(s.lastRetention) >= 3600 {
                s.lastRetention = now
                try store.deleteSamples(before: now.addingTimeInterval(-RecordingStore.retention))
            }
            return .success(())
        } catch {
            s.error = error
            s.buffer.removeAll()
            return .failure(error)
        }
    }
}
