/// Tuning of ``AttitudeFilter``. Every field states its unit and default.
///
/// The defaults are one parameter set for all motions, tuned on the whole of the public BROAD trials
/// (Laidig et al. 2021) with generalisation in mind; they need no change for typical phone or IMU data
/// sampled between 50 Hz and 1 kHz. Values only; safe to share between threads.
public struct AttitudeFilterParameters: Hashable, Sendable {
    // MARK: Accelerometer (inclination) correction

    /// Time constant `τ₀` of the low-pass filter applied to the specific force in the almost-inertial
    /// frame when the device is still or turns slowly, seconds; faster rotation shortens it (see
    /// ``inclinationRateScale``). Larger values reject linear acceleration better but follow gyro drift
    /// more slowly. Default 1.75 s.
    public var accelerometerTimeConstant: Double = 1.75

    /// Rotation rate `ω₀` above which rotation shortens the inclination time constant, degrees per
    /// second; 0 keeps it at ``accelerometerTimeConstant`` whatever the motion. Default 300 °/s.
    ///
    /// The attitude error a gyroscope accumulates grows with the rotation rate (scale-factor,
    /// misalignment and g-sensitivity errors; P. D. Groves, *Principles of GNSS, Inertial, and
    /// Multisensor Integrated Navigation Systems*, 2nd ed., 2013, §4.4 and ch. 14), modelled here as a
    /// drift rate `d ∝ √(1 + ω̄²/ω₀²)` with `ω̄²` the recent mean-square unbiased rotation rate. Linear
    /// acceleration is the derivative of a bounded velocity: above its cut-off the second-order
    /// low-pass passes it as an inclination error of about `x/(g τ²)` (`x` the displacement), while a
    /// drift `d` leaves an error of about `√2 τ d` (the filter's lag to a ramp). Minimising the sum of
    /// their squares gives `τ⁶ ∝ x²/d²`, so the time constant is set to
    /// `τ = τ₀ (1 + ω̄²/ω₀²)^(−1/6)`: `τ₀` at rest and in slow motion, half of it at 8 ω₀ (≈ 400 °/s
    /// with ω₀ = 50 °/s). The exponent follows from the filter's order; it is not tuned.
    ///
    /// The default shortens the filter only in fast rotation (to 0.8 τ₀ at 600 °/s, 0.6 τ₀ at 1 000 °/s):
    /// on the 14 BROAD trials causal 6D inclination 0.842° → 0.829° in-sample and 0.832° cross-validated
    /// (``accelerometerTimeConstant`` fixed, ω₀ chosen per fold among 0, 200, 300 and 400 °/s: 200 in 13
    /// folds; 300 is within 0.001° of it on BROAD and nearer Apple's gravity on a hand-held iPhone,
    /// 0.844° against 0.851° RMS, VQF 0.863°). A longer `τ₀` at slow rotation wins more on BROAD (2.5 s
    /// with ω₀ = 50 °/s: 0.823° in-sample, 0.832° cross-validated, slow translation 0.389° → 0.293°) but
    /// moved that iPhone's gravity to 0.98° from Apple's, and so did every `τ₀` above 2 s or ω₀ of
    /// 100 °/s: platforms that translate without turning (carts, robots, a phone on a slider) may want it.
    public var inclinationRateScale: Double = 300

    /// Time constant of the first-order average of the squared rotation rate `ω̄²` that sets the
    /// inclination time constant (see ``inclinationRateScale``), seconds. Default 10 s: the drift
    /// statistic of several filter time constants, long enough that the time constant does not follow
    /// the oscillation of the motion itself (which would modulate the filter in step with the linear
    /// acceleration it is meant to reject; at 1 s the causal 6D inclination on BROAD was 0.03° worse).
    public var inclinationRateTimeConstant: Double = 10

    // MARK: Magnetometer (heading) correction

    /// Time constant of the first-order heading correction from the magnetometer, seconds. Default 9.0 s.
    public var magnetometerTimeConstant: Double = 9.0

