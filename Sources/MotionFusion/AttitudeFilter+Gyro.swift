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
        if gyroCoefficients.dt != dt { gyroCoefficients = coefficients(dt: dt) }
        state.lastGyro = rate

        // Rest detection: deviation from a low-pass value, and the low-pass magnitude itself.
        let c = gyroCoefficients
        if !state.restGyroInitialized {
            state.restGyroLowPass = rate
            state.restGyroInitialized = true
        }
        let lp = state.restGyroLowPass + (rate - state.restGyroLowPass) * c.restGain
        state.restGyroLowPass = lp
        let deg = Double.pi / 180
        let th = parameters.restGyroThreshold * deg
        let thMag = parameters.restGyroMagnitudeThreshold * deg
        // A device at rest reads its bias. Before the bias has been measured at rest it may be anything up
        // to biasClip per axis (a phone's raw gyroscope: 4–6 °/s); afterwards a steady rate further than
        // restGyroMagnitudeThreshold from the estimate is a slow rotation.
        let steady: Bool
        if state.biasObservedAtRest {
            steady = (lp - state.bias).lengthSquared < thMag * thMag
        } else {
            let clip = parameters.biasClip * deg
            steady = lp.lengthSquared < thMag * thMag || (abs(lp.x) <= clip && abs(lp.y) <= clip && abs(lp.z) <= clip)
        }
        state.gyroQuiet = (rate - lp).lengthSquared < th * th && steady

        // Strapdown integration of the bias-corrected rate: q ← q ⊗ exp((ω − b) dt).
        let w = rate - state.bias
        let q = state.gyroQuaternion * smallRotation(w * dt)
        state.gyroQuaternion = renormalized(q)

        // Bias uncertainty grows (random walk); applied lazily before the next bias update.
        state.biasProcessTime += dt
    }

    /// Adds the process noise accumulated since the last bias update, bounded by the initial uncertainty.
    @inline(__always)
    mutating func applyBiasProcessNoise() {
        let q = parameters.biasDriftSigma * Double.pi / 180
        let add = q * q * state.biasProcessTime / max(parameters.biasForgettingTime, 1e-9)
        state.biasProcessTime = 0
        var p = state.biasCovariance
        p.r0.x += add
        p.r1.y += add
        p.r2.z += add
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

/// The quaternion exponential `exp(v/2)` of a rotation vector `v` (radians): a Taylor series for the
/// small per-sample rotations (error below 1e-15 for |v| < 0.05 rad), the exact formula beyond.
@inline(__always)
func smallRotation(_ v: Vector3) -> Quaternion {
    let a2 = v.lengthSquared
    if a2 < 0.0025 {
        // cos(a/2) = 1 − a²/8 + a⁴/384 − a⁶/46080; sin(a/2)/a = 1/2 − a²/48 + a⁴/3840 − a⁶/645120,
        // in Horner form with the reciprocals folded at compile time: no division per sample.
        let w = 1 + a2 * (-1.0 / 8 + a2 * (1.0 / 384 - a2 * (1.0 / 46080)))
        let k = 0.5 + a2 * (-1.0 / 48 + a2 * (1.0 / 3840 - a2 * (1.0 / 645120)))
        return Quaternion(w: w, x: v.x * k, y: v.y * k, z: v.z * k)
    }
    return Quaternion(rotationVector: v)
}

/// Restores unit length after a product of unit quaternions. Near unit length one Newton step for
/// `1/√n²`, `k = (3 − n²)/2`, is exact to rounding and avoids a square root and a division; otherwise
/// a full normalisation.
@inline(__always)
func renormalized(_ q: Quaternion) -> Quaternion {
    let n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z
    if abs(n2 - 1) < 1e-6 {
        let k = (3 - n2) * 0.5
        return Quaternion(w: q.w * k, x: q.x * k, y: q.y * k, z: q.z * k)
    }
    return q.normalized
}
