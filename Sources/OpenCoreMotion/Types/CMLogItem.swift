import Foundation

/// The base of every Core Motion sample: something that happened at a ``timestamp``.
///
/// Samples are immutable and may be passed between threads freely.
open class CMLogItem: NSObject, NSCopying, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// When the sample was taken, in seconds since boot: the base of
    /// `ProcessInfo.processInfo.systemUptime`, which on Linux is `CLOCK_MONOTONIC`.
    public let timestamp: TimeInterval

    /// Creates an item taken at `timestamp` (seconds since boot).
    public init(timestamp: TimeInterval) {
        self.timestamp = timestamp
        super.init()
    }

    /// Samples are immutable, so a copy is the sample itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// One accelerometer reading.
open class CMAccelerometerData: CMLogItem, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The acceleration in g, device frame, gravity included and pointing down (face up: z ≈ −1).
    public let acceleration: CMAcceleration

    /// Creates a reading (beyond Apple, whose samples come only from the manager).
    public init(acceleration: CMAcceleration, timestamp: TimeInterval) {
        self.acceleration = acceleration
        super.init(timestamp: timestamp)
    }

    open override var description: String {
        "CMAccelerometerData(x: \(acceleration.x), y: \(acceleration.y), z: \(acceleration.z), timestamp: \(timestamp))"
    }
}

/// One gyroscope reading, raw: the sensor's bias is still in it (``CMDeviceMotion/rotationRate`` has it removed).
open class CMGyroData: CMLogItem, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The rotation rate in rad/s, device frame.
    public let rotationRate: CMRotationRate

    /// Creates a reading (beyond Apple).
    public init(rotationRate: CMRotationRate, timestamp: TimeInterval) {
        self.rotationRate = rotationRate
        super.init(timestamp: timestamp)
    }

    open override var description: String {
        "CMGyroData(x: \(rotationRate.x), y: \(rotationRate.y), z: \(rotationRate.z), timestamp: \(timestamp))"
    }
}

/// One magnetometer reading, raw: the device's own hard and soft iron are still in it.
open class CMMagnetometerData: CMLogItem, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The magnetic field in µT, device frame.
    public let magneticField: CMMagneticField

    /// Creates a reading (beyond Apple).
    public init(magneticField: CMMagneticField, timestamp: TimeInterval) {
        self.magneticField = magneticField
        super.init(timestamp: timestamp)
    }

    open override var description: String {
        "CMMagnetometerData(x: \(magneticField.x), y: \(magneticField.y), z: \(magneticField.z), timestamp: \(timestamp))"
    }
}
