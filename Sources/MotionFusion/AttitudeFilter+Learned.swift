/// What an ``AttitudeFilter`` has learned online about its sensors and is worth keeping for the next run
/// of the same device: the gyroscope bias with its uncertainty, and the magnetometer calibration with its
/// accuracy. Export it with ``AttitudeFilter/learnedCalibration`` and start a new filter from it with
/// ``AttitudeFilter/seed(from:)``, so that a restart starts calibrated (as Core Motion and Android keep
/// their calibration across launches).
///
/// Seeded values are prior knowledge, not facts: the bias enters the bias Kalman filter with the
/// uncertainty it had (never less than one ``AttitudeFilterParameters/biasDriftSigma``, since time has
/// passed), so a device whose bias changed between runs converges to the new one; the magnetometer
/// calibration is graded at most ``MagneticCalibrationAccuracy/medium`` and gives way to the online
/// estimates as soon as one of them is as good.
///
/// A plain value; no allocation.
public struct LearnedCalibration: Sendable, Hashable {
    /// Gyroscope bias estimate, rad/s, device frame.
    public var gyroBias: Vector3
    /// Variance of ``gyroBias`` per axis (the diagonal of the bias covariance), (rad/s)².
    public var gyroBiasVariance: Vector3
    /// Hard-iron offset of the magnetometer calibration, µT (subtracted from the raw field). Meaningful
    /// when ``magneticAccuracy`` is not ``MagneticCalibrationAccuracy/uncalibrated``.
    public var magneticOffset: Vector3
    /// Diagonal soft-iron gains applied after removing the offset, dimensionless (1, 1, 1: none).
    public var magneticGains: Vector3
    /// The field strength the calibration maps the field to, µT (0 when not known, e.g. a hard-iron-only
    /// estimate).
    public var magneticFieldStrength: Double
    /// Accuracy of the magnetometer calibration; ``MagneticCalibrationAccuracy/uncalibrated``: none learned.
    public var magneticAccuracy: MagneticCalibrationAccuracy

    /// Creates a learned calibration.
    /// - Parameters:
    ///   - gyroBias: rad/s, device frame.
    ///   - gyroBiasVariance: (rad/s)² per axis.
    ///   - magneticOffset: µT. Default zero.
    ///   - magneticGains: dimensionless. Default 1, 1, 1.
    ///   - magneticFieldStrength: µT. Default 0 (unknown).
    ///   - magneticAccuracy: default ``MagneticCalibrationAccuracy/uncalibrated`` (no magnetometer calibration).
    public init(gyroBias: Vector3, gyroBiasVariance: Vector3, magneticOffset: Vector3 = .zero,
                magneticGains: Vector3 = Vector3(1, 1, 1), magneticFieldStrength: Double = 0,
                magneticAccuracy: MagneticCalibrationAccuracy = .uncalibrated) {
        self.gyroBias = gyroBias
        self.gyroBiasVariance = gyroBiasVariance
        self.magneticOffset = magneticOffset
        self.magneticGains = magneticGains
        self.magneticFieldStrength = magneticFieldStrength
        self.magneticAccuracy = magneticAccuracy
    }

    /// Why the values cannot be used (a non-finite number, a negative variance, a gain that is not
    /// positive, a negative field strength), or `nil` when they can.
    public var problem: String? {
        guard gyroBias.isFinite else { return "gyroBias is not finite" }
        guard gyroBiasVariance.isFinite, gyroBiasVariance.x >= 0, gyroBiasVariance.y >= 0, gyroBiasVariance.z >= 0 else {
            return "gyroBiasVariance must be finite and not negative"
        }
        guard magneticOffset.isFinite else { return "magnetometerOffset is not finite" }
        guard magneticGains.isFinite, magneticGains.x > 0, magneticGains.y > 0, magneticGains.z > 0 else {
            return "magnetometerGains must be finite and positive"
        }
        guard magneticFieldStrength.isFinite, magneticFieldStrength >= 0 else {
            return "magneticFieldStrength must be finite and not negative"
        }
        return nil
    }
}

