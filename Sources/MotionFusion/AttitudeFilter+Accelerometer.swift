extension AttitudeFilter {
    /// Corrects the inclination with one accelerometer sample.
    /// - Parameters:
    ///   - acceleration: g, Core Motion sign (face up at rest: z ≈ −1), device frame.
    ///   - dt: time since the previous accelerometer sample, seconds.
    public mutating func updateAccelerometer(_ acceleration: Vector3, dt: Double) {
        guard acceleration.isFinite, let dt = validTimeStep(dt) else {
            state.skippedSamples += 1
            return
        }
        let specificForce = -acceleration
        guard specificForce.lengthSquared > 1e-12 else {
            // A zero vector carries no direction (free fall or a dead sensor): keep the sample for user
            // acceleration but correct nothing.
            state.lastAcceleration = acceleration
            return
        }
        if accelerometerCoefficients.dt != dt { accelerometerCoefficients = coefficients(dt: dt) }
        let c = accelerometerCoefficients
        state.lastAcceleration = acceleration

        updateRestDetection(specificForce, dt: dt, c)
        let deviation = abs(specificForce.length - 1)
        state.accelerationDisturbance = max(deviation, state.accelerationDisturbance * c.accelerationDisturbanceDecay)

        let forceI = state.gyroQuaternion.rotate(specificForce)
        let rate = state.lastGyro - state.bias
        state.meanSquareRate += (rate.lengthSquared - state.meanSquareRate) * c.rateGain
        if !state.accelerometerInitialized {
            state.accelerationLowPass = InclinationLowPass(steadyAt: forceI)
            state.meanSquareRate = rate.lengthSquared
            updateInclinationTimeConstant(c)
            state.accelerometerInitialized = true
            state.accelerationInitialCount = 1
            state.accelerationInitialTime = dt
            state.inclinationQuaternion = .identity
            _ = applyInclinationCorrection(forceI)
            let (r0, r1) = horizontalRows(state.inclinationQuaternion * state.gyroQuaternion)
            let m = LowPassCoefficients(timeConstant: state.inclinationTimeConstant,
                                        dt: max(parameters.biasMotionUpdateInterval, dt))
            state.rotationRow0LowPass = LowPassVector3(steadyAt: r0, m)
            state.rotationRow1LowPass = LowPassVector3(steadyAt: r1, m)
            state.rotatedBiasLowPass = LowPassVector3(steadyAt: Vector3(r0.dot(state.bias), r1.dot(state.bias), 0), m)
            return
        }
        let lp: Vector3
        if state.accelerationInitialTime < parameters.accelerometerTimeConstant {
            // Start-up: the filter output is the plain mean of the samples so far, so that a first sample
            // taken during a linear acceleration does not set the inclination for several time constants.
            state.accelerationInitialTime += dt
            state.accelerationInitialCount += 1
            let mean = state.accelerationLowPass.value
            lp = mean + (forceI - mean) * (1 / state.accelerationInitialCount)
            state.accelerationLowPass = InclinationLowPass(steadyAt: lp)
        } else {
            lp = state.accelerationLowPass.filter(forceI, halfStepRate: 0.5 * dt / state.inclinationTimeConstant)
        }
        let correction = applyInclinationCorrection(lp)

        // Corrections during the start-up averaging reflect the initial inclination, not the bias.
        let settled = state.accelerationInitialTime >= parameters.accelerometerTimeConstant
        // The measurement-model filters always run, so they are in step when motion resumes.
        updateBiasInMotion(correction: correction, rotation: state.inclinationQuaternion * state.gyroQuaternion,
                           dt: dt, estimate: parameters.estimatesBiasInMotion && !state.isAtRest && settled, c)
        if parameters.estimatesBiasAtRest && state.isAtRest {
            updateBiasAtRest(c)
        }
    }

    /// Sets the inclination low-pass filter's time constant from the recent mean-square rotation rate:
    /// `τ = τ₀ (1 + ω̄²/ω₀²)^(−1/6)` (see ``AttitudeFilterParameters/inclinationRateScale``). Called on the
    /// first sample and then once per bias-update interval, so the roots are not paid per sample.
    @inline(__always)
    mutating func updateInclinationTimeConstant(_ c: AttitudeFilterCoefficients) {
        let tau0 = parameters.accelerometerTimeConstant
        let ratio = 1 + state.meanSquareRate * c.inverseRateScaleSquared
        // ratio^(−1/6) = 1/√(∛ratio).
        let tau = tau0 / _cbrt(ratio).squareRoot()
        // A non-positive or non-finite τ₀ (a pass-through filter in the fixed-coefficient form) becomes
        // the shortest sensible time constant rather than a division by zero.
        state.inclinationTimeConstant = tau.isFinite && tau > 1e-3 ? tau : 1e-3
    }

    /// Rotates the inclination so that `forceI` (I frame) maps to vertical; returns the correction as a
    /// rotation vector in E6 (radians, horizontal).
    @inline(__always)
    mutating func applyInclinationCorrection(_ forceI: Vector3) -> Vector3 {
        let v = state.inclinationQuaternion.rotate(forceI)
        if v.z > 0 {
            // Usual case, the filtered vector is within a fraction of a degree of vertical: with
            // t = (v_x, v_y)/v_z, the rotation vector is (t_y, −t_x)·atan|t|/|t|, by its series
            // (error < 1e-13 for |t|² < 1e-4), and its quaternion by the Taylor exponential map; no
            // square roots or trigonometry on the per-sample path.
            let iz = 1 / v.z
            let tx = v.x * iz, ty = v.y * iz
            let t2 = tx * tx + ty * ty
            if t2 < 1e-4 {
                let k = 1 + t2 * (-1.0 / 3 + t2 * (1.0 / 5))
                let rotvec = Vector3(ty * k, -tx * k, 0)
                state.inclinationQuaternion = renormalized(smallRotation(rotvec) * state.inclinationQuaternion)
                return rotvec
            }
        }
        let n2 = v.lengthSquared
        guard n2 > 0, n2.isFinite else { return .zero }
        let a = v * (1 / n2.squareRoot())
        // Shortest rotation taking a to (0, 0, 1): axis a × z = (a_y, −a_x, 0), half-angle cosine
        // w = √((1 + a_z)/2), vector part (a_y, −a_x, 0) / (2w).
        let w2 = (1 + a.z) * 0.5
        let corr: Quaternion
        let rotvec: Vector3
        if w2 > 1e-12 {
            let w = w2.squareRoot()
            let inv2w = 0.5 / w
            corr = Quaternion(w: w, x: a.y * inv2w, y: -a.x * inv2w, z: 0)
            // Rotation vector: angle·axis with angle = 2 asin(s), s = sin(angle/2) = |vector part|.
            let s2 = max(0, 1 - w2)
            let factor: Double
            if s2 < 0.01 {
                // 2 asin(s)/s = 2 (1 + s²/6 + 3s⁴/40 + 5s⁶/112 + …), error < 1e-9 for s < 0.1.
                factor = 2 + s2 * (2.0 / 6 + s2 * (6.0 / 40 + s2 * (10.0 / 112)))
            } else {
                let s = s2.squareRoot()
                factor = 2 * fastAtan2(s, w) / s
            }
            rotvec = Vector3(corr.x, corr.y, 0) * factor
        } else {
            corr = Quaternion(w: 0, x: 1, y: 0, z: 0)
            rotvec = Vector3(Double.pi, 0, 0)
        }
        state.inclinationQuaternion = renormalized(corr * state.inclinationQuaternion)
        return rotvec
    }

    @inline(__always)
    mutating func updateRestDetection(_ force: Vector3, dt: Double, _ c: AttitudeFilterCoefficients) {
        if !state.restAccelerationInitialized {
            state.restAccelerationLowPass = force
            state.restAccelerationInitialized = true
        }
        let lp = state.restAccelerationLowPass + (force - state.restAccelerationLowPass) * c.restGain
        state.restAccelerationLowPass = lp
        let th = parameters.restAccelerometerThreshold
        if state.gyroQuiet && (force - lp).lengthSquared < th * th {
            state.restTime += dt
            state.isAtRest = state.restTime >= parameters.restMinimumTime
        } else {
            state.restTime = 0
            state.isAtRest = false
        }
    }
}
