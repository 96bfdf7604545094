/// Offline (non-causal) attitude estimation for recordings: uses past and future samples.
///
/// Three passes of ``AttitudeFilter``: forward over the whole recording (to converge bias, magnetic
/// reference and calibration), backward from that end state, and forward again from the backward pass's
/// end state at the start. The backward and second forward estimates lag the truth in opposite
/// directions, so their per-sample mean cancels the low-pass filters' lag to first order (in 9D, before
/// the heading stage below, the heading is the first forward pass's). The gyro biases of the two last
/// passes are combined by
/// the two-filter smoother of D. C. Fraser and J. E. Potter, "The optimum linear smoother as a combination
/// of two optimum linear filters", IEEE TAC 14(4), 1969: each pass weighted by its inverse bias
/// covariance.
///
/// With ``AttitudeFilterParameters/smootherZeroPhaseTimeConstant`` > 0 (the default here, 2 s) the
/// inclination is then re-estimated from the whole recording at once. The gyro, corrected by the combined
/// bias, is integrated into an almost-inertial frame in which the specific force is gravity plus the
/// derivative of the device's velocity. A Kalman filter and fixed-interval smoother of the state
/// (velocity, gravity, gravity's drift rate) — velocity driven by the measured specific force minus
/// gravity, gravity drifting with a slowly changing rate, and the pseudo-measurement "velocity ≈ 0" — then
/// estimates gravity at each sample from past and future samples without lag. Modelling the linear
/// acceleration as the derivative of a bounded velocity rather than as white noise makes it a
/// third-order, zero-phase low-pass of the specific force, which rejects bursts of linear acceleration
/// more sharply than the second-order filter pair of the same time constant used before. Where the device
/// is detected at rest (the rest thresholds of ``AttitudeFilterParameters`` over a centred window), the
/// velocity is known to be zero, and the pseudo-measurement is tightened by
/// ``AttitudeFilterParameters/smootherRestVelocityRatio``: the zero-velocity update of inertial navigation
/// (E. Foxlin, "Pedestrian tracking with shoe-mounted inertial sensors", IEEE Computer Graphics and
/// Applications 25(6), 2005). Each rest then anchors gravity, and a motion between two rests must leave
/// the velocity where it found it. The smoother is the Rauch–Tung–Striebel one (H. E. Rauch, F. Tung and
/// C. T. Striebel, "Maximum likelihood estimates of linear dynamic systems", AIAA Journal 3(8), 1965), run
/// in the modified Bryson–Frazier form (G. J. Bierman, "Factorization Methods for Discrete Sequential
/// Estimation", Academic Press, 1977), which needs no covariance inverse. Each sample's inclination is the
/// rotation taking the smoothed gravity to vertical; its heading is kept.
///
/// In 9D, with ``AttitudeFilterParameters/smootherHeadingTimeConstant`` > 0 (the default here, 30 s), the
/// heading is then re-estimated from the whole recording as well (``HeadingSmoother``): each attitude is
/// levelled onto the same gyro-integrated frame, whose heading changes only through the gyroscope's
/// errors, and the offset of that frame from magnetic north is estimated from every magnetometer sample
/// judged undisturbed against the recording's median field, by a Kalman filter and Rauch–Tung–Striebel
/// smoother of (offset, gyro scale-factor error) with a random walk that grows with the angle turned. Rests
/// anchor the heading (``AttitudeFilterParameters/smootherHeadingRestVarianceRatio``), and samples whose
/// field deviates from the median are down-weighted by the heading error the deviation suggests
/// (``AttitudeFilterParameters/smootherHeadingDisturbanceAngle``). On the 14 BROAD trials this stage
/// lowers the 9D total RMSE from 1.825° (causal heading) to 1.199° (offline VQF: 2.763°).
///
/// On the 14 public BROAD trials (D. Laidig, M. Caruso, A. Cereatti and T. Seel, "BROAD—A Benchmark for
/// Robust Inertial Orientation Estimation", Data 6(7):72, 2021) this stage gives a mean 6D inclination
/// RMSE of 0.598° (the second-order filter pair: 0.601°; offline VQF, D. Laidig and T. Seel, "VQF: Highly
/// accurate IMU orientation estimation with bias estimation and magnetic disturbance rejection",
/// Information Fusion 91, 2023: 0.600°).
///
/// Allocates its output arrays (not per sample); O(n) time. Not a real-time filter.
public enum AttitudeSmoother {
    /// The smoother's default tuning: ``AttitudeFilterParameters``' defaults (the causal filter's
    /// inclination time constant, 1.75 s: a separate offline value, 2.2 s before, scored worse on the
    /// BROAD trials once the bias stopped chasing motion, so one parameter fewer) with the zero-phase
    /// gravity smoother on with a 2 s time constant (and
    /// ``AttitudeFilterParameters/smootherRestVelocityRatio`` at its default, 0.01), and the 9D heading
    /// smoother on with a 30 s time constant (its rest variance ratio, 0.001, and disturbance angle, 0.5°,
    /// at their defaults).
    public static let defaultParameters: AttitudeFilterParameters = {
        var p = AttitudeFilterParameters()
        p.smootherZeroPhaseTimeConstant = 2
        p.smootherHeadingTimeConstant = 30
        return p
    }()

