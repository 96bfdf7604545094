/// Batch magnetometer calibration: hard iron (an offset) and full soft iron (a symmetric 3×3 matrix) from
/// a general ellipsoid fit to raw readings taken in many orientations.
///
/// ## Model
/// A magnetometer in a constant field of strength `B` reads `m = S h + o + noise` with `|h| = B`: the raw
/// readings lie on an ellipsoid `(m − o)ᵀ Q (m − o) = 1` centred on the hard-iron offset `o`. The
/// correction is `W (m − o)` with `W = B · Q^{1/2}` symmetric positive definite and
/// `B = det(Q)^{−1/6}` (the ellipsoid's geometric-mean radius), which maps the ellipsoid onto the sphere
/// of radius `B`. The rotation part of `S` cannot be observed from the field alone and is taken as none
/// (the symmetric choice, as in J. F. Vasconcelos et al., "Geometric approach to strapdown magnetometer
/// calibration in sensor frame", IEEE Trans. Aerosp. Electron. Syst. 47(2), 2011).
///
/// ## Fit
/// The readings are centred on their mean and scaled to unit spread, then the general quadric
/// `xᵀ A x + bᵀ x + c = 0` (ten coefficients) is fitted by linear least squares under the linear
/// constraint `trace(A) = 1`, one of the invariant normalisations of F. L. Bookstein, "Fitting conic
/// sections to scattered data", Computer Graphics and Image Processing 9(1), 1979. Unlike the common
/// normalisation `c = −1` (or `… = 1`), which breaks down when the ellipsoid passes near the origin, this
/// one is never singular for an ellipsoid wherever its centre lies: a phone's hard iron of 100–600 µT
/// against a 47 µT field puts the origin far outside the ellipsoid, and the centred coordinates keep the
/// problem well conditioned. The quadric must come out an ellipsoid (`A` definite). A sphere (hard iron
/// only, `W = B · I`, four parameters) is fitted too, and kept instead when the readings cover too few
/// orientations for the nine shape parameters (``minimumCoverageForSoftIron``) or the soft iron does not
/// lower the residual enough to be real (``softIronResidualRatio``): on a phone's recording of ordinary
/// use, whose own calibration is hard iron only, the full fit over few orientations turned the field by
/// 11° rms, the sphere by 1.9°.
///
/// ## Quality
/// ``accuracy`` maps onto Core Motion's `CMMagneticFieldCalibrationAccuracy` from two measures:
/// - ``relativeResidual``: the rms of `|W (m − o)| − B` over the readings, relative to `B` (noise, an
///   unmodelled field change, a disturbance);
/// - ``coverage``: how much of the sphere the corrected readings span, `3 λ_min / B²` with `λ_min` the
///   smallest eigenvalue of their covariance: 1 for the whole sphere evenly, 0.25 for a hemisphere, 0 for
///   turns about one axis only (a circle, which leaves the offset along that axis undetermined). The
///   covariance does not depend on the fitted centre, so a wrong centre cannot raise it.
///
/// | grade | when |
/// |---|---|
/// | `high` | ≥ 100 readings, coverage ≥ 0.5, residual ≤ 2 % (with that coverage a real soft iron is fitted: a sphere is kept only when the soft iron explains too little) |
/// | `medium` | ≥ 50 readings, coverage ≥ 0.25, residual ≤ 5 % |
/// | `low` | any other fit that came out an ellipsoid or sphere, with coverage ≥ 0.005 |
/// | `uncalibrated` | fewer than 10 finite readings, coverage below 0.005, or no fit |
public struct MagnetometerEllipsoidFit: Sendable, Hashable {
    /// Coverage below which only the hard iron is fitted, dimensionless (see ``coverage``). 0.1.
    public static let minimumCoverageForSoftIron = 0.1
    /// The soft iron is kept only when its residual is below this fraction of the hard-iron-only fit's
    /// (it must explain at least half of the residual variance, 0.7² ≈ 0.5); otherwise its nine shape
    /// parameters mostly fit noise and disturbances over the few orientations seen. 0.7.
    public static let softIronResidualRatio = 0.7

    /// Hard-iron offset, µT, device frame (subtracted from the raw field).
    public var offset: Vector3
    /// Soft-iron correction, symmetric positive definite, dimensionless: calibrated = `softIron · (raw − offset)`.
    public var softIron: Matrix3
    /// The field strength the correction maps onto, µT (the local field as the sensor sees it).
    public var fieldStrength: Double
    /// Rms of `|calibrated| − fieldStrength` over the readings, relative to ``fieldStrength``.
    public var relativeResidual: Double
    /// How much of the sphere the corrected readings span, 0…1 (see the type's discussion).
    public var coverage: Double
    /// Number of finite readings used.
    public var samples: Int
    /// Whether the soft iron was fitted (otherwise only the offset: ``softIron`` is a multiple of identity).
    public var fitsSoftIron: Bool
    /// The grade (see the type's discussion).
    public var accuracy: MagneticCalibrationAccuracy

    /// Applies the calibration to a raw field, µT → µT.
    @inlinable
    public func calibrate(_ raw: Vector3) -> Vector3 { softIron * (raw - offset) }

