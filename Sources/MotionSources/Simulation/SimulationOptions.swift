import MotionFusion

/// Everything that defines a simulated device: its motion, its sensor imperfections and its
/// magnetic environment.
///
/// The defaults model a typical phone-class 6-axis MEMS IMU (Bosch BMI160 / ST LSM6DS3 datasheet
/// class) with an AK09916-class magnetometer; each property documents its unit, default and source.
/// A value type: copy it, change it, pass it to ``MotionSimulator`` or ``SimulatedDevice``.
///
/// Determinism: two simulators built from equal options produce bit-identical samples for the same
/// rates. Only ``seed`` feeds the random parts (trajectory details, noise, bias wander).
public struct SimulationOptions: Sendable, Hashable {
    /// The motion to perform. Default ``SimulationScenario/handheld``.
    public var scenario: SimulationScenario

    /// The seed of every random choice: trajectory details, white noise and bias wander.
    /// Same seed ⇒ bit-identical output. Default 1.
    ///
    /// Note: the default ``gyroBias`` is drawn from the seed given to ``init(scenario:seed:)``;
    /// changing `seed` afterwards does not redraw it.
    public var seed: UInt64

    /// Sampling rate in Hz of each sensor for ``MotionSimulator``; a sensor that is absent (or whose
    /// rate is not a positive finite number) produces no samples. Default 100 Hz for all three.
    /// ``SimulatedDevice`` ignores this and samples at the rates demanded through
    /// ``SimulatedDevice/apply(_:sink:)``.
    public var rates: [SensorKind: Double]

    // MARK: Gyroscope

    /// Constant part of the gyro bias, rad/s, device frame.
    ///
    /// Default: drawn from the seed, each axis normal with σ = 0.25 °/s (≈ 0.0044 rad/s): a
    /// factory-trimmed phone. (Untrimmed parts: BMI160 zero-rate offset ±3 °/s, LSM6DS3 ±10 °/s.)
    public var gyroBias: Vector3

    /// Standard deviation of the slowly wandering part of the gyro bias, rad/s per axis: a
    /// first-order Gauss–Markov process of correlation time ``gyroBiasCorrelationTime``, which
    /// covers bias instability and the drift of warm-up.
    ///
    /// Default 0.02 °/s (≈ 3.5e-4 rad/s): consumer MEMS gyros show an Allan-deviation floor of
    /// 10–30 °/h and a zero-rate temperature drift of ±0.05 °/s/K (BMI160 datasheet).
    public var gyroBiasInstability: Double

    /// Correlation time of the bias wander, seconds. Default 100 s.
    public var gyroBiasCorrelationTime: Double

    /// White rate noise density of the gyro, rad/s/√Hz (one-sided). The per-sample standard
    /// deviation is `density · √(rate / 2)`.
    ///
    /// Default 0.007 °/s/√Hz (≈ 1.22e-4 rad/s/√Hz), the BMI160 typical figure (LSM6DS3: 0.007 too):
    /// about 0.05 °/s rms per axis at 100 Hz.
    public var gyroNoiseDensity: Double

    /// Sensitivity error of the gyro, dimensionless, device frame: the reading is
    /// `(I + gyroSensitivityError) · ω + bias + noise`. The diagonal holds the scale-factor errors, the
    /// rest the cross-axis sensitivity (axis misalignment).
    ///
    /// Default zero (a perfectly trimmed part, as the tests of fusion maths assume). Consumer MEMS parts
    /// have up to ±1 % sensitivity tolerance and ±1 % cross-axis sensitivity (BMI160 datasheet).
    public var gyroSensitivityError: Matrix3

    // MARK: Accelerometer

    /// White noise density of the accelerometer, g/√Hz (one-sided). The per-sample standard
    /// deviation is `density · √(rate / 2)`.
    ///
    /// Default 180 µg/√Hz (1.8e-4 g/√Hz), BMI160 typical (LSM6DS3: 90 µg/√Hz in high-performance
    /// mode): about 1.3 mg rms per axis at 100 Hz.
    public var accelNoiseDensity: Double

    /// Constant accelerometer offset, g, device frame. Default zero (a calibrated phone; untrimmed
    /// parts have up to ±40 mg, BMI160 datasheet).
    public var accelBias: Vector3

    // MARK: Magnetometer

    /// White noise of the magnetometer, µT rms per axis, independent of the rate.
    /// Default 0.4 µT (AK09916: ≈0.4 µT; BMM150 regular preset: 0.6 µT in x/y).
    public var magNoise: Double

    /// The Earth's field in the world frame (x magnetic north, y west, z up), µT.
    /// Default 48 µT with a 60° dip (mid-northern latitudes): (24, 0, −41.57) µT.
    public var earthField: Vector3

    /// Hard-iron offset added to every magnetometer reading, µT, device frame: the field of the
    /// magnetised parts of the phone (speaker, camera, battery). Default (14, −9, 22) µT, typical
    /// of a phone (tens of µT).
    public var hardIron: Vector3

    /// Soft-iron distortion applied to the external field before the hard iron is added:
    /// `reading = softIron · field + hardIron + noise` (a MotionFusion ``Matrix3``, by rows). Default
    /// identity (none).
    public var softIron: Matrix3

    /// Extra fields present during time windows, for testing magnetic disturbance rejection.
    /// Default none.
    public var magneticDisturbances: [MagneticDisturbance]

