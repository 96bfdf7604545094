/// Online hard-iron estimate of a magnetometer from the rotations the device actually makes, aided by
/// the gyroscope.
///
/// With a constant external field and a hard-iron offset `o` (device frame, µT), the reading is
/// `m = Rᵀ h + o + noise`, where `R` is the attitude device → E6 (the filter's inclination-corrected,
/// gyro-integrated frame: z up, heading arbitrary) and `h` the external field in E6. Given the attitude
/// the model is linear in `(o, h)`; differentiated it is `ṁ = −ω × (m − o)`, the angular-rate-aided
/// field-sensor bias model of G. Troni and L. L. Whitcomb, "Adaptive estimation of measurement bias in
/// three-dimensional field sensors with angular rate sensors: theory and comparative experimental
/// evaluation", RSS 2013 (see also M. Kok and T. B. Schön, "Magnetometer calibration using inertial
/// sensors", IEEE Sensors J. 16(14), 2016). Using the integrated attitude instead of the derivative avoids
/// differentiating noise. A rotation about an axis `a` shows the components of `o` perpendicular to `a`
/// only, so unlike an ellipsoid fit this needs no coverage of the sphere: a phone turned about the world's
/// vertical (a hand-held heading wander, walking along a curve) shows exactly the components of `o` that
/// are horizontal at its tilt, which are the ones the heading needs.
///
/// E6 turns about its vertical at the rate of the filter's bias error `e = b − b̂` about that axis
/// (unobservable without a heading reference): `ḣ = δ ẑ × h` with `δ = (R e)_z = d − (R b̂)_z`. The state
/// holds `d = (R b)_z` (rad/s), the true bias's vertical part, which stays put while the filter's estimate
/// `b̂` moves, so known changes of `b̂` enter exactly. State `(o, h, d)`, seven components, estimated by an
/// extended Kalman filter with the three field components as scalar measurements. `o` is constant; `h`
/// and `d` are random walks with the densities ``fieldRandomWalk`` and ``driftRandomWalk``.
///
/// The covariance says which components of `o` are known; ``headingUncertainty(attitude:)`` projects it
/// onto the plane that is horizontal at the current attitude. Innovations beyond ``gate`` standard
/// deviations (a magnetic disturbance, a magnet moved) are not used; after ``maximumRejectedUpdates`` in a
/// row the model no longer fits (the offset changed) and the estimate starts again.
///
/// O(1) per update, no heap allocation. A value; not thread-safe to mutate concurrently.
public struct RotationHardIronEstimator: Sendable {
    /// Magnetometer white noise, µT rms per axis. Default 0.5 µT (AK09916-class phones ≈ 0.4 µT).
    public var measurementNoise: Double = 0.5
    /// Random walk of the external field in E6 (unmodelled slow changes of the field or of the frame),
    /// µT/√s. Default 0.02 µT/√s.
    public var fieldRandomWalk: Double = 0.02
    /// Random walk of the bias's vertical component (its change with the device's tilt), rad/s/√s.
    /// Default 1e-4.
    public var driftRandomWalk: Double = 1e-4
    /// Prior standard deviation of each component of the offset and of the field, µT. Default 100 µT.
    public var priorSigma: Double = 100
    /// Prior standard deviation of the bias's vertical component about the filter's estimate, rad/s.
    /// Default 0.01 rad/s (≈ 0.57 °/s, the filter's bias prior).
    public var driftPriorSigma: Double = 0.01
    /// Innovation gate, standard deviations. Default 5.
    public var gate: Double = 5
    /// Consecutive gated updates after which the estimate restarts. Default 100 (2 s at 50 Hz).
    public var maximumRejectedUpdates: Int = 100
    /// Updates required before the estimate is graded above ``MagneticCalibrationAccuracy/uncalibrated``.
    /// Default 100.
    public var minimumUpdates: Int = 100
    /// Largest mean normalised innovation squared (per component; 1 when the model and
    /// ``measurementNoise`` fit) for a ``MagneticCalibrationAccuracy/medium`` grade, dimensionless: the
    /// readings must follow the constant-field model within about the magnetometer's noise (1.5: 0.61 µT
    /// rms per axis at the default noise). A field that changes along the device's path (indoor
    /// gradients), a moving magnet or readings out of step with the gyro break the model, and the
    /// estimate is then not used. A medium grade is kept until the ratio exceeds twice this. Default 1.5.
    public var maximumInnovationRatio: Double = 1.5

