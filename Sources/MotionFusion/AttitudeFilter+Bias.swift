extension AttitudeFilter {
    /// In-motion bias update from one inclination correction.
    ///
    /// A bias error `e` (device frame) rotates the almost-inertial frame at `R e` (R: device → E6), which
    /// the low-pass filtered inclination correction tracks with the filter's lag. The correction rate
    /// `δ/dt` therefore measures `−LP[R e] = −LP[R] b_true + LP[R b̂]`, so `y = −δ/dt + LP[R b̂]` is a
    /// linear measurement `LP[R] b_true` of the bias; only its horizontal rows are observable.
    ///
    /// Corrections and the model inputs are averaged over ``AttitudeFilterParameters/biasMotionUpdateInterval``
    /// and the model filters run once per interval on those averages (a boxcar decimation far above the
    /// filters' cut-off); the Kalman update, when `estimate` is true, follows.
    ///
    /// - Parameter rotation: device → E6 after this sample's correction, passed in registers by the
    ///   caller that just computed it (reading it back from the state right after the store costs a
    ///   store-forwarding stall on every sample).
    @inline(__always)
    mutating func updateBiasInMotion(correction: Vector3, rotation: Quaternion, dt: Double, estimate: Bool,
                                     _ c: AttitudeFilterCoefficients) {
        let (r0, r1) = horizontalRows(rotation)
        state.modelRow0Sum += r0
        state.modelRow1Sum += r1
        state.modelRotatedBiasSum += Vector3(r0.dot(state.bias), r1.dot(state.bias), 0)
        state.modelCount += 1
        state.modelRateSquaredSum += state.lastGyro.lengthSquared
        if estimate {
            state.biasCorrectionSum += correction
        } else {
            state.biasCorrectionSum = .zero
        }
        state.biasCorrectionTime += dt
        guard state.biasCorrectionTime >= parameters.biasMotionUpdateInterval else { return }
        updateBiasAtIntervalEnd(estimate: estimate, c)
    }

    /// The once-per-interval part of ``updateBiasInMotion(correction:rotation:dt:estimate:_:)``: runs the
    /// model filters on the interval's averages, then the Kalman update. Kept out of line so that the
    /// per-sample accumulation stays small.
    @inline(never)
    mutating func updateBiasAtIntervalEnd(estimate: Bool, _ c: AttitudeFilterCoefficients) {
        let total = state.biasCorrectionTime
        let sum = state.biasCorrectionSum
        let inv = 1 / state.modelCount
        // The model filters follow the inclination low-pass filter's current time constant, so that
        // their lag matches that of the corrections; the time constant itself is updated here, once per
        // interval.
        let m = LowPassCoefficients(timeConstant: state.inclinationTimeConstant, dt: total)
        updateInclinationTimeConstant(c)
        let h0 = state.rotationRow0LowPass.filter(state.modelRow0Sum * inv, m)
        let h1 = state.rotationRow1LowPass.filter(state.modelRow1Sum * inv, m)
        let rb = state.rotatedBiasLowPass.filter(state.modelRotatedBiasSum * inv, m)
        let rate2 = state.modelRateSquaredSum * inv
        state.modelRateSquaredSum = 0
        state.modelRow0Sum = .zero
        state.modelRow1Sum = .zero
        state.modelRotatedBiasSum = .zero
        state.modelCount = 0
        state.biasCorrectionSum = .zero
        state.biasCorrectionTime = 0
        guard estimate else { return }
        applyBiasProcessNoise()
        let b = state.bias
        let y0 = -sum.x / total + rb.x
        let y1 = -sum.y / total + rb.y
        let nu0 = y0 - h0.dot(b)
        let nu1 = y1 - h1.dot(b)
        let p = state.biasCovariance
        let u0 = p * h0, u1 = p * h1
        let d = state.accelerationDisturbance / max(parameters.biasMotionAccelerationScale, 1e-9)
        // Gyro scale-factor and axis-misalignment errors turn rotation into apparent drift in proportion to
        // the rate; they are correlated with the motion, so they enter as a rate-proportional density.
        let k2 = parameters.biasMotionRateNoise * parameters.biasMotionRateNoise
        let noise = (c.biasMotionNoiseDensitySquared + k2 * rate2) / total * (1 + d * d)
        let s00 = h0.dot(u0) + noise
        let s01 = h0.dot(u1)
        let s11 = h1.dot(u1) + noise
        let det = s00 * s11 - s01 * s01
        guard det > 0, det.isFinite else { return }
        let invDet = 1 / det
        let k0 = (u0 * s11 - u1 * s01) * invDet
        let k1 = (u1 * s00 - u0 * s01) * invDet
        let newBias = b + k0 * nu0 + k1 * nu1
        let newP = p - outer(k0, u0) - outer(k1, u1)
        commitBias(newBias, newP)
    }

    /// At-rest bias update: the low-pass filtered gyro measures the bias directly.
    @inline(__always)
    mutating func updateBiasAtRest(_ c: AttitudeFilterCoefficients) {
        applyBiasProcessNoise()
        let y = state.restGyroLowPass
        let p = state.biasCovariance
        var s = p
        s.r0.x += c.biasRestNoise
        s.r1.y += c.biasRestNoise
        s.r2.z += c.biasRestNoise
        guard let sInv = s.inverse else { return }
        let k = p * sInv
        let newBias = state.bias + k * (y - state.bias)
        let newP = p - k * p
        commitBias(newBias, newP)
        // The bias counts as measured at rest once the estimate agrees with the rest reading (within half
        // the rest magnitude threshold): one update moves an estimate whose prior is 0.5 °/s only partway
        // to a phone's 4–6 °/s (less the higher the sample rate), and checking the rest that follows
        // against that halfway estimate read it as a slow rotation, which ended the measurement there.
        let half = 0.5 * parameters.restGyroMagnitudeThreshold * Double.pi / 180
        if (y - state.bias).lengthSquared < half * half {
            state.biasObservedAtRest = true
        }
    }

    @inline(__always)
    mutating func commitBias(_ b: Vector3, _ p: Matrix3) {
        guard b.isFinite, p.diagonalVector.isFinite else { return }
        let clip = parameters.biasClip * Double.pi / 180
        state.bias = Vector3(max(-clip, min(clip, b.x)), max(-clip, min(clip, b.y)), max(-clip, min(clip, b.z)))
        // Keep the covariance symmetric.
        let sym = (p + p.transposed) * 0.5
        state.biasCovariance = clampCovariance(sym)
    }
}

/// The first two rows of the rotation matrix of `q` (the rows mapping to the horizontal x and y axes).
@inline(__always)
func horizontalRows(_ q: Quaternion) -> (Vector3, Vector3) {
    let (w, x, y, z) = (q.w, q.x, q.y, q.z)
    return (Vector3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
            Vector3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)))
}

@inline(__always)
func outer(_ a: Vector3, _ b: Vector3) -> Matrix3 {
    Matrix3(rows: b * a.x, b * a.y, b * a.z)
}