    // MARK: Motion

    /// Extra linear accelerations during time windows, for testing fusion against strong user
    /// acceleration. They are part of the position trajectory, so truth stays consistent.
    /// Default none.
    public var accelerationBursts: [AccelerationBurst]

    // MARK: Converter

    /// Whether readings are clipped to the sensor range and rounded to its resolution, as a 16-bit
    /// converter does (see ``SimulatedDevice/defaultCapabilities``). Default `true`.
    /// Clipping happens in any case; this controls rounding only.
    public var quantizesOutput: Bool

    /// Realistic options for `scenario`, with a seeded gyro bias.
    ///
    /// - Parameters:
    ///   - scenario: the motion. Default ``SimulationScenario/handheld``.
    ///   - seed: the seed of every random choice. Default 1.
    public init(scenario: SimulationScenario = .handheld, seed: UInt64 = 1) {
        self.scenario = scenario
        self.seed = seed
        self.rates = [.accelerometer: 100, .gyro: 100, .magnetometer: 100]
        var rng = SplitMix64(seed: seed ^ 0x6A09_E667_F3BC_C908)
        let sigma = 0.25 * .pi / 180
        self.gyroBias = Vector3(rng.nextGaussian() * sigma, rng.nextGaussian() * sigma, rng.nextGaussian() * sigma)
        self.gyroBiasInstability = 0.02 * .pi / 180
        self.gyroBiasCorrelationTime = 100
        self.gyroNoiseDensity = 0.007 * .pi / 180
        self.gyroSensitivityError = .zero
        self.accelNoiseDensity = 180e-6
        self.accelBias = .zero
        self.magNoise = 0.4
        self.earthField = SimulationOptions.field(intensity: 48, dipDegrees: 60)
        self.hardIron = Vector3(14, -9, 22)
        self.softIron = .identity
        self.magneticDisturbances = []
        self.accelerationBursts = []
        self.quantizesOutput = true
    }

    /// Options with perfect sensors: no bias, no bias wander, no noise, no hard iron and no
    /// rounding, so readings equal the ground truth exactly (up to range clipping). Useful to test
    /// fusion maths against truth without statistics.
    public static func ideal(scenario: SimulationScenario = .handheld, seed: UInt64 = 1) -> SimulationOptions {
        var o = SimulationOptions(scenario: scenario, seed: seed)
        o.gyroBias = .zero
        o.gyroBiasInstability = 0
        o.gyroNoiseDensity = 0
        o.accelNoiseDensity = 0
        o.magNoise = 0
        o.hardIron = .zero
        o.quantizesOutput = false
        return o
    }

    /// A world-frame field (x magnetic north, y west, z up) of `intensity` µT whose inclination
    /// below the horizon is `dipDegrees` (positive in the northern hemisphere, pointing down).
    public static func field(intensity: Double, dipDegrees: Double) -> Vector3 {
        let dip = dipDegrees * .pi / 180
        return Vector3(intensity * _cosine(dip), 0, -intensity * _sine(dip))
    }
}

/// A field added to the magnetometer's surroundings during a time window, such as a steel desk or a
/// loudspeaker the phone passes by.
public struct MagneticDisturbance: Sendable, Hashable {
    /// The frame in which ``field`` is constant.
    public enum Frame: String, Sendable, Hashable {
        /// Fixed in the world (x north, y west, z up): a nearby object the device moves within.
        case world
        /// Fixed to the device, like a magnetic case clasp: it adds to the hard iron.
        case device
    }

    /// Start of the window, seconds after the simulation start time.
    public var start: Double
    /// Length of the window, seconds.
    public var duration: Double
    /// The added field at full strength, µT, in ``frame``.
    public var field: Vector3
    /// Where ``field`` is constant. Default ``Frame/world``.
    public var frame: Frame
    /// Seconds to fade in at the start and out at the end (raised cosine); 0 switches abruptly.
    /// Default 0.
    public var ramp: Double

    /// Creates a disturbance window. Times in seconds after the simulation start, field in µT.
    public init(start: Double, duration: Double, field: Vector3, frame: Frame = .world, ramp: Double = 0) {
        self.start = start
        self.duration = duration
        self.field = field
        self.frame = frame
        self.ramp = ramp
    }
}

/// A window of strong linear acceleration added to the scenario's position trajectory.
///
/// The acceleration follows a Hann (raised-cosine) envelope from 0 up to ``peak`` and back to 0 over
/// ``duration``, so it is smooth; the device keeps the velocity it gained, `peak · g · duration / 2`
/// in m/s, after the window. Ground truth includes it (position, velocity, user acceleration).
public struct AccelerationBurst: Sendable, Hashable {
    /// Start of the window, seconds after the simulation start time.
    public var start: Double
    /// Length of the window, seconds (> 0).
    public var duration: Double
    /// The true kinematic acceleration at the middle of the window, in g (1 g = 9.80665 m/s²), in the
    /// world frame (x north, y west, z up). With Core Motion's sign the accelerometer's user
    /// acceleration reads the opposite: `Rᵀ · (−peak)`.
    public var peak: Vector3

    /// Creates a burst. Times in seconds after the simulation start, `peak` in g, world frame.
    public init(start: Double, duration: Double, peak: Vector3) {
        self.start = start
        self.duration = duration
        self.peak = peak
    }
}
