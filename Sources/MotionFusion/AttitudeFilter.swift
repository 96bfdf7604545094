/// OpenCoreMotion's attitude and heading estimator: gyroscope, accelerometer and (optionally)
/// magnetometer fused into an attitude, gravity, user acceleration, unbiased rotation rate and a
/// calibrated magnetic field.
///
/// ## Design
/// The estimator follows the structure proposed by D. Laidig and T. Seel, "VQF: Highly accurate IMU
/// orientation estimation with bias estimation and magnetic disturbance rejection", *Information Fusion*
/// 91, 2023, doi:10.1016/j.inffus.2022.10.014, written here from the paper's description:
/// - **Gyroscope strapdown integration** of the bias-corrected rate into an almost-inertial frame *I*
///   (quaternion exponential map; see e.g. Kok, Hol & Schön, "Using inertial sensors for position and
///   orientation estimation", *Found. Trends Signal Process.* 11, 2017).
/// - **Inclination correction.** The specific force is rotated into *I*, where linear accelerations
///   average out over time, and low-pass filtered there (second-order Butterworth, time constant
///   ``AttitudeFilterParameters/accelerometerTimeConstant``); the correction *I → E6* aligns the filtered
///   vector with vertical. This makes the correction robust to long, strong linear accelerations
///   (BROAD reaches 10–16 g) without the trade-off of a classic complementary filter (Mahony, Hamel &
///   Pflimlin, "Nonlinear complementary filters on the special orthogonal group", IEEE TAC 53(5), 2008;
///   Madgwick, Harrison & Vaidyanathan, "Estimation of IMU and MARG orientation using a gradient descent
///   algorithm", ICORR 2011).
/// - **Gyroscope bias** by a three-state Kalman filter. In motion the measurement is the rate of the
///   inclination corrections, modelled as the low-pass filtered bias error rotated into *E6* (the same
///   filter as the acceleration, so that lag matches); at rest the low-pass filtered gyro measures the
///   bias directly (rest detection: gyro and accelerometer deviations from their low-pass values below
///   thresholds for a minimum time).
/// - **Heading only from the magnetometer.** The field is rotated into *E6* and only its horizontal
///   direction drives a first-order heading correction about vertical (Valenti, Dryanovski & Xiao,
///   "Keeping a good attitude: a quaternion-based orientation filter for IMUs and MARGs", Sensors 15,
///   2015, also separate inclination from heading). Disturbances are detected from the field norm and
///   dip angle against a slowly adapting reference, rejected for a bounded time, and a new consistent
///   field is adopted after it persists during motion.
/// - **Online magnetometer calibration** (``MagneticCalibrator``): hard- and soft-iron ellipsoid fit, and a
///   gyro-aided hard-iron estimate (``RotationHardIronEstimator``) that needs only the rotations made.
///
/// ## Use
/// Call ``updateGyro(_:dt:)``, ``updateAccelerometer(_:dt:)`` and ``updateMagnetometer(_:dt:)`` as samples
/// arrive (each with its own measured time step), or ``update(gyro:accelerometer:magnetometer:dt:)`` once
/// per synchronised sample; then read ``estimate``. With `usesMagnetometer == false` (6D) magnetometer
/// samples are only calibrated, never fused.
///
/// ## Invalid input and time
/// - A sample with a NaN or infinite component is skipped: the state is untouched and
///   ``AttitudeFilterState/skippedSamples`` counts it.
/// - A time step that is not finite or not positive (a timestamp going backwards or repeating) skips the
///   sample the same way.
/// - A time step longer than ``AttitudeFilterParameters/maximumTimeStep`` (a gap) is clamped to it: the
///   gyroscope cannot tell what happened during the gap, so the filter integrates the last rate for at
///   most that long and relies on its corrections to recover.
///
/// Costs O(1) per sample with no heap allocation. A value type: not shared between threads while mutated.
public struct AttitudeFilter: Sendable {
    /// The tuning in use.
    public let parameters: AttitudeFilterParameters
    /// Whether magnetometer samples correct the heading (9D) or not (6D).
    public var usesMagnetometer: Bool
    /// The complete internal state; assign a saved copy to restore it.
    public var state = AttitudeFilterState()

