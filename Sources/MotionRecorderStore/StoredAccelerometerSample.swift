import Foundation

/// One accelerometer reading to store: the sample and the two clocks it is known by. The same
/// shape carries a rotation rate (`x`, `y`, `z` in rad/s) to ``RecordedSensor/rotationRate``.
package struct AccelerometerReading: Sendable, Hashable {
    /// The wall-clock time of the sample.
    package var date: Date
    /// Seconds since boot (`CLOCK_MONOTONIC`), as every Core Motion timestamp.
    package var timestamp: Double
    /// Acceleration along x, in g (9.80665 m/s²), Core Motion's sign (face up reads z ≈ −1).
    package var x: Double
    /// Acceleration along y, in g.
    package var y: Double
    /// Acceleration along z, in g.
    package var z: Double

    /// Creates a reading. Acceleration in g, `timestamp` in seconds since boot.
    package init(date: Date, timestamp: Double, x: Double, y: Double, z: Double) {
        self.date = date
        self.timestamp = timestamp
        self.x = x
        self.y = y
        self.z = z
    }

    /// `true` when every number is finite; the store skips the others.
    package var isFinite: Bool {
        date.timeIntervalSince1970.isFinite && timestamp.isFinite && x.isFinite && y.isFinite && z.isFinite
    }
}

/// One accelerometer (or rotation-rate) reading read back from the store.
package struct StoredAccelerometerSample: Sendable, Hashable {
    /// The batch the sample was written in. Every sample of one write transaction shares it; later
    /// batches have larger identifiers, and an identifier is never reused, even after retention
    /// deleted its samples. This is the meaning Apple gives `CMRecordedAccelerometerData.identifier`.
    package var identifier: UInt64
    /// The reading.
    package var reading: AccelerometerReading

    /// Creates a stored sample.
    package init(identifier: UInt64, reading: AccelerometerReading) {
        self.identifier = identifier
        self.reading = reading
    }
}

/// A request to record, as stored: when it was made and how long it asked for.
package struct RecordingSession: Sendable, Hashable {
    /// The session's row identifier.
    package var id: Int64
    /// The source that was recorded, such as `sim:handheld` or `iio:iio:device0`.
    package var source: String
    /// Wall-clock time the recording was requested.
    package var requestedStart: Date
    /// Wall-clock time the recording was asked to end: the start plus the requested duration.
    package var requestedEnd: Date

    /// Creates a session description.
    package init(id: Int64, source: String, requestedStart: Date, requestedEnd: Date) {
        self.id = id
        self.source = source
        self.requestedStart = requestedStart
        self.requestedEnd = requestedEnd
    }
}
