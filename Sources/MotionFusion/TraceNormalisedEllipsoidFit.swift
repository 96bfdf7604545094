/// Online axis-aligned ellipsoid fit of a raw magnetometer that stays regular wherever the ellipsoid
/// lies: the fit ``MagneticCalibrator`` uses when the hard iron is larger than the field (a phone's or a
/// cheap IMU's uncalibrated magnetometer: 100–600 µT against the Earth's ≈ 47 µT).
///
/// Model: the raw field lies on the quadric `A x² + B y² + C z² + D x + E y + F z + G = 0`, normalised by
/// its trace, `A + B + C = 3`, one of the invariant normalisations of F. L. Bookstein, "Fitting conic
/// sections to scattered data", Computer Graphics and Image Processing 9(1), 1979 (as
/// ``MagnetometerEllipsoidFit`` does in batch). With `A = 1 + a`, `B = 1 + b`, `C = 1 − a − b` the fit is
/// the linear regression `−|s|² = a (x² − z²) + b (y² − z²) + D x + E y + F z + G` in six unknowns, solved
/// by recursive least squares with exponential forgetting (Ljung & Söderström, *Theory and Practice of
/// Recursive Identification*, 1983). The common normalisation `G = −1` fails when the ellipsoid does not
/// enclose the origin and is singular when it passes near it; the trace never vanishes for an ellipsoid.
/// The coordinates `s = (m − m₀) / scale` are centred on the first sample `m₀` (a point of the ellipsoid)
/// and scaled by ``scale``, the order of the Earth's field, so the regression is well conditioned
/// whatever the hard iron. The prior is the sphere about the raw origin through `m₀` (no hard or soft
/// iron), so a fit short of data stays near the identity.
///
/// A sample enters the fit only when its direction seen from the fitted centre differs from the
/// previously accepted one by more than the calibrator's minimum angle step (before there is a fit, or
/// while the fit's field strength exceeds ``largestFieldStrength``: when it lies the chord of that angle
/// on a sphere of radius ``scale`` from the previous one): with a hard iron of hundreds of µT the raw
/// field's own direction barely changes however the device turns. A fit with an impossible field
/// strength has its centre far from the data, from where every sample looks alike; judged by directions
/// it would never accept another sample and never correct itself.
///
/// No heap allocation. Values only.
public struct TraceNormalisedEllipsoidFit: Sendable {
    /// Coordinate scale, µT: 50 µT, the order of the Earth's field (25–65 µT at the surface).
    public let scale: Double = 50
    /// Largest field strength a fit may have and still choose its samples by their direction from its
    /// centre, µT: 100 µT, one and a half times the strongest geomagnetic field (67 µT, WMM2025), room
    /// for soft iron. A larger radius is a wrong fit, not the Earth's field.
    public static let largestFieldStrength: Double = 100
    /// Fitted hard-iron offset (the ellipsoid's centre), µT.
    public private(set) var offset: Vector3 = .zero
    /// Fitted diagonal soft-iron gains, dimensionless.
    public private(set) var gains: Vector3 = Vector3(1, 1, 1)
    /// Radius of the corrected sphere, µT.
    public private(set) var fieldStrength: Double = 0
    /// Grade of the fit (see ``MagneticCalibrator``: same thresholds as its first fit).
    public private(set) var accuracy: MagneticCalibrationAccuracy = .uncalibrated
    /// Number of samples accepted into the fit.
    public private(set) var acceptedSamples: Int = 0

    private var origin: Vector3 = .zero
    private var started = false
    private var theta: InlineArray<6, Double> = .init(repeating: 0)
    private var p: InlineArray<36, Double> = .init(repeating: 0)
    private var lastAccepted: Vector3 = .zero
    private var cosStep: (step: Double, cos: Double) = (0, 1)
    private var octants: UInt8 = 0
    private var residual: Double = 1

    /// Creates an empty fit.
    public init() {}