    /// Duration over which the first magnetometer samples are averaged to set the initial heading,
    /// seconds. Default 1.0 s.
    public var magnetometerInitialTime: Double = 1.0

    /// Relative deviation of the field norm from its reference above which the field counts as disturbed,
    /// dimensionless. Default 0.1 (10 %).
    public var magneticNormThreshold: Double = 0.1

    /// Deviation of the dip angle from its reference above which the field counts as disturbed, degrees.
    /// Default 10°.
    public var magneticDipThreshold: Double = 10

    /// Time the field must stay undisturbed before heading corrections resume, seconds. Default 0.5 s.
    public var magneticMinimumUndisturbedTime: Double = 0.5

    /// Time constant with which the reference norm and dip follow an undisturbed field, seconds.
    /// Default 20 s.
    public var magneticReferenceTimeConstant: Double = 20

    /// Time a new, self-consistent field must persist (while the device moves) before it replaces the
    /// reference, seconds. Default 20 s.
    public var magneticNewFieldTime: Double = 20

    /// Same as ``magneticNewFieldTime`` while no reference has been confirmed yet, seconds. Default 5 s.
    public var magneticNewFieldFirstTime: Double = 5

    /// Minimum rotation rate for a candidate field to count towards ``magneticNewFieldTime``, degrees per
    /// second. Default 20 °/s.
    public var magneticNewFieldMinimumRate: Double = 20

    /// Longest time heading corrections are suspended during a disturbance; after it, corrections resume
    /// with a gain reduced by ``magneticRejectionFactor``, seconds. Default 60 s.
    public var magneticMaximumRejectionTime: Double = 60

    /// Gain divisor for corrections in a disturbance that outlasted ``magneticMaximumRejectionTime``,
    /// dimensionless. Default 2.
    public var magneticRejectionFactor: Double = 2

    // MARK: Gyroscope bias estimation

    /// Initial standard deviation of the gyro bias, degrees per second. Default 0.5 °/s.
    public var biasInitialSigma: Double = 0.5

    /// Growth of the bias uncertainty: the standard deviation added per `biasForgettingTime`, °/s.
    /// Default 0.1 °/s.
    public var biasDriftSigma: Double = 0.1

    /// Time over which ``biasDriftSigma`` accumulates, seconds. Default 100 s.
    public var biasForgettingTime: Double = 100

    /// Noise density of the in-motion bias measurement derived from inclination corrections,
    /// °/s·√s. Default 0.5.
    ///
    /// The measurement's error is linear acceleration and model error passed through the inclination
    /// low-pass filter, correlated over its time constant rather than white, so a density fitted to
    /// short recordings overstates what minutes of motion tell: at 0.1 (the earlier default, best on the
    /// 14 BROAD trials by 0.01°) the estimate drifted by 3–7 mrad/s in simulated continuous hand-held
    /// motion, mostly about the weakly observable vertical. At 0.5, in simulated hand-held motion and
    /// walking, a constant bias stays within 1 mrad/s per axis after convergence when a calibrated
    /// magnetometer observes the vertical component, and without one the estimate holds that component
    /// at its prior rather than chasing the motion with it (`SteadyBiasTests`).
    public var biasMotionNoiseDensity: Double = 0.5

    /// Linear-acceleration level at which the in-motion bias measurement noise doubles, g. The noise
    /// variance is scaled by `1 + (d / scale)²`, where `d` is the deviation of the accelerometer norm from
    /// 1 g, held with a decay of ``accelerometerTimeConstant``: inclination corrections made during and
    /// just after strong linear accelerations say little about the bias. Default 0.3 g.
    public var biasMotionAccelerationScale: Double = 0.3

    /// Noise density added to the in-motion bias measurement per unit of rotation rate, √s (°/s·√s per
    /// °/s). Default 0.02 √s.
    ///
    /// A gyroscope's scale-factor and axis-misalignment errors (about 1 % for consumer MEMS parts) make
    /// the integrated rotation wrong in proportion to the rate, and that error reaches the inclination
    /// corrections exactly as a bias would, correlated with the motion over about a second. The
    /// measurement's density is `√(density² + (k·|ω|)²)`, so that vigorous motion (a phone shaken or
    /// swung at several rad/s) says little about the bias and the estimate does not chase it, while slow
    /// motion still observes it. P. D. Groves, *Principles of GNSS, Inertial, and Multisensor Integrated
    /// Navigation Systems*, 2nd ed., Artech House, 2013, §4.4 (gyro scale-factor and cross-coupling errors).
    public var biasMotionRateNoise: Double = 0.02

