/// Fixed-interval smoother of the gravity direction in a gyro-integrated, almost-inertial frame, used by
/// ``AttitudeSmoother`` for its final inclination.
///
/// In a frame that follows the integrated gyro, the specific force is `f = g + v̇`: gravity `g`, constant
/// but for a slow drift left by the residual gyro bias, plus the derivative of the device's velocity `v`.
/// The velocity of a hand-held or body-worn device stays bounded, so its derivative cannot have a mean:
/// over any stretch of time the linear acceleration integrates to a change of velocity, not to a growing
/// error. The model states exactly that, per axis of the frame:
///
/// - `v̇ = f − g`, with the measured specific force `f` as a known input;
/// - `g̈` is white noise of spectral density `q` (gravity drifts with a slowly changing rate);
/// - the pseudo-measurement `0 = v + n`, with `n` white of spectral density `r` in motion and `ρ² r` at
///   rest: a velocity that stays near zero in motion and is zero at rest, the zero-velocity update of
///   pedestrian inertial navigation (E. Foxlin, "Pedestrian tracking with shoe-mounted inertial sensors",
///   IEEE Computer Graphics and Applications 25(6), 2005).
///
/// With `q/r = τ⁻⁶` the steady-state filter is a third-order low-pass of the specific force with natural
/// frequency `1/τ`; treating the linear acceleration as the derivative of a bounded velocity, instead of
/// as white noise, gives it a steeper cut-off than a second-order filter of the same time constant. The
/// three axes share one covariance, so the Kalman filter runs on 3×3 matrices; its estimates are
/// combined with the future ones by the modified Bryson–Frazier form of the fixed-interval smoother
/// (G. J. Bierman, "Factorization Methods for Discrete Sequential Estimation", Academic Press, 1977),
/// which gives the Rauch–Tung–Striebel result (H. E. Rauch, F. Tung and C. T. Striebel, "Maximum
/// likelihood estimates of linear dynamic systems", AIAA Journal 3(8), 1965) without inverting a
/// covariance. O(n) time; allocates its arrays once.
enum GravitySmoother {
    /// Smoothed gravity (in the units of `force`) for each sample.
    /// - Parameters:
    ///   - force: specific force in the integrated frame, per sample.
    ///   - rest: whether the device is at rest at each sample.
    ///   - dt: time since the previous sample, seconds (`dt[0]` is unused); a non-positive step skips
    ///     that sample's measurement.
    ///   - timeConstant: `τ`, seconds.
    ///   - restVelocityRatio: `ρ`, the standard deviation of the zero-velocity pseudo-measurement at rest
    ///     relative to that in motion; 1 treats rest like motion.
    static func smooth(force: [Vector3], rest: [Bool], dt: [Double], timeConstant tau: Double,
                       restVelocityRatio: Double) -> [Vector3] {
        let n = force.count
        guard n > 1, tau > 0, tau.isFinite else { return force }
        let q = 1 / (tau * tau * tau * tau * tau * tau)
        let ratio2 = restVelocityRatio.isFinite ? min(max(restVelocityRatio, 0), 1).squared : 1
        // Forward Kalman filter of (v, g, ġ); the three axes are the three components of each Vector3.
        var predictedGravity = [Vector3](repeating: .zero, count: n)
        var gravityCovarianceRow = [Vector3](repeating: .zero, count: n)
        var gain = [Vector3](repeating: .zero, count: n)
        var scaledInnovation = [Vector3](repeating: .zero, count: n)
        var v = Vector3.zero, g = force[0], rate = Vector3.zero
        // A diffuse start (1 g·s, 1 g, 1 g/s): the samples, not a prior, set the first estimates.
        var p = Matrix3.identity
        for i in 0..<n {
            let h = i > 0 ? dt[i] : 0
            if h > 0 {
                v = v + (force[i - 1] - g) * h
                g = g + rate * h
                let f = Matrix3(rows: Vector3(1, -h, 0), Vector3(0, 1, h), Vector3(0, 0, 1))
                let h2 = h * h
                let noise = Matrix3(rows: Vector3(0, 0, 0), Vector3(0, q * h2 * h / 3, q * h2 / 2),
                                    Vector3(0, q * h2 / 2, q * h))
                p = f * p * f.transposed + noise
            }
            predictedGravity[i] = g
            gravityCovarianceRow[i] = p.r1
            // The measurement's step: the interval ending here, or for the first sample the next one.
            let span = i > 0 ? dt[i] : dt[min(1, n - 1)]
            guard span > 0 else { continue }
            let variance = (rest[i] ? ratio2 : 1) / span
            let s = p.r0.x + variance
            guard s > 0, s.isFinite else { continue }
            let k = Vector3(p.r0.x, p.r1.x, p.r2.x) * (1 / s)
            let innovation = -v
            gain[i] = k
            scaledInnovation[i] = innovation * (1 / s)
            v = v + innovation * k.x
            g = g + innovation * k.y
            rate = rate + innovation * k.z
            let r0 = p.r0
            p = Matrix3(rows: p.r0 - r0 * k.x, p.r1 - r0 * k.y, p.r2 - r0 * k.z)
            let p01 = (p.r0.y + p.r1.x) / 2, p02 = (p.r0.z + p.r2.x) / 2, p12 = (p.r1.z + p.r2.y) / 2
            p = Matrix3(rows: Vector3(p.r0.x, p01, p02), Vector3(p01, p.r1.y, p12), Vector3(p02, p12, p.r2.z))
        }
        // Backward pass: the adjoint λ of (v, g, ġ), per axis; x̂ = x⁻ − P⁻ λ̃.
        var out = predictedGravity
        var lv = Vector3.zero, lg = Vector3.zero, ld = Vector3.zero
        for i in stride(from: n - 1, through: 0, by: -1) {
            let k = gain[i]
            // λ̃ = −Hᵀ ν/S + (I − K H)ᵀ λ̂ with H = (1, 0, 0).
            let tv = lv - (lv * k.x + lg * k.y + ld * k.z) - scaledInnovation[i]
            let row = gravityCovarianceRow[i]
            out[i] = predictedGravity[i] - (tv * row.x + lg * row.y + ld * row.z)
            // λ̂ of the previous sample: Fᵀ λ̃.
            let h = i > 0 ? dt[i] : 0
            let nextG = lg - tv * h
            ld = ld + lg * h
            lg = nextG
            lv = tv
        }
        return out
    }