    /// Offers one raw sample, µT. Non-finite samples are ignored.
    /// - Parameters:
    ///   - m: raw field, µT, device frame.
    ///   - minimumAngleStep: smallest angle between accepted samples, radians.
    ///   - forgettingFactor: forgetting factor per accepted sample, in (0, 1].
    public mutating func add(_ m: Vector3, minimumAngleStep: Double, forgettingFactor: Double) {
        guard m.isFinite, forgettingFactor > 0 else { return }
        if !started {
            started = true
            origin = m
            for i in 0..<36 { p[i] = 0 }
            for i in 0..<6 { p[i * 7] = 100 }
            // The sphere about the raw origin through m₀: |s + m₀/scale|² = |m₀/scale|².
            let c = m / scale
            theta = [0, 0, 2 * c.x, 2 * c.y, 2 * c.z, 0]
        }
        if acceptedSamples > 0 {
            if accuracy >= .low, fieldStrength <= Self.largestFieldStrength {
                // Accept when d·e ≤ cos(step)·|d|·|e|, directions from the fitted centre.
                let d = m - offset, e = lastAccepted - offset
                if cosStep.step != minimumAngleStep { cosStep = (minimumAngleStep, _cos(minimumAngleStep)) }
                if d.dot(e) > cosStep.cos * (d.lengthSquared * e.lengthSquared).squareRoot() { return }
            } else if (m - lastAccepted).lengthSquared < (minimumAngleStep * scale) * (minimumAngleStep * scale) {
                // No fit, or one no Earth field can give: the chord of the step on a sphere of radius
                // `scale`, between the raw samples. Directions seen from such a fit's centre, far from
                // the data, barely change however the device turns, so that fit would never see another
                // sample and would never correct itself.
                return
            }
        }
        lastAccepted = m
        acceptedSamples += 1
        let s = (m - origin) / scale
        let phi: InlineArray<6, Double> = [s.x * s.x - s.z * s.z, s.y * s.y - s.z * s.z, s.x, s.y, s.z, 1]
        let target = -s.lengthSquared
        // RLS update: k = P φ / (λ + φᵀ P φ); θ += k (y − φᵀθ); P = (P − k φᵀ P) / λ.
        var pphi: InlineArray<6, Double> = .init(repeating: 0)
        var denom = forgettingFactor
        var prediction = 0.0
        for i in 0..<6 {
            var acc = 0.0
            for j in 0..<6 { acc += p[i * 6 + j] * phi[j] }
            pphi[i] = acc
            denom += phi[i] * acc
            prediction += phi[i] * theta[i]
        }
        guard denom.isFinite, denom > 1e-12 else { return }
        let err = target - prediction
        for i in 0..<6 { theta[i] += pphi[i] / denom * err }
        let inv = 1 / forgettingFactor
        for i in 0..<6 {
            for j in 0..<6 {
                p[i * 6 + j] = (p[i * 6 + j] - pphi[i] * pphi[j] / denom) * inv
            }
        }
        solve()
        // The algebraic error of a point at distance r + δ from the centre of a sphere of radius r is
        // about 2 r δ; divided by r² it is 2 δ / r, twice the relative radius error (the first fit's
        // measure).
        let r2 = (fieldStrength / scale) * (fieldStrength / scale)
        let relative = r2 > 1e-12 ? err / r2 : 1
        residual += 0.05 * (min(relative * relative, 1) - residual)
        if accuracy >= .low {
            let d = m - offset
            octants |= UInt8(1) << UInt8((d.x > 0 ? 1 : 0) | (d.y > 0 ? 2 : 0) | (d.z > 0 ? 4 : 0))
        }
        accuracy = ellipsoidGrade(accepted: acceptedSamples, octants: octants, residual: residual,
                                  gains: gains, current: accuracy)
    }

    private mutating func solve() {
        let a = 1 + theta[0], b = 1 + theta[1], c = 1 - theta[0] - theta[1]
        guard a > 0, b > 0, c > 0 else {
            accuracy = .uncalibrated
            return
        }
        let cx = -theta[2] / (2 * a), cy = -theta[3] / (2 * b), cz = -theta[4] / (2 * c)
        let g = a * cx * cx + b * cy * cy + c * cz * cz - theta[5]
        guard g > 0 else {
            accuracy = .uncalibrated
            return
        }
        let rx = (g / a).squareRoot(), ry = (g / b).squareRoot(), rz = (g / c).squareRoot()
        let r = _cbrt(rx * ry * rz)
        let newOffset = origin + Vector3(cx, cy, cz) * scale
        let newGains = Vector3(r / rx, r / ry, r / rz)
        guard newOffset.isFinite, newGains.isFinite, r.isFinite else { return }
        offset = newOffset
        gains = newGains
        fieldStrength = r * scale
        if accuracy == .uncalibrated { accuracy = .low }
    }
}