    /// Smooths a uniformly or non-uniformly sampled recording.
    /// - Parameters:
    ///   - gyro: rad/s per sample.
    ///   - accelerometer: g per sample, Core Motion sign.
    ///   - magnetometer: µT per sample, or `nil` for 6D.
    ///   - timeStep: time step of sample `i` (since sample `i − 1`), seconds; `timeStep(0)` is used for the first.
    ///   - parameters: filter tuning.
    /// - Returns: attitude device → reference for each sample (magnetic north–west–up in 9D, an arbitrary
    ///   z-up frame in 6D).
    public static func smooth(
        gyro: [Vector3], accelerometer: [Vector3], magnetometer: [Vector3]?,
        parameters: AttitudeFilterParameters = AttitudeSmoother.defaultParameters,
        timeStep: (Int) -> Double
    ) -> [Quaternion] {
        smoothWithBias(gyro: gyro, accelerometer: accelerometer, magnetometer: magnetometer,
                       parameters: parameters, timeStep: timeStep).attitude
    }

    /// Like ``smooth(gyro:accelerometer:magnetometer:parameters:timeStep:)``, also returning the gyro bias
    /// (rad/s, device frame) of the final forward pass for each sample.
    public static func smoothWithBias(
        gyro: [Vector3], accelerometer: [Vector3], magnetometer: [Vector3]?,
        parameters: AttitudeFilterParameters = AttitudeSmoother.defaultParameters,
        timeStep: (Int) -> Double
    ) -> (attitude: [Quaternion], bias: [Vector3]) {
        let n = min(gyro.count, accelerometer.count, magnetometer?.count ?? Int.max)
        guard n > 0 else { return ([], []) }
        var filter = AttitudeFilter(parameters: parameters, usesMagnetometer: magnetometer != nil)
        func step(_ f: inout AttitudeFilter, _ i: Int, _ dt: Double) {
            f.updateGyro(gyro[i], dt: dt)
            f.updateAccelerometer(accelerometer[i], dt: dt)
            if let m = magnetometer { f.updateMagnetometer(m[i], dt: dt) }
        }
        // Pass 1: forward, to converge; its causal heading is kept for 9D.
        var first = [Quaternion]()
        if magnetometer != nil { first.reserveCapacity(n) }
        for i in 0..<n {
            step(&filter, i, timeStep(i))
            if magnetometer != nil { first.append(filter.quaternion) }
        }
        // The magnetometer calibration as the whole recording has made it.
        let calibrator = filter.state.calibrator
        // Pass 2: backward. The step from sample i+1 back to i spans timeStep(i+1).
        filter.reverseTimeDirection()
        var backward = [Quaternion](repeating: .identity, count: n)
        var backwardBias = [Vector3](repeating: .zero, count: n)
        var backwardCovariance = [Matrix3](repeating: .zero, count: n)
        for i in stride(from: n - 1, through: 0, by: -1) {
            // The rate of sample i+1 spans the interval (i, i+1]: integrate it backwards to reach sample i.
            if i < n - 1 { filter.updateGyro(-gyro[i + 1], dt: timeStep(i + 1)) }
            filter.updateAccelerometer(accelerometer[i], dt: timeStep(min(i + 1, n - 1)))
            if let m = magnetometer { filter.updateMagnetometer(m[i], dt: timeStep(min(i + 1, n - 1))) }
            backward[i] = filter.quaternion
            backwardBias[i] = -filter.state.bias
            backwardCovariance[i] = filter.state.biasCovariance
        }
        // Pass 3: forward from the start state found by the backward pass.
        filter.reverseTimeDirection()
        var out = [Quaternion](repeating: .identity, count: n)
        var bias = [Vector3](repeating: .zero, count: n)
        var smoothedBias = [Vector3](repeating: .zero, count: n)
        for i in 0..<n {
            step(&filter, i, timeStep(i))
            var a = filter.quaternion
            bias[i] = filter.state.bias
            // The bias seen from both directions, each weighted by its information.
            smoothedBias[i] = combinedBias(bias[i], filter.state.biasCovariance,
                                           backwardBias[i], backwardCovariance[i])
            let b = backward[i]
            if a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z < 0 {
                a = Quaternion(w: -a.w, x: -a.x, y: -a.y, z: -a.z)
            }
            let mean = Quaternion(w: a.w + b.w, x: a.x + b.x, y: a.y + b.y, z: a.z + b.z).normalized
            if magnetometer != nil {
                // Inclination from the mean, heading from the first (causal) forward pass: turn the mean
                // about vertical by the heading difference (a rotation about z leaves the inclination
                // unchanged). On BROAD the backward pass's magnetometer heading was less accurate than
                // the forward one, so averaging headings did not pay.
                let r = first[i] * mean.conjugate
                out[i] = Quaternion.aboutZ(2 * _atan2(r.z, r.w)) * mean
            } else {
                out[i] = mean
            }
        }
        let headingSmoothed = magnetometer != nil && parameters.smootherHeadingTimeConstant > 0
        if parameters.smootherZeroPhaseTimeConstant > 0 || headingSmoothed {
            let frame = IntegratedFrame(gyro: gyro, accelerometer: accelerometer, bias: smoothedBias, n: n,
                                        parameters: parameters, timeStep: timeStep)
            if parameters.smootherZeroPhaseTimeConstant > 0 {
                smoothedInclination(&out, frame: frame, accelerometer: accelerometer, parameters: parameters)
            }
            if headingSmoothed, let m = magnetometer {
                smoothedHeading(&out, frame: frame, magnetometer: m, calibrator: calibrator, parameters: parameters)
            }
        }
        return (out, bias)
    }

