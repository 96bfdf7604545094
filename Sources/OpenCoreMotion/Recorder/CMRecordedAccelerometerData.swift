import Foundation

/// One accelerometer sample read back from a ``CMSensorRecorder`` recording.
///
/// As every ``CMLogItem``, ``CMLogItem/timestamp`` is in seconds since boot; ``startDate`` is the
/// same instant on the wall clock. Samples are immutable and may be passed between threads freely.
open class CMRecordedAccelerometerData: CMAccelerometerData, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The batch the sample was recorded in: samples are written in batches (one every half second
    /// at most), each with its own identifier, larger than every earlier batch's and never reused.
    public let identifier: UInt64

    /// The wall-clock time at which the sample was taken.
    public let startDate: Date

    /// Creates a sample (beyond Apple, whose samples come only from the recorder).
    ///
    /// - Parameters:
    ///   - identifier: the batch identifier.
    ///   - startDate: the wall-clock time of the sample.
    ///   - acceleration: in g, device frame, gravity included (face up: z ≈ −1).
    ///   - timestamp: seconds since boot.
    public init(identifier: UInt64, startDate: Date, acceleration: CMAcceleration, timestamp: TimeInterval) {
        self.identifier = identifier
        self.startDate = startDate
        super.init(acceleration: acceleration, timestamp: timestamp)
    }

    open override var description: String {
        "CMRecordedAccelerometerData(identifier: \(identifier), startDate: \(startDate), x: \(acceleration.x), y: \(acceleration.y), z: \(acceleration.z), timestamp: \(timestamp))"
    }
}
