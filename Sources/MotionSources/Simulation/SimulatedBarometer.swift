import MotionFusion

/// Vertical motions of the simulated barometer.
public enum BarometerScenario: String, Sendable, CaseIterable {
    /// Standing on one floor: constant altitude; only noise and drift.
    case still
    /// Stairs, repeatedly: 10 s standing, 3 floors (3 m each) up at 0.25 m/s vertical with a 3 s
    /// landing between floors, 10 s standing, the same 3 floors down, 42 s each way: one cycle every 104 s.
    case stairs
    /// A lift, repeatedly: 5 s waiting, 10 floors (30 m) up at 1.5 m/s, reached with 0.5 m/s²
    /// acceleration and braking, 20 s at the top, the same ride down, 20 s at the bottom.
    case lift
}

/// A barometer in the simulator: pressure (kPa) at the altitude of a ``BarometerScenario``, with
/// realistic noise and drift, deterministic for a seed.
///
/// - Pressure from altitude by the International Standard Atmosphere (ISO 2533:1975) troposphere:
///   `p = p₀ (1 − 2.25577·10⁻⁵ h)^5.25588`, `p₀` seeded in 100.3–102.3 kPa (weather).
/// - Noise: white, 2 Pa rms (a phone barometer such as the BMP280 or LPS22HB in its normal mode; about
///   17 cm of altitude).
/// - Drift: the weather, bounded. A synoptic swing, a sine of seeded period 3–6 days whose steepest
///   tendency is 0.1 kPa per 3 hours (1 hPa/3 h: "rising/falling slowly", 0.1–1.5 hPa in 3 hours, in
///   the UK Met Office's pressure-tendency terms of its shipping forecast), so its amplitude is 0.38–0.76 kPa
///   (a swing of 7.6–15 hPa, as depressions and anticyclones passing by); it starts at the seeded
///   tendency in ±0.1 kPa per 3 hours and keeps the sea-level pressure within 1.6 kPa of its start
///   for ever. Plus a slow oscillation of 3 Pa amplitude and a seeded period of 10–30 minutes.
///
/// A value type, one per stream; ``altitude(at:)`` and ``pressureWithoutNoise(at:)`` are pure.
public struct SimulatedBarometer: Sendable {
    /// The vertical motion.
    public let scenario: BarometerScenario
    /// Sea-level-equivalent pressure at the start (kPa).
    public let referencePressure: Double
    /// Seconds since boot at which the scenario starts.
    public let startTime: Double
    /// Noise (kPa rms).
    public let noise: Double
    /// The synoptic swing: angular frequency (rad/s), amplitude (kPa), and the cosine and sine of its
    /// phase at the start (the cosine sets the initial tendency).
    let weatherOmega: Double
    let weatherAmplitude: Double
    let weatherCosine: Double
    let weatherSine: Double
    let oscillationOmega: Double
    let oscillationPhase: Double
    var rng: SplitMix64

    /// A barometer following `scenario` from `startTime` (seconds since boot), seeded by `seed`.
    public init(scenario: BarometerScenario, seed: UInt64 = 1, startTime: Double = 0, noise: Double = 0.002) {
        self.scenario = scenario
        self.startTime = startTime
        self.noise = noise.isFinite ? max(noise, 0) : 0
        var r = SplitMix64(seed: seed ^ 0x6A09_E667_F3BC_C909)
        referencePressure = r.uniform(100.3, 102.3)
        // The initial tendency is drawn from `r` as before, so the noise that follows is unchanged for a
        // seed; the swing's period and direction come from a generator of their own.
        let tendency = r.uniform(-0.1, 0.1) / (3 * 3600)
        var w = SplitMix64(seed: seed ^ 0xBB67_AE85_84CA_A73B)
        weatherOmega = 2 * Double.pi / (w.uniform(3, 6) * 86_400)
        weatherAmplitude = Self.steepestTendency / weatherOmega
        weatherCosine = max(-1, min(1, tendency / Self.steepestTendency))
        weatherSine = (w.next() & 1 == 0 ? 1 : -1) * (1 - weatherCosine * weatherCosine).squareRoot()
        oscillationOmega = 2 * Double.pi / r.uniform(600, 1800)
        oscillationPhase = r.uniform(0, 2 * Double.pi)
        rng = r
    }