    /// The forward and backward bias estimates `b_f`, `b_b` (rad/s) combined by their information (inverse
    /// covariance, (rad/s)⁻²): `(P_f⁻¹ + P_b⁻¹)⁻¹ (P_f⁻¹ b_f + P_b⁻¹ b_b)`, the two-filter smoother of
    /// Fraser and Potter (1969). Where one pass has seen a rest phase or a long stretch of motion and the
    /// other has not, its estimate counts for more, instead of the plain mean. Falls back to the plain
    /// mean when a covariance is singular or the result is not finite.
    static func combinedBias(_ bf: Vector3, _ pf: Matrix3, _ bb: Vector3, _ pb: Matrix3) -> Vector3 {
        guard let jf = pf.inverse, let jb = pb.inverse, let p = (jf + jb).inverse else { return (bf + bb) * 0.5 }
        let b = p * (jf * bf + jb * bb)
        return b.isFinite ? b : (bf + bb) * 0.5
    }

    /// The gyro, corrected by the combined bias, integrated into an almost-inertial frame *I*: the
    /// attitude device → I, the corrected rate (rad/s), the clamped time step (seconds) and whether the
    /// device rests (``GravitySmoother/restMask(rate:accelerometer:dt:parameters:)``) per sample.
    struct IntegratedFrame {
        var attitude: [Quaternion]
        var rate: [Vector3]
        var dt: [Double]
        var rest: [Bool]

        init(gyro: [Vector3], accelerometer: [Vector3], bias: [Vector3], n: Int,
             parameters: AttitudeFilterParameters, timeStep: (Int) -> Double) {
            attitude = [Quaternion](repeating: .identity, count: n)
            rate = [Vector3](repeating: .zero, count: n)
            dt = [Double](repeating: 0, count: n)
            var q = Quaternion.identity
            for i in 0..<n {
                rate[i] = gyro[i] - bias[i]
                let h = timeStep(i)
                dt[i] = h.isFinite ? min(max(h, 0), parameters.maximumTimeStep) : 0
                if i > 0 { q = renormalized(q * smallRotation(rate[i] * dt[i])) }
                attitude[i] = q
            }
            rest = GravitySmoother.restMask(rate: rate, accelerometer: accelerometer, dt: dt,
                                            parameters: parameters)
        }
    }

