import Foundation

/// A change in altitude, as Core Motion's `CMAltitudeData`.
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMAltitudeData: CMLogItem, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its properties are `private(set)` and written only by its initialiser.
    /// Altitude (m) relative to the first reading after updates started; positive is higher.
    open private(set) var relativeAltitude: NSNumber
    /// The air pressure (kPa).
    open private(set) var pressure: NSNumber

    /// Creates a record (beyond Apple: for tests and tools). `timestamp` in seconds since boot.
    public init(timestamp: TimeInterval, relativeAltitude: Double, pressure: Double) {
        self.relativeAltitude = NSNumber(value: relativeAltitude)
        self.pressure = NSNumber(value: pressure)
        super.init(timestamp: timestamp)
    }
}

/// Absolute altitude, as Core Motion's `CMAbsoluteAltitudeData`: delivered only where a reference is
/// known (see ``CMAltimeter/isAbsoluteAltitudeAvailable()``).
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMAbsoluteAltitudeData: CMLogItem, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its properties are `private(set)` and written only by its initialiser.
    /// Altitude (m) above mean sea level.
    open private(set) var altitude: Double
    /// Estimated accuracy of ``altitude`` (m, one standard deviation).
    open private(set) var accuracy: Double
    /// Estimated precision, the noise of successive values (m).
    open private(set) var precision: Double

    /// Creates a record (beyond Apple: for tests and tools). `timestamp` in seconds since boot.
    public init(timestamp: TimeInterval, altitude: Double, accuracy: Double, precision: Double) {
        self.altitude = altitude
        self.accuracy = accuracy
        self.precision = precision
        super.init(timestamp: timestamp)
    }
}

/// Handler of relative altitude: a record, or an error in ``CMErrorDomain``.
public typealias CMAltitudeHandler = (CMAltitudeData?, (any Error)?) -> Void
/// Handler of absolute altitude: a record, or an error in ``CMErrorDomain``.
public typealias CMAbsoluteAltitudeHandler = (CMAbsoluteAltitudeData?, (any Error)?) -> Void