    /// Hard-iron offset, µT, device frame.
    public var offset: Vector3 { Vector3(x[0], x[1], x[2]) }
    /// The external field in E6, µT.
    public var field: Vector3 { Vector3(x[3], x[4], x[5]) }
    /// The gyro bias's component along the world's vertical, as far as the frame's drift shows it, rad/s.
    public var verticalBias: Double { x[6] }
    /// Whether `offset` (µT, device frame; another estimate of the same hard iron) lies within 3
    /// standard deviations of ``offset``, counting this estimate's covariance and `tolerance` (µT rms
    /// per axis) for the other's error.
    public func agrees(with other: Vector3, tolerance: Double) -> Bool {
        let d = other - offset
        var c = offsetCovariance
        let t2 = tolerance * tolerance
        c.r0.x += t2
        c.r1.y += t2
        c.r2.z += t2
        guard d.isFinite, let inverse = c.inverse else { return true }
        return d.dot(inverse * d) <= 9
    }
    /// Covariance of ``offset``, µT².
    public var offsetCovariance: Matrix3 {
        Matrix3(rows: Vector3(p[0], p[1], p[2]), Vector3(p[7], p[8], p[9]), Vector3(p[14], p[15], p[16]))
    }
    /// Number of updates used since the last (re)start.
    public private(set) var updates = 0
    /// Number of restarts after the model stopped fitting (``maximumRejectedUpdates`` gated in a row).
    public private(set) var restarts = 0
    /// Mean normalised innovation squared per component over about the last 200 updates (1 when the
    /// model and noise fit), dimensionless.
    public private(set) var innovationRatio: Double = 1
    /// The grade: ``MagneticCalibrationAccuracy/low`` once the heading error the offset's uncertainty
    /// allows is below 5°, ``MagneticCalibrationAccuracy/medium`` once it was below the threshold given
    /// to ``update(_:attitude:bias:dt:headingThreshold:)`` with innovations within
    /// ``maximumInnovationRatio`` (kept until a restart or until the innovation ratio exceeds twice that).
    /// Never ``MagneticCalibrationAccuracy/high``: soft iron is not modelled.
    public private(set) var accuracy: MagneticCalibrationAccuracy = .uncalibrated

    private var x: InlineArray<7, Double> = .init(repeating: 0)
    private var p: InlineArray<49, Double> = .init(repeating: 0)
    private var started = false
    private var rejected = 0

    /// Creates an empty estimator.
    public init() {}

    /// Reverses the direction of time (for a backward pass over a recording with the gyro negated): the
    /// bias, and with it the frame's drift, changes sign.
    public mutating func reverseTimeDirection() {
        x[6] = -x[6]
        for i in 0..<6 {
            p[i * 7 + 6] = -p[i * 7 + 6]
            p[6 * 7 + i] = -p[6 * 7 + i]
        }
    }

    /// The heading uncertainty that the offset's covariance allows at `attitude` (device → E6), radians:
    /// the offset's standard deviation in the plane horizontal at that attitude over the horizontal field.
    public func headingUncertainty(attitude: Quaternion) -> Double {
        let r = Matrix3(attitude)
        let po = offsetCovariance
        let v = r.r0.dot(po * r.r0) + r.r1.dot(po * r.r1)
        let hh = x[3] * x[3] + x[4] * x[4]
        guard hh > 1e-6, v.isFinite, v >= 0 else { return .infinity }
        return (v / hh).squareRoot()
    }

    /// Uses one raw field sample.
    /// - Parameters:
    ///   - m: raw magnetic field, µT, device frame (finite).
    ///   - attitude: the filter's attitude device → E6 at the sample.
    ///   - bias: the filter's gyro bias estimate, rad/s, device frame.
    ///   - dt: time since the previous update, seconds.
    ///   - headingThreshold: heading uncertainty below which the estimate is graded medium, radians.
    public mutating func update(_ m: Vector3, attitude: Quaternion, bias: Vector3, dt: Double,
                                headingThreshold: Double) {
        let r = Matrix3(attitude)
        guard m.isFinite, bias.isFinite, r.r0.isFinite, r.r1.isFinite, r.r2.isFinite else { return }
        let known = r.r2.dot(bias)
        if !started {
            start(m, r, known)
            return
        }
        predict(max(0, min(dt, 1)), known)
        let noise = measurementNoise * measurementNoise
        let gate2 = gate * gate
        // Predicted reading: o + Rᵀ h. The three components are updated one after the other (exact for
        // independent noise); a component outside the gate is not used.
        var nis = 0.0
        var used = 0
        let reading: InlineArray<3, Double> = [m.x, m.y, m.z]
        let columns: InlineArray<3, Vector3> = [Vector3(r.r0.x, r.r1.x, r.r2.x), Vector3(r.r0.y, r.r1.y, r.r2.y),
                                                Vector3(r.r0.z, r.r1.z, r.r2.z)]
        for i in 0..<3 {
            let col = columns[i] // column i of R: ∂(Rᵀh)_i/∂h
            let predicted = x[i] + col.x * x[3] + col.y * x[4] + col.z * x[5]
            let nu = reading[i] - predicted
            var ph: InlineArray<7, Double> = .init(repeating: 0)
            for k in 0..<7 {
                ph[k] = p[k * 7 + i] + col.x * p[k * 7 + 3] + col.y * p[k * 7 + 4] + col.z * p[k * 7 + 5]
            }
            let s = ph[i] + col.x * ph[3] + col.y * ph[4] + col.z * ph[5] + noise
            guard s > 0, s.isFinite else { continue }
            let ratio = nu * nu / s
            nis += ratio
            if ratio > gate2 { continue }
            used += 1
            let inv = 1 / s
            for k in 0..<7 { x[k] += ph[k] * inv * nu }
            for a in 0..<7 {
                let ka = ph[a] * inv
                for b in 0..<7 { p[a * 7 + b] -= ka * ph[b] }
            }
        }
        if used == 0 {
            rejected += 1
            if rejected >= maximumRejectedUpdates {
                started = false
                restarts += 1
            }
            return
        }
        rejected = 0
        updates += 1
        innovationRatio += 0.005 * (nis / 3 - innovationRatio)
        grade(r, headingThreshold)
    }