    /// Fits readings in µT. Non-finite readings are skipped.
    /// - Returns: the fit, or `nil` with fewer than 10 finite readings or when no ellipsoid or sphere fits
    ///   (all readings in one direction, collinear or coplanar through a degenerate spread).
    public static func fit(_ readings: [Vector3]) -> MagnetometerEllipsoidFit? {
        let points = readings.filter { $0.isFinite }
        guard points.count >= 10 else { return nil }
        var mean = Vector3.zero
        for p in points { mean += p }
        mean = mean / Double(points.count)
        var spread = 0.0
        for p in points { spread += (p - mean).lengthSquared }
        spread = (spread / Double(points.count)).squareRoot()
        guard spread.isFinite, spread > 1e-9 else { return nil }
        let unit = points.map { ($0 - mean) / spread }

        let hardOnly = sphere(unit, mean: mean, spread: spread, readings: points)
        if let full = general(unit, mean: mean, spread: spread, readings: points),
           full.coverage >= minimumCoverageForSoftIron,
           hardOnly.map({ full.relativeResidual < softIronResidualRatio * $0.relativeResidual }) ?? true {
            return full
        }
        return hardOnly
    }

    /// The general quadric under trace(A) = 1: a x² + b y² + (1 − a − b) z² + 2d xy + 2e xz + 2f yz + 2g x
    /// + 2h y + 2i z + j = 0, nine unknowns.
    private static func general(_ u: [Vector3], mean: Vector3, spread: Double, readings: [Vector3]) -> MagnetometerEllipsoidFit? {
        var eq = NormalEquations(unknowns: 9)
        for p in u {
            let (x, y, z) = (p.x, p.y, p.z)
            eq.add([x * x - z * z, y * y - z * z, 2 * x * y, 2 * x * z, 2 * y * z, 2 * x, 2 * y, 2 * z, 1], -z * z)
        }
        guard let t = eq.solve() else { return nil }
        let a = t[0], b = t[1], c = 1 - t[0] - t[1]
        let quadratic = Matrix3(rows: Vector3(a, t[2], t[3]), Vector3(t[2], b, t[4]), Vector3(t[3], t[4], c))
        return finish(quadratic: quadratic, linear: Vector3(t[5], t[6], t[7]), constant: t[8],
                      mean: mean, spread: spread, readings: readings, fitsSoftIron: true)
    }

    /// The sphere x² + y² + z² + 2g x + 2h y + 2i z + j = 0, four unknowns.
    private static func sphere(_ u: [Vector3], mean: Vector3, spread: Double, readings: [Vector3]) -> MagnetometerEllipsoidFit? {
        var eq = NormalEquations(unknowns: 4)
        for p in u { eq.add([2 * p.x, 2 * p.y, 2 * p.z, 1], -p.lengthSquared) }
        guard let t = eq.solve() else { return nil }
        return finish(quadratic: .identity, linear: Vector3(t[0], t[1], t[2]), constant: t[3],
                      mean: mean, spread: spread, readings: readings, fitsSoftIron: false)
    }

    /// From `xᵀ A x + 2 gᵀ x + j = 0` in unit coordinates to the calibration in µT, with its grade.
    private static func finish(quadratic: Matrix3, linear g: Vector3, constant j: Double, mean: Vector3, spread: Double,
                               readings: [Vector3], fitsSoftIron: Bool) -> MagnetometerEllipsoidFit? {
        guard let inverse = quadratic.inverse else { return nil }
        let centre = -(inverse * g)
        // (x − c)ᵀ A (x − c) = cᵀ A c − j =: k; the shape matrix is A / k, which must be positive definite.
        let k = centre.dot(quadratic * centre) - j
        guard k.isFinite, k != 0 else { return nil }
        let shape = quadratic * (1 / k)
        let eigen = SymmetricEigen3(shape)
        guard eigen.values.isFinite, eigen.values.x > 0 else { return nil }
        // In µT: x = (m − mean) / spread, so Q = shape / spread² and o = mean + spread · centre.
        let offset = mean + centre * spread
        let q = SymmetricEigen3(shape * (1 / (spread * spread)))
        let detQ = q.values.x * q.values.y * q.values.z
        let strength = 1 / _cbrt(detQ).squareRoot()
        let softIron = q.map { $0.squareRoot() } * strength
        guard offset.isFinite, softIron.isFinite, strength.isFinite, strength > 0 else { return nil }

        var sumSquares = 0.0
        var moments = Moments()
        var secondMoments = Matrix3.zero
        var corrected: [Vector3] = []
        corrected.reserveCapacity(readings.count)
        for m in readings {
            let v = softIron * (m - offset)
            let r = v.length - strength
            sumSquares += r * r
            moments.add(v)
            corrected.append(v)
        }
        let count = Double(readings.count)
        let mean = moments.mean
        for v in corrected {
            let d = v - mean
            secondMoments = secondMoments + Matrix3(rows: d * d.x, d * d.y, d * d.z)
        }
        let residual = (sumSquares / count).squareRoot() / strength
        // The covariance does not depend on the centre: a wrong centre cannot make coverage look good.
        let coverage = max(0, min(1, 3 * SymmetricEigen3(secondMoments * (1 / count)).values.x / (strength * strength)))
        var fit = MagnetometerEllipsoidFit(offset: offset, softIron: softIron, fieldStrength: strength,
                                           relativeResidual: residual, coverage: coverage, samples: readings.count,
                                           fitsSoftIron: fitsSoftIron, accuracy: .low)
        fit.accuracy = grade(fit)
        return fit
    }

    /// The grade of a fit (see the type's discussion).
    public static func grade(_ fit: MagnetometerEllipsoidFit) -> MagneticCalibrationAccuracy {
        guard fit.samples >= 10, fit.relativeResidual.isFinite, fit.coverage >= 0.005 else { return .uncalibrated }
        if fit.samples >= 100, fit.coverage >= 0.5, fit.relativeResidual <= 0.02 { return .high }
        if fit.samples >= 50, fit.coverage >= 0.25, fit.relativeResidual <= 0.05 { return .medium }
        return .low
    }
}
