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
        Self.refresh(&accelerometerCoefficients, parameters, dt)
        let c = accelerometerCoefficients
        state.lastAcceleration = acceleration

        updateRestDetection(specificForce, dt: dt, c)
        let deviation = abs(specificForce.length - 1)
        state.accelerationDisturbance = max(deviation, state.accelerationDisturbance * c.accelerationDisturbanceDecay)

        let forceI = state.gyroQuaternion.rotate(specificForce)
        if !state.accelerometerInitialized {
            state.accelerationLowPass = LowPassVector3(steadyAt: forceI, c.acceleration)
            state.accelerometerInitialized = true
            state.accelerationInitialCount = 1
            state.accelerationInitialTime = dt
            state.inclinationQuaternion = .identity
            _ = applyInclinationCorrection(forceI)
            let r = Matrix3(state.inclinationQuaternion * state.gyroQuaternion)
            state.rotationLowPass = LowPassMatrix3(steadyAt: r, c.acceleration)
            state.rotatedBiasLowPass = LowPassVector3(steadyAt: r * state.bias, c.acceleration)
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
            state.accelerationLowPass = LowPassVector3(steadyAt: lp, c.acceleration)
        } else {
            lp = state.accelerationLowPass.filter(forceI, c.acceleration)
        }
        let correction = applyInclinationCorrection(lp)

        // Corrections during the start-up averaging reflect the initial inclination, not the bias.
        let settled = state.accelerationInitialTime >= parameters.accelerometerTimeConstant
        if parameters.estimatesBiasInMotion && !state.isAtRest && settled {
            updateBiasInMotion(correction: correction, dt: dt, c)
        } else {
            // Keep the measurement-model filters running so they are in step when motion resumes.
            let r = Matrix3(state.inclinationQuaternion * state.gyroQuaternion)
            state.rotationLowPass.filter(r, c.acceleration)
            state.rotatedBiasLowPass.filter(r * state.bias, c.acceleration)
        }
        if parameters.estimatesBiasAtRest && state.isAtRest {
            updateBiasAtRest(c)
        }
    }

    /// Rotates the inclination so that `forceI` (I frame) maps to vertical; returns the correction as a
    /// rotation vector in E6 (radians, horizontal).
    @inline(__always)
    mutating func applyInclinationCorrection(_ forceI: Vector3) -> Vector3 {
        guard let a = state.inclinationQuaternion.rotate(forceI).normalized else { return .zero }
        // Shortest rotation taking a to (0, 0, 1): axis a × z = (a_y, −a_x, 0), half-angle cosine
        // w = √((1 + a_z)/2), vector part (a_y, −a_x, 0) / (2w).
        let w2 = (1 + a.z) / 2
        let corr: Quaternion
        let rotvec: Vector3
        if w2 > 1e-12 {
            let w = w2.squareRoot()
            corr = Quaternion(w: w, x: a.y / (2 * w), y: -a.x / (2 * w), z: 0)
            // Rotation vector: angle·axis, angle = 2 acos(w).
            let s = (1 - w2).squareRoot()
            let angle = 2 * _atan2(s, w)
            rotvec = s > 1e-15 ? Vector3(corr.x, corr.y, 0) * (angle / s) : Vector3(a.y, -a.x, 0)
        } else {
            corr = Quaternion(w: 0, x: 1, y: 0, z: 0)
            rotvec = Vector3(Double.pi, 0, 0)
        }
        state.inclinationQuaternion = (corr * state.inclinationQuaternion).normalized
        return rotvec
    }

    @inline(__always)
    mutating func updateRestDetection(_ force: Vector3, dt: Double, _ c: AttitudeFilterCoefficients) {
        if !state.restAccelerationInitialized {
            state.restAccelerationLowPass = LowPassVector3(steadyAt: force, c.rest)
            state.restAccelerationInitialized = true
        }
        let lp = state.restAccelerationLowPass.filter(force, c.rest)
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