    var gyroCoefficients: AttitudeFilterCoefficients
    var accelerometerCoefficients: AttitudeFilterCoefficients
    var magnetometerCoefficients: AttitudeFilterCoefficients

    /// Creates a filter.
    /// - Parameters:
    ///   - parameters: tuning; the defaults suit most devices.
    ///   - usesMagnetometer: `true` for 9D (heading from magnetic north), `false` for 6D. Default `true`.
    public init(parameters: AttitudeFilterParameters = AttitudeFilterParameters(), usesMagnetometer: Bool = true) {
        self.parameters = parameters
        self.usesMagnetometer = usesMagnetometer
        let c = AttitudeFilterCoefficients(parameters: parameters, dt: parameters.nominalTimeStep)
        gyroCoefficients = c
        accelerometerCoefficients = c
        magnetometerCoefficients = c
        resetBias()
    }

    /// Returns the filter to its initial state, keeping parameters and mode.
    public mutating func reset() {
        state = AttitudeFilterState()
        resetBias()
    }

    mutating func resetBias() {
        let s = parameters.biasInitialSigma * Double.pi / 180
        state.biasCovariance = Matrix3.diagonal(Vector3(s * s, s * s, s * s))
    }

    /// Clamps `dt` to the maximum step, or returns `nil` when it is invalid.
    @inline(__always)
    func validTimeStep(_ dt: Double) -> Double? {
        guard dt.isFinite, dt > 0 else { return nil }
        return min(dt, parameters.maximumTimeStep)
    }

    /// The coefficients for time step `dt`, derived afresh. Callers keep one cached copy per sensor and
    /// call this only when the step changes: checking the cached `dt` first, rather than handing
    /// `parameters` to a helper along with the cache, spares a copy of the parameters on every sample.
    @inline(never)
    func coefficients(dt: Double) -> AttitudeFilterCoefficients {
        AttitudeFilterCoefficients(parameters: parameters, dt: dt)
    }

    /// Processes one synchronised sample: gyro, then accelerometer, then the magnetometer when given.
    /// - Parameters:
    ///   - gyro: rotation rate, rad/s, device frame.
    ///   - accelerometer: acceleration, g, Core Motion sign (face up at rest: z ≈ −1).
    ///   - magnetometer: raw magnetic field, µT, or `nil`.
    ///   - dt: time since the previous sample, seconds.
    @inlinable
    public mutating func update(gyro: Vector3, accelerometer: Vector3, magnetometer: Vector3?, dt: Double) {
        updateGyro(gyro, dt: dt)
        updateAccelerometer(accelerometer, dt: dt)
        if let m = magnetometer { updateMagnetometer(m, dt: dt) }
    }

    /// Like ``update(gyro:accelerometer:magnetometer:dt:)`` with a timestamp (seconds, any epoch): the
    /// time step is the difference to the previous timestamp (``AttitudeFilterParameters/nominalTimeStep``
    /// for the first). A timestamp that does not increase skips the sample and returns `false`.
    @discardableResult
    public mutating func update(gyro: Vector3, accelerometer: Vector3, magnetometer: Vector3?, timestamp: Double) -> Bool {
        guard timestamp.isFinite else {
            state.skippedSamples += 1
            return false
        }
        let dt: Double
        if let last = state.lastTimestamp {
            guard timestamp > last else {
                state.skippedSamples += 1
                return false
            }
            dt = timestamp - last
        } else {
            dt = parameters.nominalTimeStep
        }
        state.lastTimestamp = timestamp
        update(gyro: gyro, accelerometer: accelerometer, magnetometer: magnetometer, dt: dt)
        return true
    }
}
