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
            // Offer samples to the calibration at most every magneticCalibrationInterval: nearby samples
            // add no new directions.
            state.calibrationTime += dt
            if state.calibrationTime >= parameters.magneticCalibrationInterval {
                let elapsed = state.calibrationTime
                state.calibrationTime = 0
                state.calibrator.add(field)
                // The gyro-aided hard-iron estimate needs the attitude in E6, known once the inclination is.
                if parameters.estimatesHardIronFromRotation, state.accelerometerInitialized {
                    state.calibrator.add(field, attitude: state.inclinationQuaternion * state.gyroQuaternion,
                                         bias: state.bias, dt: elapsed,
                                         headingThreshold: parameters.hardIronHeadingUncertainty * (Double.pi / 180))
                }
            }
        }
        guard usesMagnetometer, state.accelerometerInitialized else { return }
        // A raw field stronger than the Earth's anywhere is dominated by a hard iron (a phone's 100–600 µT)
        // and says nothing about north. Once one has been seen, a gyro-aided estimate graded low (its
        // offset's uncertainty allows less than 5° of heading error) steers the heading: a heading 5° off
        // is better than the arbitrary one the gyro started from, and the estimate keeps converging.
        let strongest = AttitudeFilter.strongestEarthField * (1 + parameters.magneticNormThreshold)
        let rawNorm = field.length
        if !state.rawFieldImplausible, parameters.calibratesMagnetometer, rawNorm > strongest {
            state.rawFieldImplausible = true
        }
        let accuracy = state.calibrator.accuracy
        let calibrated = accuracy >= parameters.minimumAccuracyForCalibratedHeading
            || (state.rawFieldImplausible && accuracy >= .low && state.calibrator.usesRotationEstimate)
        let m = calibrated ? state.calibrator.calibrate(field) : field
        let norm = calibrated ? m.length : rawNorm
        guard norm > 1e-9 else { return }
        // Nor is the heading ever set or corrected from such a raw field: before a calibration it waits
        // (coasting on the gyro) and starts from the calibrated field; when the calibration in use falls
        // back below the grade above (a gyro-aided estimate's grade flickers while it converges), it coasts
        // until one is usable again rather than follow the raw field. Near a magnet an Earth-like raw
        // field (no hard iron) is skipped the same way: the disturbance check would reject it anyway.
        if !calibrated, parameters.calibratesMagnetometer, rawNorm > strongest {
            return
        }
        if magnetometerCoefficients.dt != dt { magnetometerCoefficients = coefficients(dt: dt) }
        let c = magnetometerCoefficients

        let q6 = state.inclinationQuaternion * state.gyroQuaternion
        let mE = q6.rotate(m)
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
            state.usesCalibratedField = calibrated
            state.headingModelOffset = state.calibrator.offset
            state.headingModelGains = state.calibrator.gains
            return
        }

        // A change of the field model (the raw field replaced by a calibrated one or back, or a calibration
        // whose values changed) does not move the heading by itself (bumpless transfer): the heading loop
        // closes the gap the change opened (the new model's heading at this sample minus the old one's) at
        // its normal rate, as it would follow a real, persistent change of the field's direction, and
        // ``AttitudeFilterState/headingModelShift`` keeps the part of the gap that changes of the model
        // made, so that the corrections closing it are not read as gyro drift by the vertical bias
        // estimate. The disturbance reference (norm and dip) is not carried over: it describes the Earth's
        // field, which a calibration must reproduce, so a calibrated field that departs from it is
        // rejected like a disturbance until it proves consistent during motion (or, for the gyro-aided
        // estimate, the reference becomes that estimate's own field below). That check is the evidence a
        // still-settling ellipsoid fit must pass before it steers the heading.
        let modelChanged = calibrated != state.usesCalibratedField
            || (calibrated && (state.calibrator.offset != state.headingModelOffset
                || state.calibrator.gains != state.headingModelGains))
        if modelChanged {
            let d = field - state.headingModelOffset
            let old = state.usesCalibratedField
                ? Vector3(d.x * state.headingModelGains.x, d.y * state.headingModelGains.y, d.z * state.headingModelGains.z)
                : field
            if old.lengthSquared > 1e-18 {
                let oldE = q6.rotate(old)
                let shift = wrapAngle(target + fastAtan2(oldE.y, oldE.x))
                if state.magnetometerInitialTime < parameters.magnetometerInitialTime {
                    // Still averaging the initial heading: carry the mean over into the new model.
                    state.headingOffset = wrapAngle(state.headingOffset + shift)
                } else {
                    state.headingModelShift = wrapAngle(state.headingModelShift + shift)
                }
            }
            // An ellipsoid fit measures the field strength it maps onto (the radius of the sphere). When the
            // disturbance reference is more than twice that strength or less than half of it, it cannot be
            // the Earth's field seen through a smaller hard iron: it was learned from a raw field dominated by
            // the offset (a phone's 100–600 µT against the Earth's ≈ 47 µT), and every correct calibrated
            // reading would count as disturbed. The reference then becomes the fit's own strength, with the
            // dip of this reading, unconfirmed (a new field consistent during motion replaces it after
            // ``AttitudeFilterParameters/magneticNewFieldFirstTime``). Otherwise the reference is kept and a
            // still-settling fit must reproduce it (carrying a fit's strength over whenever it departs by the
            // norm threshold let such fits steer the heading on BROAD).
            let strength = state.calibrator.fieldStrength
            // Likewise when the raw field the reference was learned from varied with orientation and
            // the calibration steadies it: that reference saw the Earth's field through an unknown
            // offset, and it would reject the field the calibration has just explained.
            var explained = false
            if calibrated, !state.usesCalibratedField, let raw = state.calibrator.normSpread(calibrated: false),
               let corrected = state.calibrator.normSpread(calibrated: true) {
                explained = corrected < 0.5 * raw
            }
            if calibrated, !state.calibrator.usesRotationEstimate, strength > 1e-9,
               explained || state.magneticReferenceNorm > 2 * strength || 2 * state.magneticReferenceNorm < strength {
                state.magneticReferenceNorm = strength
                state.magneticReferenceDip = dip
                state.magneticReferenceConfirmed = false
                state.magneticCandidateNorm = strength
                state.magneticCandidateDip = dip
                state.magneticCandidateTime = 0
            }
            state.usesCalibratedField = calibrated
            state.headingModelOffset = state.calibrator.offset
            state.headingModelGains = state.calibrator.gains
        }
        if calibrated, state.calibrator.usesRotationEstimate, !state.hasUsedRotationEstimate {
            state.hasUsedRotationEstimate = true
            state.rotationEstimateRestartsAtFirstUse = state.calibrator.rotation.restarts
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

        // While the heading uses the gyro-aided estimate, the reference is that estimate's
        // own field: its offset keeps converging (the component along the rotation axes, which the heading
        // does not need, slowly), which changes the calibrated field's norm and dip together with the
        // estimate's field, so the check compares the reading with the model rather than with a reference
        // fixed at the switch.
        if calibrated, state.calibrator.usesRotationEstimate,
           state.calibrator.rotation.restarts == state.rotationEstimateRestartsAtFirstUse {
            let h = state.calibrator.rotation.field
            let hn = h.length
            if hn > 1e-9 {
                state.magneticReferenceNorm = hn
                state.magneticReferenceDip = fastAsin(h.z / hn)
            }
        }
        let dipTh = parameters.magneticDipThreshold * (Double.pi / 180)
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
            // The candidate new field yields only to a reference that holds (undisturbed as long as
            // corrections need): readings that merely flicker within the thresholds of a wrong
            // reference (one learned in the first second while moving, its dip off by the
            // inclination's error then) must not erase the evidence for the field that keeps coming
            // back, or neither ever wins and the heading goes uncorrected.
            if state.magneticUndisturbedTime >= parameters.magneticMinimumUndisturbedTime {
                state.magneticCandidateNorm = state.magneticReferenceNorm
                state.magneticCandidateDip = state.magneticReferenceDip
                state.magneticCandidateTime = 0
            }
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
                let minRate = parameters.magneticNewFieldMinimumRate * (Double.pi / 180)
                if state.lastGyro.lengthSquared >= minRate * minRate {
                    state.magneticCandidateTime += dt
                }
                let needed = state.magneticReferenceConfirmed ? parameters.magneticNewFieldTime : parameters.magneticNewFieldFirstTime
                if state.magneticCandidateTime >= needed {
                    // The heading's gap to the new reference's field is a change of the field model,
                    // like a calibration switching in: closed at the loop's rate, and not read as gyro
                    // drift by the vertical bias estimate (a gap left by a wrong first reference read
                    // as drift put 2 °/s into that estimate and turned the heading 10° away again).
                    state.headingModelShift = wrapAngle(state.headingModelShift + wrapAngle(target - state.headingOffset))
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
        var step = 0.0
        var modelStep = 0.0
        if gain > 0 {
            step = gain * wrapAngle(target - state.headingOffset)
            state.headingOffset = wrapAngle(state.headingOffset + step)
            // The loop is linear in the gap, so of this step the part `gain × headingModelShift` closes the
            // gap that changes of the field model opened.
            modelStep = gain * state.headingModelShift
            state.headingModelShift -= modelStep
        }
        if parameters.estimatesBiasFromHeading {
            updateBiasFromHeading(q6, step: step - modelStep, fullGain: gain == c.magnetometerGain, dt: dt, c)
        }
    }

    /// Vertical bias estimation from heading corrections (9D only).
    ///
    /// The same reasoning as ``updateBiasInMotion(correction:rotation:dt:estimate:_:)`` about the vertical axis: a bias
    /// error `e` turns E6 about vertical at `(R e)_z`, which the first-order heading loop follows with
    /// its time constant, so `−Δψ/dt + LP₁[(R b̂)_z]` measures `LP₁[R]₂ · b`. Used only while the
    /// field has been undisturbed for at least one heading time constant, so that the loop runs at
    /// its nominal gain and the model holds.
    @inline(__always)
    mutating func updateBiasFromHeading(_ q: Quaternion, step: Double, fullGain: Bool, dt: Double,
                                        _ c: AttitudeFilterCoefficients) {
        let (w, x, y, z) = (q.w, q.x, q.y, q.z)
        let row2 = Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
        let k = c.magnetometerGain
        if !state.headingModelInitialized {
            state.headingRowLowPass = row2
            state.headingBiasLowPass = row2.dot(state.bias)
            state.headingModelInitialized = true
        }
        state.headingRowLowPass += (row2 - state.headingRowLowPass) * k
        state.headingBiasLowPass += (row2.dot(state.bias) - state.headingBiasLowPass) * k
        // Only a calibrated field (or one the caller declared calibrated by turning calibration off)
        // measures the bias: the heading of a field with uncorrected hard or soft iron is off by an
        // amount that changes with the device's attitude, so its corrections follow the motion.
        let calibrated = state.usesCalibratedField || !parameters.calibratesMagnetometer
        // While a change of the field model still accounts for more of the gap than a calibration may
        // leave in the heading (``AttitudeFilterParameters/hardIronHeadingUncertainty``), the loop's
        // corrections are dominated by the model, not by drift: a raw field with a large hard iron gives
        // that gap no meaning beyond the attitude it was taken at, so it is not used to measure the bias.
        let settled = abs(state.headingModelShift) <= parameters.hardIronHeadingUncertainty * (Double.pi / 180)
        let steady = fullGain && calibrated && settled
            && state.magneticUndisturbedTime >= parameters.magnetometerTimeConstant
            && state.accelerationInitialTime >= parameters.accelerometerTimeConstant
        guard steady, !state.isAtRest else {
            state.headingCorrectionSum = 0
            state.headingCorrectionTime = 0
            state.headingRateSquaredSum = 0
            return
        }
        state.headingCorrectionSum += step
        state.headingCorrectionTime += dt
        state.headingRateSquaredSum += state.lastGyro.lengthSquared * dt
        guard state.headingCorrectionTime >= parameters.biasMotionUpdateInterval else { return }
        let total = state.headingCorrectionTime
        let yv = -state.headingCorrectionSum / total + state.headingBiasLowPass
        let rate2 = state.headingRateSquaredSum / total
        state.headingCorrectionSum = 0
        state.headingCorrectionTime = 0
        state.headingRateSquaredSum = 0
        applyBiasProcessNoise()
        let h = state.headingRowLowPass
        let b = state.bias
        let p = state.biasCovariance
        let u = p * h
        let deg = Double.pi / 180
        let sigma = parameters.biasHeadingNoiseDensity * deg
        // The rotation-rate term of the in-motion update applies here too: gyro sensitivity errors turn
        // the heading in proportion to the rate (``AttitudeFilterParameters/biasMotionRateNoise``).
        let kr = parameters.biasMotionRateNoise
        let s = h.dot(u) + (sigma * sigma + kr * kr * rate2) / total
        guard s > 0, s.isFinite else { return }
        let gainVector = u * (1 / s)
        commitBias(b + gainVector * (yv - h.dot(b)), p - outer(gainVector, u))
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

extension AttitudeFilter {
    /// The strongest geomagnetic field at the Earth's surface, µT: the World Magnetic Model's total
    /// intensity ranges over about 22–67 µT (NOAA NCEI/BGS, WMM2025 report). A raw reading stronger than
    /// this (beyond ``AttitudeFilterParameters/magneticNormThreshold``) carries a hard iron or a nearby magnet.
    public static let strongestEarthField = 67.0
}
