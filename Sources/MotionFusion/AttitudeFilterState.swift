/// The complete internal state of an ``AttitudeFilter``: copy it to save, assign it back to restore.
///
/// A restored filter continues bit-for-bit like the uninterrupted one. The state is a plain value with
/// no references; persist it field by field if needed. Frames: *device* (the sensor axes), *I* (an
/// almost-inertial frame in which the gyroscope is integrated), *E6* (z up, heading arbitrary, fixed
/// at start) and *N* (magnetic north–west–up, x toward magnetic north).
public struct AttitudeFilterState: Sendable {
    /// Strapdown-integrated orientation, device → I.
    public var gyroQuaternion: Quaternion = .identity
    /// Inclination correction, I → E6 (its rotation about z is always zero).
    public var inclinationQuaternion: Quaternion = .identity
    /// Heading offset E6 → N about z, radians.
    public var headingOffset: Double = 0
    /// Heading offset at the first magnetometer sample, radians: the origin of the arbitrary corrected frame.
    public var initialHeadingOffset: Double = 0

    /// `true` once the first valid accelerometer sample set the inclination.
    public var accelerometerInitialized = false
    /// Time covered by the initial averaging of the specific force, seconds.
    public var accelerationInitialTime: Double = 0
    /// Number of samples in the initial averaging.
    public var accelerationInitialCount: Double = 0

    // MARK: Inclination low-pass with a rate-dependent time constant

    /// Low-pass filtered specific force in the I frame, g.
    public var accelerationLowPass = InclinationLowPass(steadyAt: .zero)
    /// First-order average of the squared unbiased rotation rate, (rad/s)².
    public var meanSquareRate: Double = 0
    /// The inclination low-pass filter's current time constant, seconds (0 until the first
    /// accelerometer sample).
    public var inclinationTimeConstant: Double = 0

    /// Gyroscope bias estimate, rad/s, device frame.
    public var bias: Vector3 = .zero
    /// Covariance of the bias estimate, (rad/s)².
    public var biasCovariance: Matrix3 = .zero
    /// Held deviation of the accelerometer norm from 1 g (decays with the inclination time constant), g.
    public var accelerationDisturbance: Double = 0
    /// Time since the bias process noise was last added to the covariance, seconds.
    public var biasProcessTime: Double = 0
    /// Whether the heading-loop model filters have been seeded.
    public var headingModelInitialized = false
    /// First-order low-pass of the third row of device → E6 (heading-loop model), dimensionless.
    public var headingRowLowPass: Vector3 = .zero
    /// First-order low-pass of the vertical component of the rotated bias, rad/s.
    public var headingBiasLowPass: Double = 0
    /// Sum of heading corrections since the last vertical bias update, radians.
    public var headingCorrectionSum: Double = 0
    /// Time covered by ``headingCorrectionSum``, seconds.
    public var headingCorrectionTime: Double = 0
    /// Sums of the bias-model inputs (rows of device → E6 and the rotated bias) over the current
    /// averaging interval, and their count.
    public var modelRow0Sum: Vector3 = .zero
    /// See ``modelRow0Sum``.
    public var modelRow1Sum: Vector3 = .zero
    /// See ``modelRow0Sum``.
    public var modelRotatedBiasSum: Vector3 = .zero
    /// See ``modelRow0Sum``.
    public var modelCount: Double = 0
    /// Time integral of the squared gyro rate since the last vertical bias update from heading, (rad/s)²·s.
    public var headingRateSquaredSum: Double = 0
    /// Sum of the squared gyro rate over the current in-motion bias interval, (rad/s)².
    public var modelRateSquaredSum: Double = 0
    /// Sum of inclination corrections (rotation vectors, rad) since the last in-motion bias update.
    public var biasCorrectionSum: Vector3 = .zero
    /// Time covered by ``biasCorrectionSum``, seconds.
    public var biasCorrectionTime: Double = 0
    /// Low-pass filtered first row of the device → E6 rotation matrix (measurement model of in-motion
    /// bias estimation; only the two horizontal rows are observable).
    public var rotationRow0LowPass = LowPassVector3(steadyAt: Vector3(1, 0, 0), LowPassCoefficients(timeConstant: 0, dt: 1))
    /// Low-pass filtered second row of the device → E6 rotation matrix.
    public var rotationRow1LowPass = LowPassVector3(steadyAt: Vector3(0, 1, 0), LowPassCoefficients(timeConstant: 0, dt: 1))
    /// Low-pass filtered bias rotated into E6 (horizontal components; z unused), rad/s.
    public var rotatedBiasLowPass = LowPassVector3(steadyAt: .zero, LowPassCoefficients(timeConstant: 0, dt: 1))