    /// Rest detection over a window of ``AttitudeFilterParameters/restMinimumTime`` centred on each
    /// sample: the standard deviations of the rate and of the accelerometer below
    /// ``AttitudeFilterParameters/restGyroThreshold`` and ``AttitudeFilterParameters/restAccelerometerThreshold``,
    /// and the mean rate below ``AttitudeFilterParameters/restGyroMagnitudeThreshold``. Centred, since
    /// the smoother sees the future: the same thresholds as the causal filter's detector.
    /// - Parameters:
    ///   - rate: bias-corrected angular rate, rad/s.
    ///   - accelerometer: g.
    ///   - dt: time since the previous sample, seconds.
    static func restMask(rate: [Vector3], accelerometer: [Vector3], dt: [Double],
                         parameters: AttitudeFilterParameters) -> [Bool] {
        let n = rate.count
        var mask = [Bool](repeating: false, count: n)
        guard n > 1, parameters.restMinimumTime > 0 else { return mask }
        var time = [Double](repeating: 0, count: n)
        var sumRate = [Vector3](repeating: .zero, count: n + 1), sumRate2 = [Double](repeating: 0, count: n + 1)
        var sumAcc = [Vector3](repeating: .zero, count: n + 1), sumAcc2 = [Double](repeating: 0, count: n + 1)
        for i in 0..<n {
            time[i] = i > 0 ? time[i - 1] + dt[i] : 0
            sumRate[i + 1] = sumRate[i] + rate[i]
            sumRate2[i + 1] = sumRate2[i] + rate[i].lengthSquared
            sumAcc[i + 1] = sumAcc[i] + accelerometer[i]
            sumAcc2[i + 1] = sumAcc2[i] + accelerometer[i].lengthSquared
        }
        let half = parameters.restMinimumTime / 2
        let degree = Double.pi / 180
        let rateDeviation = (parameters.restGyroThreshold * degree).squared
        let rateMagnitude = (parameters.restGyroMagnitudeThreshold * degree).squared
        let accDeviation = parameters.restAccelerometerThreshold.squared
        var lo = 0, hi = 0
        for i in 0..<n {
            while time[lo] < time[i] - half { lo += 1 }
            while hi + 1 < n, time[hi + 1] <= time[i] + half { hi += 1 }
            let count = Double(hi - lo + 1)
            guard count >= 2 else { continue }
            let meanRate = (sumRate[hi + 1] - sumRate[lo]) * (1 / count)
            let meanAcc = (sumAcc[hi + 1] - sumAcc[lo]) * (1 / count)
            let varRate = (sumRate2[hi + 1] - sumRate2[lo]) / count - meanRate.lengthSquared
            let varAcc = (sumAcc2[hi + 1] - sumAcc2[lo]) / count - meanAcc.lengthSquared
            mask[i] = varRate < rateDeviation && varAcc < accDeviation && meanRate.lengthSquared < rateMagnitude
        }
        return mask
    }
}

extension Double {
    /// The square.
    @inline(__always) fileprivate var squared: Double { self * self }
}
