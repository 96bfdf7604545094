/// Fixed-interval smoother of the heading from the magnetometer, used by ``AttitudeSmoother`` in 9D.
///
/// The input attitudes are *levelled*: device → a z-up frame whose heading follows the integrated,
/// bias-corrected gyroscope, so that it differs from magnetic north by an offset `δ` that changes only
/// through the gyroscope's errors. Each magnetometer sample rotated into that frame measures the offset:
/// `z = −atan2(m_y, m_x)` turns its horizontal part onto north. The offset is estimated from all samples,
/// past and future, by a Kalman filter and Rauch–Tung–Striebel smoother (H. E. Rauch, F. Tung and
/// C. T. Striebel, "Maximum likelihood estimates of linear dynamic systems", AIAA Journal 3(8), 1965).
///
/// **Model.** The residual gyro bias is already removed (the forward and backward passes' combined
/// bias, measured directly wherever the device rests), so the offset drifts only while the device turns:
/// - `δₖ = δₖ₋₁ + s·Δψₖ + wₖ`: `Δψₖ` is the turn about vertical over the step, `s` the gyroscope's
///   scale-factor error (a constant with a prior of ``scaleFactorSigma``), and `wₖ` a random walk whose
///   variance grows with the angle turned, `|ω| Δt / τ²` relative to the measurement noise density, for
///   the remaining turn-driven errors (axis misalignment, nonlinearity). `τ` is
///   ``AttitudeFilterParameters/smootherHeadingTimeConstant``: the time over which gyroscope and
///   magnetometer weigh equally while the device turns at 1 rad/s; at rest the gyroscope holds the
///   heading.
/// - `zₖ = δₖ + vₖ`, white noise of density `r` in motion and ``AttitudeFilterParameters/smootherHeadingRestVarianceRatio``
///   `· r` at rest: a resting device has no motion-dependent heading errors (inclination error under
///   linear acceleration, sensor timing, orientation-dependent calibration residuals), so rests anchor the
///   heading, as they anchor gravity in ``GravitySmoother``.
///
/// **Disturbances.** The field's norm and dip angle are compared with references taken robustly from the
/// whole recording (their medians). A sample beyond the causal filter's thresholds
/// (``AttitudeFilterParameters/magneticNormThreshold``, ``AttitudeFilterParameters/magneticDipThreshold``)
/// is not used. Within them, the deviation `d` of the field from the reference in the plane of norm and
/// dip suggests a heading error of about `|d| / |m_h|` (`m_h` the horizontal field), and the sample's
/// variance is multiplied by `1 + (|d| / |m_h| / σ_d)²`, `σ_d` =
/// ``AttitudeFilterParameters/smootherHeadingDisturbanceAngle``: a robust, Huber-like down-weighting in
/// the spirit of the disturbance rejection of D. Laidig and T. Seel, "VQF", Information Fusion 91, 2023.
///
/// O(n) time (the medians by selection, O(n) expected); allocates its arrays once per recording.
enum HeadingSmoother {
    /// Prior standard deviation of the gyroscope's scale-factor error, dimensionless: 1 %, the order of
    /// the scale-factor tolerance of MEMS gyroscopes' data sheets.
    static let scaleFactorSigma = 0.01

