import MotionFusion

/// A simulated phone: a ``SensorSource`` that streams the samples of a ``MotionSimulator`` from a
/// background thread, in real time or as fast as possible on a virtual clock, and exposes its ground
/// truth.
///
/// Capabilities (``defaultCapabilities``): accelerometer 1…1000 Hz, ±16 g at 0.488 mg; gyro
/// 1…1000 Hz, ±2000 °/s (±34.9 rad/s) at 0.061 °/s; magnetometer 1…100 Hz, ±4912 µT at 0.15 µT.
///
/// ## Timing
/// Each sensor samples on the grid `startTime + k / rate`. In ``Clock/realTime`` mode the start time
/// is `CLOCK_MONOTONIC` when the device is created, the worker sleeps until each sample's instant
/// (absolute-deadline waits: no drift, no busy waiting) and the sample's timestamp is that instant,
/// so it is never later than the moment of delivery. If the sink blocks, the samples due meanwhile
/// are delivered late, in order, with their own timestamps; a backlog of more than one second is
/// dropped (like an overflowing hardware FIFO) and sampling resumes at the current time. In
/// ``Clock/virtual(startTime:)`` mode there is no sleeping: samples are generated back to back from
/// the start time, so for a given seed, demand and sink the stream is fully deterministic.
///
/// ## Threading
/// Every member may be called from any thread, including from inside the sink. Samples reach the sink
/// on the device's own thread (one per running device), one at a time, in timestamp order. When
/// ``apply(_:sink:)`` returns, the new demand and sink are in effect: no sink call that begins later
/// uses the previous ones. A non-empty demand returns at once (a call already in progress may still
/// be finishing); an empty demand waits for the call in progress to return, so afterwards the sink is
/// never called again. Because of that wait, do not call `apply(.none, …)` while holding a lock that
/// the sink takes (from any thread other than the sink's own), or the two wait for each other.
public final class SimulatedDevice: SensorSource {
    /// How the device's time advances.
    public enum Clock: Sendable, Hashable {
        /// Paced to `CLOCK_MONOTONIC`; timestamps are the monotonic time of each sample.
        case realTime
        /// As fast as possible, with timestamps starting at `startTime` seconds.
        case virtual(startTime: Double)
    }

    /// The sensors, rates and ranges of every simulated device.
    public static var defaultCapabilities: [SensorKind: SensorCapability] { SimulatedSensorSpec.all }

    /// `sim:<scenario>`, a name, the ``defaultCapabilities`` and details (scenario, seed, clock, noise
    /// levels). Constant for the life of the device.
    public let info: SourceInfo

    /// The options the device was built from.
    public var options: SimulationOptions { engine.model.options }

    /// The clock mode chosen at creation.
    public let clock: Clock

    /// Seconds since boot at which the trajectory starts (the creation time in real-time mode).
    public var startTime: Double { engine.model.startTime }

    let engine: SimulationEngine

    /// Creates a simulated device. Nothing runs until ``apply(_:sink:)`` demands sensors.
    ///
    /// - Parameters:
    ///   - options: scenario, seed and sensor models (``SimulationOptions/rates`` is ignored: the
    ///     demand sets the rates). Default: handheld, seed 1.
    ///   - clock: ``Clock/realTime`` (default) or ``Clock/virtual(startTime:)``.
    public convenience init(options: SimulationOptions = .init(), clock: Clock = .realTime) {
        self.init(options: options, clock: clock, sourceClock: MonotonicSourceClock.shared)
    }

