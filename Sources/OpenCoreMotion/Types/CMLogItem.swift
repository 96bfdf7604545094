import Foundation

/// The base of every Core Motion sample: something that happened at a ``timestamp``.
///
/// As on Apple platforms the class and its members are `open`, so tests can subclass it and
/// override what they need; `init()` creates an item at timestamp 0. Items conform to `NSCopying`
/// and `NSSecureCoding` (`NSKeyedArchiver` with `requiringSecureCoding: true` round-trips them).
///
/// ## Threading
/// Samples the package creates are immutable and may be passed between threads freely.
open class CMLogItem: NSObject, NSCopying, NSSecureCoding {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    private let storedTimestamp: TimeInterval

    /// When the sample was taken, in seconds since boot: the base of
    /// `ProcessInfo.processInfo.systemUptime`, which on Linux is `CLOCK_MONOTONIC`.
    open var timestamp: TimeInterval { storedTimestamp }

    /// Creates an item at timestamp 0, as Apple's `init()`; subclasses in tests override the accessors.
    public override init() {
        storedTimestamp = 0
        super.init()
    }

    /// Creates an item taken at `timestamp` (seconds since boot) (beyond Apple).
    public init(timestamp: TimeInterval) {
        storedTimestamp = timestamp
        super.init()
    }

    /// Decodes an item written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedTimestamp = coder.decodeDouble(forKey: "timestamp")
        super.init()
    }

    /// `true`: items decode with `NSSecureCoding`.
    open class var supportsSecureCoding: Bool { true }

    /// Writes the item through its accessors (so a subclass's overrides are what is written).
    open func encode(with coder: NSCoder) {
        coder.encode(timestamp, forKey: "timestamp")
    }

    /// Items are immutable, so a copy is the item itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// One accelerometer reading.
open class CMAccelerometerData: CMLogItem {
    // Not `Sendable` yet thread-safe: see CMLogItem.
    private let storedAcceleration: CMAcceleration

    /// The acceleration in g, device frame, gravity included and pointing down (face up: z ≈ −1).
    open var acceleration: CMAcceleration { storedAcceleration }

    /// Creates a zero reading at timestamp 0, as Apple's `init()`.
    public override init() {
        storedAcceleration = CMAcceleration()
        super.init()
    }

    /// Creates a reading (beyond Apple, whose samples come only from the manager).
    public init(acceleration: CMAcceleration, timestamp: TimeInterval) {
        storedAcceleration = acceleration
        super.init(timestamp: timestamp)
    }

    /// Decodes a reading written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        let a = coder.decodeVector(forKey: "acceleration")
        storedAcceleration = CMAcceleration(x: a.x, y: a.y, z: a.z)
        super.init(coder: coder)
    }

    /// Writes the reading through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        let a = acceleration
        coder.encodeVector(a.x, a.y, a.z, forKey: "acceleration")
    }

    open override var description: String {
        let a = acceleration
        return "CMAccelerometerData(x: \(a.x), y: \(a.y), z: \(a.z), timestamp: \(timestamp))"
    }
}

/// One gyroscope reading, raw: the sensor's bias is still in it (``CMDeviceMotion/rotationRate`` has it removed).
open class CMGyroData: CMLogItem {
    // Not `Sendable` yet thread-safe: see CMLogItem.
    private let storedRotationRate: CMRotationRate

    /// The rotation rate in rad/s, device frame.
    open var rotationRate: CMRotationRate { storedRotationRate }

    /// Creates a zero reading at timestamp 0, as Apple's `init()`.
    public override init() {
        storedRotationRate = CMRotationRate()
        super.init()
    }

    /// Creates a reading (beyond Apple).
    public init(rotationRate: CMRotationRate, timestamp: TimeInterval) {
        storedRotationRate = rotationRate
        super.init(timestamp: timestamp)
    }

    /// Decodes a reading written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        let r = coder.decodeVector(forKey: "rotationRate")
        storedRotationRate = CMRotationRate(x: r.x, y: r.y, z: r.z)
        super.init(coder: coder)
    }

    /// Writes the reading through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        let r = rotationRate
        coder.encodeVector(r.x, r.y, r.z, forKey: "rotationRate")
    }

    open override var description: String {
        let r = rotationRate
        return "CMGyroData(x: \(r.x), y: \(r.y), z: \(r.z), timestamp: \(timestamp))"
    }
}

/// One magnetometer reading, raw: the device's own hard and soft iron are still in it.
open class CMMagnetometerData: CMLogItem {
    // Not `Sendable` yet thread-safe: see CMLogItem.
    private let storedMagneticField: CMMagneticField

    /// The magnetic field in µT, device frame.
    open var magneticField: CMMagneticField { storedMagneticField }

    /// Creates a zero reading at timestamp 0, as Apple's `init()`.
    public override init() {
        storedMagneticField = CMMagneticField()
        super.init()
    }

    /// Creates a reading (beyond Apple).
    public init(magneticField: CMMagneticField, timestamp: TimeInterval) {
        storedMagneticField = magneticField
        super.init(timestamp: timestamp)
    }

    /// Decodes a reading written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        let m = coder.decodeVector(forKey: "magneticField")
        storedMagneticField = CMMagneticField(x: m.x, y: m.y, z: m.z)
        super.init(coder: coder)
    }

    /// Writes the reading through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        let m = magneticField
        coder.encodeVector(m.x, m.y, m.z, forKey: "magneticField")
    }

    open override var description: String {
        let m = magneticField
        return "CMMagnetometerData(x: \(m.x), y: \(m.y), z: \(m.z), timestamp: \(timestamp))"
    }
}