    /// Interval over which inclination corrections are averaged into one in-motion bias measurement,
    /// seconds. Default 0.02 s.
    public var biasMotionUpdateInterval: Double = 0.02

    /// Noise density of the at-rest bias measurement (low-pass filtered gyro), °/s·√s. Default 0.03.
    public var biasRestNoiseDensity: Double = 0.03

    /// Largest bias magnitude per axis the estimator may report, °/s: the largest zero-rate offset the
    /// gyroscope may have. Until the device has been at rest once, a steady reading within it on every axis
    /// passes for a bias at rest (see ``restGyroMagnitudeThreshold``). Default 10 °/s, the zero-rate level
    /// of an untrimmed consumer MEMS part (ST LSM6DS3 datasheet: ±10 °/s; Bosch BMI160: ±3 °/s); phones
    /// deliver raw gyroscopes with 4–6 °/s (iPhone 5, Nexus 5).
    public var biasClip: Double = 10

    /// Enables bias estimation from inclination corrections during motion. Default `true`.
    public var estimatesBiasInMotion: Bool = true

    /// Enables (in 9D) estimation of the bias about vertical from the magnetometer's heading corrections.
    /// Default `true`.
    public var estimatesBiasFromHeading: Bool = true

    /// Noise density of the bias measurement derived from heading corrections, °/s·√s. Default 0.3.
    public var biasHeadingNoiseDensity: Double = 0.3

    /// Enables bias estimation at rest. Default `true`.
    public var estimatesBiasAtRest: Bool = true

    // MARK: Rest detection

    /// Time constant of the low-pass filters used by rest detection, seconds. Default 0.5 s.
    public var restFilterTimeConstant: Double = 0.5

    /// Largest deviation of the gyro from its low-pass value at rest, °/s. Default 2 °/s.
    public var restGyroThreshold: Double = 2

    /// Largest low-pass gyro magnitude at rest, net of the bias estimate, °/s: once the device has been at
    /// rest (and so the bias measured), a steady rate further than this from the estimate is a slow
    /// rotation, not a bias. Before the first rest the bias is unknown and each axis may read up to
    /// ``biasClip``. The offline smoother applies it to the bias-corrected rate. Default 3 °/s.
    public var restGyroMagnitudeThreshold: Double = 3

    /// Largest deviation of the accelerometer from its low-pass value at rest, g. Default 0.05 g.
    public var restAccelerometerThreshold: Double = 0.05

    /// Time the thresholds must hold before the device counts as at rest, seconds. Default 1.5 s.
    public var restMinimumTime: Double = 1.5

    // MARK: Magnetometer calibration

    /// Enables online hard- and soft-iron calibration of the magnetometer. Default `true`.
    public var calibratesMagnetometer: Bool = true

    /// Shortest interval between samples offered to the online calibration, seconds. Default 0.02 s.
    public var magneticCalibrationInterval: Double = 0.02

    /// Calibration accuracy at which the calibrated field replaces the raw field for heading
    /// corrections. Default ``MagneticCalibrationAccuracy/medium``.
    ///
    /// Once a raw reading stronger than any Earth field has been seen (a phone's hard iron of 100–600 µT;
    /// ``AttitudeFilterState/rawFieldImplausible``), a gyro-aided estimate
    /// (``RotationHardIronEstimator``) graded ``MagneticCalibrationAccuracy/low`` is used as well: its
    /// offset then allows less than 5° of heading error, and the raw field none at all. A raw reading that
    /// strong never corrects the heading, whatever this grade.
    public var minimumAccuracyForCalibratedHeading: MagneticCalibrationAccuracy = .medium

    // MARK: Gyro-aided hard-iron calibration

