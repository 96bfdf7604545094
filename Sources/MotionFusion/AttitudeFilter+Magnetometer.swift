extension AttitudeFilter {
    /// Calibrates, checks and (in 9D) fuses one magnetometer sample into the heading.
    /// - Parameters:
    ///   - field: raw magnetic field, µT, device frame.
    ///   - dt: time since the previous magnetometer sample, seconds.
    public mutating func updateMagnetometer(_ field: Vector3, dt: Double) {
        guard field.isFinite, let dt = validTimeStep(dt) else {
            state.skippedSamples += 1
            return
        }
        state.lastMagneticField = field
        state.hasMagneticField = true
        if parameters.calibratesMagnetometer {
            state.calibrator.add(field)
        }
        guard usesMagnetometer, state.accelerometerInitialized else { return }
        let m = state.calibrator.accuracy >= parameters.minimumAccuracyForCalibratedHeading
            ? state.calibrator.calibrate(field) : field
        let norm = m.length
        guard norm > 1e-9 else { return }
        Self.refresh(&magnetometerCoefficients, parameters, dt)
        let c = magnetometerCoefficients

        let mE = (state.inclinationQuaternion * state.gyroQuaternion).rotate(m)
        let dip = fastAsin(mE.z / norm)
        // Heading offset that puts the horizontal field on +x (magnetic north).
        let target = -fastAtan2(mE.y, mE.x)

        if !state.magnetometerInitialized {
            state.magnetometerInitialized = true
            state.headingOffset = target
            state.initialHeadingOffset = target
            state.magneticReferenceNorm = norm
            state.magneticReferenceDip = dip
            state.magneticCandidateNorm = norm
            state.magneticCandidateDip = dip
            state.magnetometerInitialCount = 1
            state.magnetometerInitialTime = dt
            return
        }

        if state.magnetometerInitialTime < parameters.magnetometerInitialTime {
            // Initial averaging: plain mean of the first samples.
            state.magnetometerInitialTime += dt
            state.magnetometerInitialCount += 1
            let k = 1 / state.magnetometerInitialCount
            state.headingOffset = wrapAngle(state.headingOffset + k * wrapAngle(target - state.headingOffset))
            state.magneticReferenceNorm += k * (norm - state.magneticReferenceNorm)
            state.magneticReferenceDip += k * (dip - state.magneticReferenceDip)
            state.magneticCandidateNorm = state.magneticReferenceNorm
            state.magneticCandidateDip = state.magneticReferenceDip
            return
        }

        let dipTh = parameters.magneticDipThreshold * Double.pi / 180
        let undisturbed = abs(norm - state.magneticReferenceNorm) < parameters.magneticNormThreshold * state.magneticReferenceNorm
            && abs(dip - state.magneticReferenceDip) < dipTh
        var gain = 0.0
        if undisturbed {
            state.magneticUndisturbedTime += dt
            state.magneticRejectionTime = 0
            state.magneticDisturbance = false
            if state.magneticUndisturbedTime >= parameters.magneticMinimumUndisturbedTime {
                gain = c.magnetometerGain
                state.magneticReferenceConfirmed = true
                state.magneticReferenceNorm += c.magneticReferenceGain * (norm - state.magneticReferenceNorm)
                state.magneticReferenceDip += c.magneticReferenceGain * (dip - state.magneticReferenceDip)
            }
            state.magneticCandidateNorm = state.magneticReferenceNorm
            state.magneticCandidateDip = state.magneticReferenceDip
            state.magneticCandidateTime = 0
        } else {
            state.magneticUndisturbedTime = 0
            state.magneticRejectionTime += dt
            state.magneticDisturbance = true
            if state.magneticRejectionTime > parameters.magneticMaximumRejectionTime {
                gain = c.magnetometerGain / max(parameters.magneticRejectionFactor, 1)
            }
            // Track a candidate new field; adopt it once it has been consistent during motion for long enough.
            let consistent = abs(norm - state.magneticCandidateNorm) < parameters.magneticNormThreshold * state.magneticCandidateNorm
                && abs(dip - state.magneticCandidateDip) < dipTh
            if consistent {
                state.magneticCandidateNorm += c.magneticCandidateGain * (norm - state.magneticCandidateNorm)
                state.magneticCandidateDip += c.magneticCandidateGain * (dip - state.magneticCandidateDip)
                let minRate = parameters.magneticNewFieldMinimumRate * Double.pi / 180
                if state.lastGyro.lengthSquared >= minRate * minRate {
                    state.magneticCandidateTime += dt
                }
                let needed = state.magneticReferenceConfirmed ? parameters.magneticNewFieldTime : parameters.magneticNewFieldFirstTime
                if state.magneticCandidateTime >= needed {
                    state.magneticReferenceNorm = state.magneticCandidateNorm
                    state.magneticReferenceDip = state.magneticCandidateDip
                    state.magneticReferenceConfirmed = true
                    state.magneticUndisturbedTime = parameters.magneticMinimumUndisturbedTime
                    state.magneticRejectionTime = 0
                    state.magneticCandidateTime = 0
                    gain = c.magnetometerGain
                }
            } else {
                state.magneticCandidateNorm = norm
                state.magneticCandidateDip = dip
                state.magneticCandidateTime = 0
            }
        }
        if gain > 0 {
            state.headingOffset = wrapAngle(state.headingOffset + gain * wrapAngle(target - state.headingOffset))
        }
    }
}

/// Wraps an angle to (−π, π], radians.
@inline(__always)
func wrapAngle(_ a: Double) -> Double {
    var x = a
    if x > Double.pi { x -= 2 * Double.pi } else if x <= -Double.pi { x += 2 * Double.pi }
    if x > Double.pi || x <= -Double.pi {
        x = x - 2 * Double.pi * (x / (2 * Double.pi)).rounded()
    }
    return x
}
