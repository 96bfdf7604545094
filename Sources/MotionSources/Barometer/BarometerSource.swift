/// A pressure sensor read on demand: the barometer behind `CMAltimeter`.
///
/// Barometers are polled (phones and IIO pressure chips deliver a few to a few tens of readings per
/// second), so the protocol is a read: the caller decides the rate. ``PolledBarometerSource`` runs one as
/// a ``SensorSource`` (the way `CMAltimeter` and `CMSensorRecorder` read it). Pressure is in kPa, Core
/// Motion's unit, converted once here.
///
/// ## Threading
/// ``readPressure(at:)`` may be called from any thread, one call at a time.
public protocol BarometerSource: AnyObject, Sendable {
    /// A stable identifier: `sim:stairs`, `iio:bmp280`, …
    var identifier: String { get }
    /// A human-readable name.
    var name: String { get }
    /// `nil` when readings follow the real clock (`CLOCK_MONOTONIC`); otherwise the virtual start time
    /// (seconds) from which a reader may advance time as fast as it likes (simulation, tests).
    var virtualStartTime: Double? { get }
    /// The pressure (kPa) now, or at virtual time `timestamp` for a virtual source.
    /// - Throws: ``SourceError`` when the device cannot be read (gone, permission, not a number).
    func readPressure(at timestamp: Double) throws(SourceError) -> Double
    /// The sensor's temperature (°C) now, or at virtual time `timestamp` for a virtual source; `nil`
    /// when the barometer does not report one or it cannot be read now. Default: `nil`. Recorded
    /// pressure (`CMRecordedPressureData`) carries it.
    func readTemperature(at timestamp: Double) -> Double?
}

extension BarometerSource {
    /// No temperature: `nil` (the default for a barometer that reports pressure only).
    public func readTemperature(at timestamp: Double) -> Double? { nil }
}

/// The simulator's barometer as a ``BarometerSource``: a ``SimulatedBarometer`` read in real or
/// virtual time.
public final class SimulatedBarometerSource: BarometerSource {
    /// `sim:SCENARIO`.
    public let identifier: String
    /// "Simulated barometer (SCENARIO)".
    public let name: String
    /// See ``BarometerSource/virtualStartTime``.
    public let virtualStartTime: Double?
    private let barometer: Locked<SimulatedBarometer>

    /// A simulated barometer following `scenario`, seeded by `seed`; `virtualStartTime` `nil` for real
    /// time (the scenario starts now), or a virtual start time in seconds.
    public init(scenario: BarometerScenario, seed: UInt64 = 1, virtualStartTime: Double? = nil) {
        identifier = "sim:\(scenario.rawValue)"
        name = "Simulated barometer (\(scenario.rawValue))"
        self.virtualStartTime = virtualStartTime
        let start = virtualStartTime ?? MonotonicClock.now()
        barometer = Locked(SimulatedBarometer(scenario: scenario, seed: seed, startTime: start.isFinite ? start : 0))
    }

    /// The true altitude (m) above the starting floor at `timestamp` (for tests).
    public func altitude(at timestamp: Double) -> Double {
        barometer.withLock { $0.altitude(at: timestamp) }
    }

    /// The temperature the simulator reports with every reading: a constant 20 °C ambient
    /// (the simulator does not model temperature).
    public static let ambientTemperature = 20.0

    /// ``ambientTemperature`` (°C), at any time.
    public func readTemperature(at timestamp: Double) -> Double? { Self.ambientTemperature }

    /// A noisy reading (kPa); never throws.
    public func readPressure(at timestamp: Double) throws(SourceError) -> Double {
        barometer.withLock { $0.sample(at: timestamp) }
    }
}