    /// Enables the gyro-aided hard-iron estimate (``RotationHardIronEstimator``, after Troni & Whitcomb,
    /// RSS 2013, and Kok & Schön, IEEE Sensors J. 16(14), 2016) beside the ellipsoid fit: it needs only
    /// the rotations the device makes, not a covered sphere. Requires ``calibratesMagnetometer``.
    /// Default `true`.
    public var estimatesHardIronFromRotation: Bool = true

    /// Heading uncertainty, degrees, that the gyro-aided hard-iron estimate's offset covariance must allow
    /// (projected on the plane horizontal at the current attitude, over the horizontal field) before the
    /// estimate counts as ``MagneticCalibrationAccuracy/medium`` and so, with the default
    /// ``minimumAccuracyForCalibratedHeading``, corrects the field used for heading. Default 1°.
    public var hardIronHeadingUncertainty: Double = 1

    // MARK: Offline smoothing

    /// Time constant `τ` of the zero-phase gravity smoother of ``AttitudeSmoother``, seconds: its
    /// bandwidth is `1/τ` rad/s, linear acceleration faster than that is averaged out as the derivative
    /// of a bounded velocity and gravity drift slower than that is followed. 0 disables it (the smoother
    /// then averages its forward and backward passes). Unused by the causal filter. Default 0 here;
    /// ``AttitudeSmoother/defaultParameters`` sets 2 s.
    public var smootherZeroPhaseTimeConstant: Double = 0

    /// Standard deviation of the gravity smoother's zero-velocity pseudo-measurement at rest relative to
    /// that in motion, dimensionless; 1 treats rest like motion. At rest (detected with the rest
    /// thresholds above over a centred window) a device's velocity is zero but for vibration, about a
    /// hundredth of a typical hand-held speed, so rest pins the velocity and with it gravity. Unused by
    /// the causal filter. Default 0.01.
    public var smootherRestVelocityRatio: Double = 0.01

    /// Time constant `τ` of the heading smoother of ``AttitudeSmoother`` (9D), seconds: while the device
    /// turns at 1 rad/s, gyroscope and magnetometer weigh equally over this time; the heading's random
    /// walk grows with the angle turned (`|ω| Δt / τ²` relative to the magnetometer's noise density), so
    /// the gyroscope holds the heading longer in slow motion and entirely at rest. 0 keeps the forward
    /// pass's causal heading. Unused by the causal filter. Default 0 here;
    /// ``AttitudeSmoother/defaultParameters`` sets 30 s.
    public var smootherHeadingTimeConstant: Double = 0

    /// Noise variance of the heading smoother's magnetometer measurements at rest relative to that in
    /// motion, dimensionless; 1 treats rest like motion. A resting device's heading measurement has none
    /// of the motion-dependent errors (inclination under linear acceleration, sensor timing,
    /// orientation-dependent calibration residuals), so rests anchor the heading. Unused by the causal
    /// filter. Default 0.001.
    public var smootherHeadingRestVarianceRatio: Double = 0.001

    /// Heading error, degrees, that doubles the noise variance of a magnetometer sample in the heading
    /// smoother: a field whose norm and dip deviate from the recording's median field by `d` suggests a
    /// heading error of about `|d| / |m_h|` (`m_h` the horizontal field), and the sample's variance is
    /// multiplied by `1 + (|d| / |m_h| / σ_d)²`. 0 disables this weighting (samples beyond
    /// ``magneticNormThreshold`` or ``magneticDipThreshold`` are rejected in any case). Unused by the
    /// causal filter. Default 0.5°.
    public var smootherHeadingDisturbanceAngle: Double = 0.5

    // MARK: Time steps

    /// Time step assumed when none can be measured (first sample of a timestamped stream), seconds.
    /// Default 0.01 s.
    public var nominalTimeStep: Double = 0.01

    /// Longest time step integrated as such; larger steps (gaps) are clamped to it, seconds.
    /// Default 0.1 s.
    public var maximumTimeStep: Double = 0.1

    /// Creates the default parameters.
    public init() {}
}