extension AttitudeFilter {
    /// What the filter has learned so far (see ``LearnedCalibration``): the current bias estimate and its
    /// variance, and the better of the online magnetometer calibration (ellipsoid fit or gyro-aided
    /// hard-iron estimate) and a calibration seeded by ``seed(from:)`` that has not been superseded. A
    /// calibration applied to the readings beforehand (``MagneticCalibrator/priorAccuracy`` with a zero
    /// ``MagneticCalibrator/priorOffset``) is not part of it. O(1), no allocation.
    public var learnedCalibration: LearnedCalibration {
        let c = state.calibrator
        var learned = LearnedCalibration(gyroBias: state.bias, gyroBiasVariance: state.biasCovariance.diagonalVector)
        let ellipsoid = c.prefersEllipsoid
        let online = ellipsoid ? c.ellipsoidAccuracy : c.rotation.accuracy
        if state.seededMagneticPrior, c.priorAccuracy > online {
            learned.magneticOffset = c.priorOffset
            learned.magneticGains = c.priorGains
            learned.magneticFieldStrength = state.seededMagneticFieldStrength
            learned.magneticAccuracy = c.priorAccuracy
        } else if online > .uncalibrated {
            learned.magneticOffset = ellipsoid ? c.ellipsoidOffset : c.rotation.offset
            learned.magneticGains = ellipsoid ? c.ellipsoidGains : Vector3(1, 1, 1)
            learned.magneticFieldStrength = ellipsoid ? c.fieldStrength : 0
            learned.magneticAccuracy = online
        }
        return learned
    }

    /// Starts the filter from what an earlier run learned (``learnedCalibration``), as prior knowledge.
    ///
    /// - The bias estimate becomes `learned.gyroBias` (clipped to ``AttitudeFilterParameters/biasClip``)
    ///   and its covariance the diagonal of `learned.gyroBiasVariance`, raised to at least
    ///   ``AttitudeFilterParameters/biasDriftSigma``² (the bias may have drifted since) and capped at
    ///   ``AttitudeFilterParameters/biasInitialSigma``², so the filter corrects a bias that changed. The
    ///   rest detector still treats the bias as not yet measured at rest.
    /// - The magnetometer calibration, when `learned.magneticAccuracy` is not
    ///   ``MagneticCalibrationAccuracy/uncalibrated`` and no calibration applied beforehand is declared
    ///   (``MagneticCalibrator/priorAccuracy`` still uncalibrated: a stored explicit calibration takes
    ///   precedence), becomes the calibrator's prior (``MagneticCalibrator/priorOffset``, ``MagneticCalibrator/priorGains``),
    ///   graded at most ``MagneticCalibrationAccuracy/medium``: the online estimates replace it as soon as
    ///   one is as good.
    ///
    /// Call it on a new filter (or after ``reset()``), before the first sample. Values that are not
    /// usable (``LearnedCalibration/problem``) are ignored entirely.
    /// - Returns: whether the values were used.
    @discardableResult
    public mutating func seed(from learned: LearnedCalibration) -> Bool {
        guard learned.problem == nil else { return false }
        let deg = Double.pi / 180
        let clip = parameters.biasClip * deg
        let b = learned.gyroBias
        state.bias = Vector3(max(-clip, min(clip, b.x)), max(-clip, min(clip, b.y)), max(-clip, min(clip, b.z)))
        let floor = parameters.biasDriftSigma * deg * parameters.biasDriftSigma * deg
        let ceiling = parameters.biasInitialSigma * deg * parameters.biasInitialSigma * deg
        let v = learned.gyroBiasVariance
        func bounded(_ x: Double) -> Double { max(min(max(x, floor), ceiling), 0) }
        state.biasCovariance = Matrix3.diagonal(Vector3(bounded(v.x), bounded(v.y), bounded(v.z)))
        if learned.magneticAccuracy > .uncalibrated, state.calibrator.priorAccuracy == .uncalibrated {
            state.calibrator.priorOffset = learned.magneticOffset
            state.calibrator.priorGains = learned.magneticGains
            state.calibrator.priorAccuracy = min(learned.magneticAccuracy, .medium)
            state.seededMagneticPrior = true
            state.seededMagneticFieldStrength = learned.magneticFieldStrength
        }
        return true
    }
}

extension FusionDriver {
    /// What the driven filter has learned (``AttitudeFilter/learnedCalibration``).
    public var learnedCalibration: LearnedCalibration { filter.learnedCalibration }

    /// Starts the driven filter from an earlier run's learned calibration (``AttitudeFilter/seed(from:)``);
    /// call before the first sample, after setting ``priorMagneticAccuracy``.
    /// - Returns: whether the values were used.
    @discardableResult
    public mutating func seed(from learned: LearnedCalibration) -> Bool {
        filter.seed(from: learned)
    }
}