    /// Replaces the heading of `attitude` by the one ``HeadingSmoother`` estimates from the whole
    /// recording, keeping each sample's inclination.
    ///
    /// Each attitude is levelled onto the integrated frame: its inclination correction relative to *I*
    /// (the part of `attitude · I⁻¹` that is not a turn about vertical) applied to *I*, so that the
    /// heading of the levelled frame changes only with the gyroscope's errors. The magnetometer
    /// calibration the forward pass converged to over the whole recording is applied to every sample
    /// when it reached ``AttitudeFilterParameters/minimumAccuracyForCalibratedHeading`` and makes the
    /// field's norm steadier than the raw field's (``HeadingSmoother/calibrationSteadiesNorm(raw:calibrated:)``).
    static func smoothedHeading(_ attitude: inout [Quaternion], frame: IntegratedFrame, magnetometer: [Vector3],
                                calibrator: MagneticCalibrator, parameters: AttitudeFilterParameters) {
        let n = attitude.count
        var levelled = [Quaternion](repeating: .identity, count: n)
        for i in 0..<n {
            let qI = frame.attitude[i]
            let r = attitude[i] * qI.conjugate
            let tilt = Quaternion.aboutZ(-2 * _atan2(r.z, r.w)) * r
            levelled[i] = (tilt * qI).normalized
        }
        var field = Array(magnetometer.prefix(n))
        if parameters.calibratesMagnetometer,
           calibrator.accuracy >= parameters.minimumAccuracyForCalibratedHeading {
            let calibrated = field.map { calibrator.calibrate($0) }
            if HeadingSmoother.calibrationSteadiesNorm(raw: field, calibrated: calibrated) { field = calibrated }
        }
        guard let offsets = HeadingSmoother.offsets(levelled: levelled, field: field, rate: frame.rate,
                                                    dt: frame.dt, rest: frame.rest,
                                                    parameters: parameters) else { return }
        for i in 0..<n {
            attitude[i] = (Quaternion.aboutZ(offsets[i]) * levelled[i]).normalized
        }
    }

    /// Replaces the inclination of `attitude` by the smoothed gravity direction, keeping each sample's
    /// heading.
    ///
    /// The gyro, corrected by the converged bias, is integrated into an almost-inertial frame, where
    /// gravity is nearly constant and the specific force is gravity plus the derivative of the device's
    /// velocity. `GravitySmoother` estimates gravity there from past and future samples, and each sample's
    /// inclination is the rotation taking that estimate to vertical.
    static func smoothedInclination(_ attitude: inout [Quaternion], frame: IntegratedFrame,
                                    accelerometer: [Vector3], parameters: AttitudeFilterParameters) {
        let n = attitude.count
        let qI = frame.attitude, dt = frame.dt
        var force = [Vector3](repeating: .zero, count: n)
        for i in 0..<n {
            force[i] = qI[i].rotate(-accelerometer[i])
        }
        let gravity = GravitySmoother.smooth(force: force, rest: frame.rest, dt: dt,
                                             timeConstant: parameters.smootherZeroPhaseTimeConstant,
                                             restVelocityRatio: parameters.smootherRestVelocityRatio)
        for i in 0..<n {
            let v = gravity[i]
            let len = v.length
            guard len > 0, len.isFinite else { continue }
            let a = v * (1 / len)
            let w2 = (1 + a.z) / 2
            guard w2 > 1e-9 else { continue }
            let w = w2.squareRoot()
            let corr = Quaternion(w: w, x: a.y / (2 * w), y: -a.x / (2 * w), z: 0)
            let incl = (corr * qI[i]).normalized
            // Keep the sample's heading: turn about vertical onto the previous estimate's heading.
            let r = attitude[i] * incl.conjugate
            attitude[i] = (Quaternion.aboutZ(2 * _atan2(r.z, r.w)) * incl).normalized
        }
    }
}
