extension AttitudeFilter {
    /// Integrates one gyroscope sample.
    /// - Parameters:
    ///   - rate: rotation rate, rad/s, device frame (biased, as measured).
    ///   - dt: time since the previous gyro sample, seconds (see the type's notes on invalid steps).
    public mutating func updateGyro(_ rate: Vector3, dt: Double) {
        guard rate.isFinite, let dt = validTimeStep(dt) else {
            state.skippedSamples += 1
            return
        }
        Self.refresh(&gyroCoefficients, parameters, dt)
        state.lastGyro = rate

        // Rest detection: deviation from a low-pass value, and the low-pass magnitude itself.
        let c = gyroCoefficients
        if !state.restGyroInitialized {
            state.restGyroLowPass = LowPassVector3(steadyAt: rate, c.rest)
            state.restGyroInitialized = true
        }
        let lp = state.restGyroLowPass.filter(rate, c.rest)
        let deg = Double.pi / 180
        let th = parameters.restGyroThreshold * deg
        let thMag = parameters.restGyroMagnitudeThreshold * deg
        state.gyroQuiet = (rate - lp).lengthSquared < th * th && lp.lengthSquared < thMag * thMag

        // Strapdown integration of the bias-corrected rate: q ← q ⊗ exp((ω − b) dt).
        let w = rate - state.bias
        let q = state.gyroQuaternion * Quaternion(rotationVector: w * dt)
        state.gyroQuaternion = q.normalized

        // Bias uncertainty grows (random walk), bounded by the initial uncertainty.
        var p = state.biasCovariance
        p.r0.x += c.biasProcessNoise
        p.r1.y += c.biasProcessNoise
        p.r2.z += c.biasProcessNoise
        state.biasCovariance = clampCovariance(p)
    }

    /// Bounds each variance by the initial one so that unobservable directions do not grow without limit.
    @inline(__always)
    func clampCovariance(_ p: Matrix3) -> Matrix3 {
        let s = parameters.biasInitialSigma * Double.pi / 180
        let maxVar = s * s
        let d = p.diagonalVector
        let m = max(d.x, d.y, d.z)
        if m > maxVar, m.isFinite {
            return p * (maxVar / m)
        }
        return p
    }
}