    /// Creates a simulated device paced by `sourceClock` in ``Clock/realTime`` mode: a ``ManualClock``
    /// in tests, so the stream advances only when the test advances the clock.
    ///
    /// - Parameters:
    ///   - options: as for ``init(options:clock:)``.
    ///   - clock: ``Clock/realTime`` (default: paced by `sourceClock`, starting at its current time) or
    ///     ``Clock/virtual(startTime:)`` (not paced).
    ///   - sourceClock: the clock real-time mode reads and sleeps on.
    package init(options: SimulationOptions = .init(), clock: Clock = .realTime, sourceClock: any SourceClock) {
        self.clock = clock
        let start: Double
        switch clock {
        case .realTime: start = sourceClock.now()
        case .virtual(let s): start = s.isFinite ? s : 0
        }
        engine = SimulationEngine(options: options, startTime: start, realTime: clock == .realTime, clock: sourceClock)
        let clockText: String
        switch clock {
        case .realTime: clockText = "real time (CLOCK_MONOTONIC)"
        case .virtual(let s): clockText = "virtual, from \(s) s"
        }
        info = SourceInfo(
            identifier: "sim:\(options.scenario.rawValue)",
            name: "Simulated \(options.scenario.rawValue) device",
            sensors: SimulatedSensorSpec.all,
            details: [
                ("scenario", options.scenario.rawValue), ("seed", "\(options.seed)"), ("clock", clockText),
                ("gyro noise", "\(Self.rounded(options.gyroNoiseDensity * 180 / .pi)) °/s/√Hz"),
                ("accelerometer noise", "\(Self.rounded(options.accelNoiseDensity * 1e6)) µg/√Hz"),
                ("magnetometer noise", "\(Self.rounded(options.magNoise)) µT rms"),
            ]
        )
    }

    /// Creates a simulated device with realistic options for `scenario`.
    ///
    /// - Parameters:
    ///   - scenario: the motion.
    ///   - seed: the seed of every random choice. Default 1.
    ///   - clock: ``Clock/realTime`` (default) or ``Clock/virtual(startTime:)``.
    public convenience init(scenario: SimulationScenario, seed: UInt64 = 1, clock: Clock = .realTime) {
        self.init(options: SimulationOptions(scenario: scenario, seed: seed), clock: clock)
    }

    deinit {
        engine.apply([:], sink: nil)
    }

    private static func rounded(_ x: Double) -> Double { (x * 1e4).rounded() / 1e4 }

    /// The step frequency in Hz of a walking scenario (``MotionSimulator/stepFrequency``), `nil` for the
    /// others: the cadence a pedometer should report. Constant; thread-safe.
    public var stepFrequency: Double? { engine.model.stepFrequency }

    /// The ground truth at `t` seconds since boot. Pure and thread-safe.
    public func truth(at t: Double) -> SimulatedTruth {
        engine.model.truth(at: t)
    }

    /// Starts, re-rates or stops the stream.
    ///
    /// Each demanded rate is clamped to the sensor's capability (NaN, zero, negative or infinite
    /// requests give the maximum rate). A sensor whose rate is unchanged keeps its schedule; a new or
    /// re-rated one starts at its next grid point, so timestamps stay monotonic. An empty demand
    /// stops the worker thread and waits for it; when this returns, the sink is not called again.
    /// In real time, a stop from any thread but the sink's first delivers the samples already due
    /// (those held back by the latency below), so a stream stopped at instant T has every sample up
    /// to T.
    /// Calls from inside the sink take effect before the next sink call. In real time, a
    /// ``SensorDemand/maximumLatency`` above zero (at most 0.5 s is used) lets the worker sleep until
    /// the oldest waiting sample is that old and then deliver every sample due, in order.
    ///
    /// - Returns: the rate in Hz really running for each demanded sensor.
    /// - Throws: ``SourceError/Kind/io`` only if the system cannot create the worker thread (every
    ///   sensor is always available).
    @discardableResult
    public func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        var rates: [SensorKind: Double] = [:]
        for (kind, requested) in demand.rates {
            // The barometer is not one of the device's sensors: a demand for it is not granted.
            guard let capability = SimulatedSensorSpec.capability(kind) else { continue }
            rates[kind] = capability.clamp(rate: requested)
        }
        let latency = min(max(demand.maximumLatency.isFinite ? demand.maximumLatency : 0, 0), SimulationEngine.maximumBacklog / 2)
        guard engine.apply(rates, sink: rates.isEmpty ? nil : sink, latency: latency) else {
            throw SourceError(.io, "the simulator could not start its thread (pthread_create failed)")
        }
        return rates
    }
}