    /// The steepest tendency of the simulated weather, kPa/s: 0.1 kPa (1 hPa) in 3 hours.
    public static let steepestTendency = 0.1 / (3 * 3600)

    /// The change of sea-level pressure (kPa) `tau` seconds after the start from the weather alone:
    /// the synoptic swing plus the 3 Pa oscillation, zero at `tau = 0`, within ±1.6 kPa at any time.
    public func weather(after tau: Double) -> Double {
        let phase = weatherOmega * tau
        let swing = weatherAmplitude * (_sine(phase) * weatherCosine + _cosine(phase) * weatherSine - weatherSine)
        return swing + 0.003 * (_sine(oscillationOmega * tau + oscillationPhase) - _sine(oscillationPhase))
    }

    /// ISA pressure (kPa) at altitude `h` (m) for sea-level pressure `p0` (kPa).
    public static func pressure(altitude h: Double, seaLevel p0: Double) -> Double {
        p0 * _power(max(1 - 2.25577e-5 * h, 1e-6), 5.25588)
    }

    /// ISA altitude (m) of pressure `p` (kPa) for sea-level pressure `p0` (kPa).
    public static func altitude(pressure p: Double, seaLevel p0: Double) -> Double {
        (1 - _power(p / p0, 1 / 5.25588)) / 2.25577e-5
    }

    /// The true altitude (m) above the starting floor at `t` seconds since boot.
    public func altitude(at t: Double) -> Double {
        let tau = max(t - startTime, 0)
        switch scenario {
        case .still:
            return 0
        case .stairs:
            let floor = 3.0, speed = 0.25, landing = 3.0
            let climb = floor / speed
            let flights = 3.0
            let leg = flights * climb + (flights - 1) * landing // 42 s
            let cycle = 2 * (10 + leg)
            var u = tau.truncatingRemainder(dividingBy: cycle)
            func profile(_ s: Double) -> Double {
                // Height climbed s seconds into the 3-floor leg.
                let period = climb + landing
                let k = (s / period).rounded(.down)
                let r = s - k * period
                return min(k * floor + min(r, climb) * speed, flights * floor)
            }
            if u < 10 { return 0 }
            u -= 10
            if u < leg { return profile(u) }
            u -= leg
            if u < 10 { return flights * floor }
            u -= 10
            return flights * floor - profile(u)
        case .lift:
            let height = 30.0, vmax = 1.5, accel = 0.5
            let ta = vmax / accel // 3 s
            let da = 0.5 * accel * ta * ta // 2.25 m
            let cruise = (height - 2 * da) / vmax
            let ride = 2 * ta + cruise
            func profile(_ s: Double) -> Double {
                if s <= 0 { return 0 }
                if s < ta { return 0.5 * accel * s * s }
                if s < ta + cruise { return da + vmax * (s - ta) }
                if s < ride { let r = ride - s; return height - 0.5 * accel * r * r }
                return height
            }
            let cycle = 5 + ride + 20 + ride + 20
            var u = tau.truncatingRemainder(dividingBy: cycle)
            if u < 5 { return 0 }
            u -= 5
            if u < ride { return profile(u) }
            u -= ride
            if u < 20 { return height }
            u -= 20
            if u < ride { return height - profile(u) }
            return 0
        }
    }

    /// The pressure (kPa) at `t` without sensor noise: altitude plus the weather (``weather(after:)``).
    public func pressureWithoutNoise(at t: Double) -> Double {
        Self.pressure(altitude: altitude(at: t), seaLevel: referencePressure + weather(after: t - startTime))
    }

    /// One reading (kPa) at `t` seconds since boot: ``pressureWithoutNoise(at:)`` plus white noise.
    public mutating func sample(at t: Double) -> Double {
        pressureWithoutNoise(at: t) + noise * rng.nextGaussian()
    }
}