    /// The heading offset `δ` (radians, about vertical, levelled frame → magnetic north) for each sample,
    /// or `nil` when no sample could be used.
    /// - Parameters:
    ///   - levelled: device → levelled frame (z up), per sample.
    ///   - field: magnetic field, µT, device frame, per sample.
    ///   - rate: bias-corrected angular rate, rad/s, device frame.
    ///   - dt: time since the previous sample, seconds (`dt[0]` is unused).
    ///   - rest: whether the device rests at each sample.
    ///   - parameters: the heading smoother's parameters and the disturbance thresholds.
    static func offsets(levelled: [Quaternion], field: [Vector3], rate: [Vector3], dt: [Double], rest: [Bool],
                        parameters: AttitudeFilterParameters) -> [Double]? {
        let n = min(levelled.count, field.count, dt.count, rate.count, rest.count)
        let tau = parameters.smootherHeadingTimeConstant
        guard n > 1, tau > 0, tau.isFinite else { return nil }
        // The measurements and the field's norm and dip in the levelled frame.
        var measured = [Double](repeating: .nan, count: n)
        var norm = [Double](repeating: .nan, count: n)
        var dip = [Double](repeating: .nan, count: n)
        var valid = 0
        for i in 0..<n {
            let m = levelled[i].rotate(field[i])
            let len = m.length
            let horizontal = (m.x * m.x + m.y * m.y).squareRoot()
            // A field with no horizontal part (at a magnetic pole, or a zero reading) says nothing.
            guard len.isFinite, len > 1e-9, horizontal > 1e-3 * len else { continue }
            measured[i] = -_atan2(m.y, m.x)
            norm[i] = len
            dip[i] = _asin(max(-1, min(1, m.z / len)))
            valid += 1
        }
        guard valid > 0 else { return nil }
        var scratch = [Double]()
        scratch.reserveCapacity(valid)
        let referenceNorm = median(of: norm, scratch: &scratch)
        let referenceDip = median(of: dip, scratch: &scratch)
        let normThreshold = parameters.magneticNormThreshold * referenceNorm
        let dipThreshold = parameters.magneticDipThreshold * (Double.pi / 180)
        let disturbance = parameters.smootherHeadingDisturbanceAngle * (Double.pi / 180)
        let restRatio = parameters.smootherHeadingRestVarianceRatio
        let restVariance = restRatio.isFinite ? min(max(restRatio, 1e-12), 1) : 1
        // Measurement noise density in motion: only ratios matter.
        let r = 1.0
        let turnNoise = r / (tau * tau)

        // Forward Kalman filter of x = (δ, s), keeping the predicted and filtered states for the smoother.
        var predicted = [Double](repeating: 0, count: n), predictedScale = [Double](repeating: 0, count: n)
        var predictedCovariance = [Symmetric2](repeating: .zero, count: n)
        var filtered = [Double](repeating: 0, count: n), filteredScale = [Double](repeating: 0, count: n)
        var filteredCovariance = [Symmetric2](repeating: .zero, count: n)
        var turn = [Double](repeating: 0, count: n)
        // A diffuse offset (the first accepted sample sets it), the scale factor within its prior.
        var x = 0.0, s = 0.0
        var p = Symmetric2(a: 1e8, b: 0, c: scaleFactorSigma * scaleFactorSigma)
        var started = false
        var used = 0
        for i in 0..<n {
            let h = i > 0 && dt[i].isFinite ? max(dt[i], 0) : 0
            if h > 0 {
                // F = [[1, Δψ], [0, 1]]; Q = diag(|ω| h / τ², 0).
                let w = levelled[i].rotate(rate[i]).z * h
                let angle = rate[i].length * h
                turn[i] = w
                x += s * w
                p = Symmetric2(a: p.a + 2 * w * p.b + w * w * p.c + turnNoise * (angle.isFinite ? angle : 0),
                               b: p.b + w * p.c, c: p.c)
            }
            predicted[i] = x
            predictedScale[i] = s
            predictedCovariance[i] = p
            let z = measured[i]
            let span = i > 0 ? h : (dt[1].isFinite ? max(dt[1], 0) : 0)
            let dn = norm[i] - referenceNorm, dd = dip[i] - referenceDip
            if z.isFinite, span > 0, abs(dn) <= normThreshold, abs(dd) <= dipThreshold {
                if !started {
                    x = z
                    started = true
                }
                var variance = r / span
                if rest[i] { variance *= restVariance }
                if disturbance > 0 {
                    // The heading error the field's deviation suggests, relative to σ_d.
                    let horizontal = norm[i] * _cos(dip[i])
                    let along = dd * norm[i]
                    let e2 = (dn * dn + along * along) / (horizontal * horizontal * disturbance * disturbance)
                    variance *= 1 + e2
                }
                let innovation = wrapAngle(z - x)
                let sum = p.a + variance
                if sum > 0, sum.isFinite {
                    let ka = p.a / sum, kb = p.b / sum
                    x += ka * innovation
                    s += kb * innovation
                    p = Symmetric2(a: p.a - ka * p.a, b: p.b - ka * p.b, c: p.c - kb * p.b)
                    used += 1
                }
            }
            filtered[i] = x
            filteredScale[i] = s
            filteredCovariance[i] = p
        }
        guard used > 0 else { return nil }
        // Rauch–Tung–Striebel backward pass: x̂ₖ = xₖ⁺ + Cₖ (x̂ₖ₊₁ − xₖ₊₁⁻), Cₖ = Pₖ⁺ Fₖ₊₁ᵀ (Pₖ₊₁⁻)⁻¹.
        var out = filtered
        var sx = filtered[n - 1], ss = filteredScale[n - 1]
        for i in stride(from: n - 2, through: 0, by: -1) {
            let w = turn[i + 1]
            let pf = filteredCovariance[i]
            // Pₖ⁺ Fᵀ with F = [[1, w], [0, 1]].
            let m00 = pf.a + w * pf.b, m01 = pf.b
            let m10 = pf.b + w * pf.c, m11 = pf.c
            let pp = predictedCovariance[i + 1]
            let det = pp.a * pp.c - pp.b * pp.b
            guard det > 0, det.isFinite else {
                sx = filtered[i]
                ss = filteredScale[i]
                out[i] = sx
                continue
            }
            let i00 = pp.c / det, i01 = -pp.b / det, i11 = pp.a / det
            let c00 = m00 * i00 + m01 * i01, c01 = m00 * i01 + m01 * i11
            let c10 = m10 * i00 + m11 * i01, c11 = m10 * i01 + m11 * i11
            let dx = sx - predicted[i + 1], ds = ss - predictedScale[i + 1]
            sx = filtered[i] + c00 * dx + c01 * ds
            ss = filteredScale[i] + c10 * dx + c11 * ds
            out[i] = sx
        }
        return out
    }