    private mutating func start(_ m: Vector3, _ r: Matrix3, _ known: Double) {
        // h = R (m − o): its prior follows that of o, correlated with it.
        let s2 = priorSigma * priorSigma
        let h = r * m
        x = [0, 0, 0, h.x, h.y, h.z, known]
        for i in 0..<49 { p[i] = 0 }
        let noise = measurementNoise * measurementNoise
        let entries: InlineArray<9, Double> = [r.r0.x, r.r0.y, r.r0.z, r.r1.x, r.r1.y, r.r1.z, r.r2.x, r.r2.y, r.r2.z]
        for i in 0..<3 {
            p[i * 7 + i] = s2
            p[(3 + i) * 7 + 3 + i] = s2 + noise
            for j in 0..<3 {
                // Cov(o_i, h_j) = −σ² R_ji.
                p[i * 7 + 3 + j] = -s2 * entries[j * 3 + i]
                p[(3 + j) * 7 + i] = -s2 * entries[j * 3 + i]
            }
        }
        p[48] = driftPriorSigma * driftPriorSigma
        started = true
        rejected = 0
        updates = 0
        innovationRatio = 1
        accuracy = .uncalibrated
    }

    /// h ← Rz(δ dt) h with δ = d − `known`; P ← F P Fᵀ + Q with F = ∂(h, d)/∂(h, d) (identity elsewhere).
    private mutating func predict(_ dt: Double, _ known: Double) {
        guard dt > 0 else { return }
        let a = (x[6] - known) * dt
        let h0 = x[3], h1 = x[4]
        // F differs from I in rows 3 and 4 only: row3 = e3 − a e4 − h1 dt e6, row4 = e4 + a e3 + h0 dt e6.
        let f34 = -a, f36 = -h1 * dt, f43 = a, f46 = h0 * dt
        for c in 0..<7 { // F P: rows.
            let p3 = p[21 + c], p4 = p[28 + c], p6 = p[42 + c]
            p[21 + c] = p3 + f34 * p4 + f36 * p6
            p[28 + c] = p4 + f43 * p3 + f46 * p6
        }
        for rIndex in 0..<7 { // (F P) Fᵀ: columns.
            let p3 = p[rIndex * 7 + 3], p4 = p[rIndex * 7 + 4], p6 = p[rIndex * 7 + 6]
            p[rIndex * 7 + 3] = p3 + f34 * p4 + f36 * p6
            p[rIndex * 7 + 4] = p4 + f43 * p3 + f46 * p6
        }
        let c = 1 - a * a / 2
        x[3] = c * h0 - a * h1
        x[4] = a * h0 + c * h1
        let qh = fieldRandomWalk * fieldRandomWalk * dt
        p[24] += qh
        p[32] += qh
        p[40] += qh
        p[48] += driftRandomWalk * driftRandomWalk * dt
    }

    private mutating func grade(_ r: Matrix3, _ threshold: Double) {
        guard updates >= minimumUpdates else {
            accuracy = .uncalibrated
            return
        }
        if innovationRatio > 2 * maximumInnovationRatio {
            accuracy = .uncalibrated
            return
        }
        if accuracy == .medium { return }
        let po = offsetCovariance
        let v = r.r0.dot(po * r.r0) + r.r1.dot(po * r.r1)
        let hh = x[3] * x[3] + x[4] * x[4]
        guard hh > 1e-6, v.isFinite, v >= 0 else { return }
        let sigma2 = v / hh
        if sigma2 < threshold * threshold, innovationRatio <= maximumInnovationRatio {
            accuracy = .medium
        } else if sigma2 < 0.0076 { // (5°)²
            accuracy = .low
        } else {
            accuracy = .uncalibrated
        }
    }
}