    /// Low-pass filtered (first order) gyro for rest detection, rad/s.
    public var restGyroLowPass: Vector3 = .zero
    /// Low-pass filtered (first order) specific force for rest detection, g.
    public var restAccelerationLowPass: Vector3 = .zero
    /// `true` once the rest-detection filters have been seeded.
    public var restGyroInitialized = false
    /// `true` once the rest-detection filters have been seeded.
    public var restAccelerationInitialized = false
    /// Whether the last gyro sample met the rest thresholds.
    public var gyroQuiet = false
    /// Time the rest thresholds have held, seconds.
    public var restTime: Double = 0
    /// Whether the device is at rest.
    public var isAtRest = false
    /// Whether the bias has been measured at rest at least once: an update at rest left the estimate
    /// within half of ``AttitudeFilterParameters/restGyroMagnitudeThreshold`` of the rest reading (the
    /// rest detector then bounds the rate at rest around the estimate rather than by the largest possible
    /// bias).
    public var biasObservedAtRest = false

    /// Last finite gyro sample, rad/s (raw, biased).
    public var lastGyro: Vector3 = .zero
    /// Last finite accelerometer sample, g, Core Motion sign (face up at rest: z ≈ −1).
    public var lastAcceleration: Vector3 = .zero
    /// Last finite magnetometer sample, µT, raw.
    public var lastMagneticField: Vector3 = .zero
    /// Whether any magnetometer sample has been received.
    public var hasMagneticField = false
    /// Whether a raw magnetometer reading stronger than the Earth's field anywhere
    /// (``AttitudeFilter/strongestEarthField`` plus ``AttitudeFilterParameters/magneticNormThreshold``) has
    /// been seen: a hard iron, or a magnet near the sensor. From then on a gyro-aided hard-iron estimate
    /// graded ``MagneticCalibrationAccuracy/low`` may steer the heading (see
    /// ``AttitudeFilterParameters/minimumAccuracyForCalibratedHeading``).
    public var rawFieldImplausible = false

    /// `true` once the heading has been set from the magnetometer.
    public var magnetometerInitialized = false
    /// Time spent in the initial heading averaging, seconds.
    public var magnetometerInitialTime: Double = 0
    /// Number of samples in the initial heading averaging.
    public var magnetometerInitialCount: Double = 0
    /// Reference field norm, µT.
    public var magneticReferenceNorm: Double = 0
    /// Reference dip angle, radians (positive: field points down... measured as asin of the up component, negated).
    public var magneticReferenceDip: Double = 0
    /// Whether the reference has been confirmed by an undisturbed period.
    public var magneticReferenceConfirmed = false
    /// Whether the field is currently considered disturbed.
    public var magneticDisturbance = false
    /// Time the field has been undisturbed, seconds.
    public var magneticUndisturbedTime: Double = 0
    /// Time the current disturbance has lasted, seconds.
    public var magneticRejectionTime: Double = 0
    /// Candidate new reference norm, µT.
    public var magneticCandidateNorm: Double = 0
    /// Candidate new reference dip, radians.
    public var magneticCandidateDip: Double = 0
    /// Time the candidate has been consistent while moving, seconds.
    public var magneticCandidateTime: Double = 0

    /// Whether heading corrections currently use the calibrated (rather than raw) field. While no
    /// calibration is usable and the raw field is stronger than any Earth field the heading coasts on the
    /// gyro and this keeps the model last used, which the next usable calibration is compared with.
    public var usesCalibratedField = false
    /// Time since a sample was last offered to the calibration, seconds.
    public var calibrationTime: Double = .infinity
    /// Online hard/soft-iron calibration.
    public var calibrator = MagneticCalibrator()
    /// Whether the heading has used the gyro-aided hard-iron estimate (from then on, until that estimate
    /// restarts, the disturbance reference is that estimate's own field).
    public var hasUsedRotationEstimate = false
    /// ``RotationHardIronEstimator/restarts`` when the heading first used that estimate.
    public var rotationEstimateRestartsAtFirstUse = 0
    /// Hard-iron offset of the field model the heading used at the previous sample, µT (meaningful while
    /// ``usesCalibratedField``).
    public var headingModelOffset: Vector3 = .zero
    /// Soft-iron gains of the field model the heading used at the previous sample, dimensionless.
    public var headingModelGains: Vector3 = Vector3(1, 1, 1)
    /// The part of the gap between the heading and the field's direction that changes of the field model
    /// (a calibration switched in, changed or dropped) opened and the heading loop has not yet closed,
    /// radians. The loop closes it at its normal rate; the vertical bias estimate leaves that part out.
    public var headingModelShift: Double = 0

    /// Whether the calibrator's prior is a magnetometer calibration learned in an earlier run
    /// (``AttitudeFilter/seed(from:)``) rather than one applied to the readings beforehand.
    public var seededMagneticPrior = false
    /// The field strength of that learned calibration, µT (0: not known).
    public var seededMagneticFieldStrength: Double = 0

    /// Timestamp of the last sample given to a timestamped update, seconds (`nil` before the first).
    public var lastTimestamp: Double? = nil
    /// Number of samples skipped as invalid (non-finite values, non-positive or non-finite time steps).
    public var skippedSamples = 0

    /// The initial state.
    public init() {}
}