    /// Whether a magnetometer calibration makes the field's norm clearly steadier than the raw field's:
    /// the relative median absolute deviation of the norm (F. R. Hampel, "The influence curve and its role
    /// in robust estimation", JASA 69(346), 1974) at most half the raw field's. The purpose of a hard- and
    /// soft-iron calibration is a constant norm. A sensor with real hard iron (a phone: offsets of tens of
    /// µT) gains far more than half; a sensor calibrated already keeps only the field's inhomogeneity and
    /// noise (on BROAD 1–2 % of the norm), and a refit from the last stretch of a recording would then add
    /// heading errors of its own, so it is not applied.
    static func calibrationSteadiesNorm(raw: [Vector3], calibrated: [Vector3]) -> Bool {
        var scratch = [Double]()
        scratch.reserveCapacity(raw.count)
        let before = relativeDeviation(raw.map(\.length), scratch: &scratch)
        let after = relativeDeviation(calibrated.map(\.length), scratch: &scratch)
        return after < before / 2
    }

    /// Median absolute deviation of `values` divided by their median (∞ when undefined).
    static func relativeDeviation(_ values: [Double], scratch: inout [Double]) -> Double {
        let m = median(of: values, scratch: &scratch)
        guard m.isFinite, m > 0 else { return .infinity }
        let deviation = median(of: values.map { abs($0 - m) }, scratch: &scratch)
        return deviation.isFinite ? deviation / m : .infinity
    }

    /// The median of the finite values of `values` (the upper one for an even count), using `scratch` as
    /// working storage: Hoare's selection, O(n) expected (C. A. R. Hoare, "Algorithm 65: Find", CACM
    /// 4(7), 1961). NaN when no value is finite.
    static func median(of values: [Double], scratch: inout [Double]) -> Double {
        scratch.removeAll(keepingCapacity: true)
        for v in values where v.isFinite { scratch.append(v) }
        guard !scratch.isEmpty else { return .nan }
        let k = scratch.count / 2
        var lo = 0, hi = scratch.count - 1
        while lo < hi {
            let pivot = scratch[lo + (hi - lo) / 2]
            var i = lo, j = hi
            while i <= j {
                while scratch[i] < pivot { i += 1 }
                while scratch[j] > pivot { j -= 1 }
                if i <= j {
                    scratch.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j { hi = j } else if k >= i { lo = i } else { break }
        }
        return scratch[k]
    }
}

/// A symmetric 2×2 matrix `[[a, b], [b, c]]`.
struct Symmetric2 {
    var a: Double
    var b: Double
    var c: Double
    static let zero = Symmetric2(a: 0, b: 0, c: 0)
}
