import Foundation

/// A change in altitude, as Core Motion's `CMAltitudeData`.
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMAltitudeData: CMLogItem {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    private let storedRelativeAltitude: NSNumber
    private let storedPressure: NSNumber

    /// Altitude (m) relative to the first reading after updates started; positive is higher.
    open var relativeAltitude: NSNumber { storedRelativeAltitude }
    /// The air pressure (kPa).
    open var pressure: NSNumber { storedPressure }

    /// Creates a record of 0 m and 0 kPa at timestamp 0, as Apple's `init()`.
    public override init() {
        storedRelativeAltitude = 0
        storedPressure = 0
        super.init()
    }

    /// Creates a record (beyond Apple: for tests and tools). `timestamp` in seconds since boot.
    public init(timestamp: TimeInterval, relativeAltitude: Double, pressure: Double) {
        storedRelativeAltitude = NSNumber(value: relativeAltitude)
        storedPressure = NSNumber(value: pressure)
        super.init(timestamp: timestamp)
    }

    /// Decodes a record written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedRelativeAltitude = NSNumber(value: coder.decodeDouble(forKey: "relativeAltitude"))
        storedPressure = NSNumber(value: coder.decodeDouble(forKey: "pressure"))
        super.init(coder: coder)
    }

    /// Writes the record through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(relativeAltitude.doubleValue, forKey: "relativeAltitude")
        coder.encode(pressure.doubleValue, forKey: "pressure")
    }
}

/// Absolute altitude, as Core Motion's `CMAbsoluteAltitudeData`: delivered only where a reference is
/// known (see ``CMAltimeter/isAbsoluteAltitudeAvailable()``).
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMAbsoluteAltitudeData: CMLogItem {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    private let storedAltitude: Double
    private let storedAccuracy: Double
    private let storedPrecision: Double

    /// Altitude (m) above mean sea level.
    open var altitude: Double { storedAltitude }
    /// Estimated accuracy of ``altitude`` (m, one standard deviation).
    open var accuracy: Double { storedAccuracy }
    /// Estimated precision, the noise of successive values (m).
    open var precision: Double { storedPrecision }

    /// Creates a record of 0 m, accuracy and precision 0, timestamp 0, as Apple's `init()`.
    public override init() {
        storedAltitude = 0
        storedAccuracy = 0
        storedPrecision = 0
        super.init()
    }

    /// Creates a record (beyond Apple: for tests and tools). `timestamp` in seconds since boot.
    public init(timestamp: TimeInterval, altitude: Double, accuracy: Double, precision: Double) {
        storedAltitude = altitude
        storedAccuracy = accuracy
        storedPrecision = precision
        super.init(timestamp: timestamp)
    }

    /// Decodes a record written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedAltitude = coder.decodeDouble(forKey: "altitude")
        storedAccuracy = coder.decodeDouble(forKey: "accuracy")
        storedPrecision = coder.decodeDouble(forKey: "precision")
        super.init(coder: coder)
    }

    /// Writes the record through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(altitude, forKey: "altitude")
        coder.encode(accuracy, forKey: "accuracy")
        coder.encode(precision, forKey: "precision")
    }
}

/// Handler of relative altitude: a record, or an error in ``CMErrorDomain``.
public typealias CMAltitudeHandler = (CMAltitudeData?, (any Error)?) -> Void
/// Handler of absolute altitude: a record, or an error in ``CMErrorDomain``.
public typealias CMAbsoluteAltitudeHandler = (CMAbsoluteAltitudeData?, (any Error)?) -> Void
