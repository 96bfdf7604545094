import Foundation

/// A rotation rate sample, as Core Motion's `CMRotationRateData` (the gyroscope samples Apple records
/// on some devices). OpenCoreMotion delivers it as ``CMRecordedRotationRateData`` from
/// ``CMSensorRecorder/rotationRateData(from:to:)``; ``CMGyroData`` carries the live gyroscope.
open class CMRotationRateData: CMLogItem {
    // Not `Sendable` yet thread-safe: see CMLogItem.
    private let storedRotationRate: CMRotationRate

    /// The rotation rate in rad/s, device frame.
    open var rotationRate: CMRotationRate { storedRotationRate }

    /// A zero sample at timestamp 0, as Apple's `init()`.
    public override init() {
        storedRotationRate = CMRotationRate()
        super.init()
    }

    /// Creates a sample (beyond Apple).
    public init(rotationRate: CMRotationRate, timestamp: TimeInterval) {
        storedRotationRate = rotationRate
        super.init(timestamp: timestamp)
    }

    /// Decodes a sample written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        let r = coder.decodeVector(forKey: "rotationRate")
        storedRotationRate = CMRotationRate(x: r.x, y: r.y, z: r.z)
        super.init(coder: coder)
    }

    /// Writes the sample through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        let r = rotationRate
        coder.encodeVector(r.x, r.y, r.z, forKey: "rotationRate")
    }
}

/// A recorded rotation rate sample, as Core Motion's `CMRecordedRotationRateData`: a
/// ``CMRotationRateData`` with the wall-clock time it was taken. Apple delivers it through SensorKit;
/// here ``CMSensorRecorder/rotationRateData(from:to:)`` returns it, after
/// ``CMSensorRecorder/recordRotationRate(forDuration:)``.
open class CMRecordedRotationRateData: CMRotationRateData {
    // Not `Sendable` yet thread-safe: see CMLogItem.
    private let storedStartDate: Date

    /// The wall-clock time at which the sample was taken.
    open var startDate: Date { storedStartDate }

    /// A zero sample at the reference date (2001-01-01 UTC), as Apple's `init()`.
    public override init() {
        storedStartDate = zeroDate
        super.init()
    }

    /// Creates a sample (beyond Apple).
    public init(startDate: Date, rotationRate: CMRotationRate, timestamp: TimeInterval) {
        storedStartDate = startDate
        super.init(rotationRate: rotationRate, timestamp: timestamp)
    }

    /// Decodes a sample written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedStartDate = coder.decodeDate(forKey: "startDate")
        super.init(coder: coder)
    }

    /// Writes the sample through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encodeDate(startDate, forKey: "startDate")
    }
}

/// An air pressure and temperature sample, as Core Motion's `CMAmbientPressureData`. OpenCoreMotion
/// delivers it as ``CMRecordedPressureData`` from ``CMSensorRecorder/pressureData(from:to:)``;
/// ``CMAltimeter`` delivers live pressure as ``CMAltitudeData``.
open class CMAmbientPressureData: CMLogItem {
    // Not `Sendable` yet thread-safe: see CMLogItem.
    private let storedPressure: Measurement<UnitPressure>
    private let storedTemperature: Measurement<UnitTemperature>

    /// The air pressure.
    open var pressure: Measurement<UnitPressure> { storedPressure }
    /// The sensor's temperature. In recorded samples, NaN °C when the barometer does not report one.
    open var temperature: Measurement<UnitTemperature> { storedTemperature }

    /// 0 kPa and 0 °C at timestamp 0, as Apple's `init()`.
    public override init() {
        storedPressure = Measurement(value: 0, unit: .kilopascals)
        storedTemperature = Measurement(value: 0, unit: .celsius)
        super.init()
    }

    /// Creates a sample (beyond Apple).
    public init(pressure: Measurement<UnitPressure>, temperature: Measurement<UnitTemperature>, timestamp: TimeInterval) {
        storedPressure = pressure
        storedTemperature = temperature
        super.init(timestamp: timestamp)
    }

    /// Decodes a sample written by ``encode(with:)`` (pressure in kPa, temperature in °C).
    public required init?(coder: NSCoder) {
        storedPressure = Measurement(value: coder.decodeDouble(forKey: "pressure.kPa"), unit: .kilopascals)
        storedTemperature = Measurement(value: coder.decodeDouble(forKey: "temperature.celsius"), unit: .celsius)
        super.init(coder: coder)
    }

    /// Writes the sample through its accessors (pressure in kPa, temperature in °C).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(pressure.converted(to: .kilopascals).value, forKey: "pressure.kPa")
        coder.encode(temperature.converted(to: .celsius).value, forKey: "temperature.celsius")
    }
}

/// A recorded pressure sample, as Core Motion's `CMRecordedPressureData`: a ``CMAmbientPressureData``
/// with its batch identifier and wall-clock time. Apple delivers it through SensorKit; here
/// ``CMSensorRecorder/pressureData(from:to:)`` returns it, after
/// ``CMSensorRecorder/recordPressure(forDuration:)`` (pressure in kPa, temperature in °C or NaN °C
/// when the barometer reports none).
open class CMRecordedPressureData: CMAmbientPressureData {
    // Not `Sendable` yet thread-safe: see CMLogItem.
    private let storedIdentifier: UInt64
    private let storedStartDate: Date

    /// The batch the sample was recorded in.
    open var identifier: UInt64 { storedIdentifier }
    /// The wall-clock time at which the sample was taken.
    open var startDate: Date { storedStartDate }

    /// An empty sample with identifier 0 at the reference date (2001-01-01 UTC), as Apple's `init()`.
    public override init() {
        storedIdentifier = 0
        storedStartDate = zeroDate
        super.init()
    }

    /// Creates a sample (beyond Apple).
    public init(identifier: UInt64, startDate: Date, pressure: Measurement<UnitPressure>,
                temperature: Measurement<UnitTemperature>, timestamp: TimeInterval) {
        storedIdentifier = identifier
        storedStartDate = startDate
        super.init(pressure: pressure, temperature: temperature, timestamp: timestamp)
    }

    /// Decodes a sample written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedIdentifier = UInt64(bitPattern: coder.decodeInt64(forKey: "identifier"))
        storedStartDate = coder.decodeDate(forKey: "startDate")
        super.init(coder: coder)
    }

    /// Writes the sample through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(Int64(bitPattern: identifier), forKey: "identifier")
        coder.encodeDate(startDate, forKey: "startDate")
    }
}
