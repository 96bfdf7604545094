/// Online hard- and soft-iron calibration of a magnetometer by recursive least squares.
///
/// Model: the raw field `m` lies on an axis-aligned ellipsoid
/// `A x² + B y² + C z² + D x + E y + F z = 1` (coordinates scaled by ``scale``), whose centre is the
/// hard-iron offset and whose semi-axes give a diagonal soft-iron correction mapping it to a sphere of
/// the geometric-mean radius. This is the classic linear least-squares ellipsoid fit (e.g. Vasconcelos
/// et al., "Geometric approach to strapdown magnetometer calibration in sensor frame", IEEE TAES 47(2),
/// 2011; Renaudin et al., "Complete triaxis magnetometer calibration in the magnetic domain", J. Sensors
/// 2010) solved recursively with exponential forgetting (Ljung & Söderström, *Theory and Practice of
/// Recursive Identification*, 1983).
///
/// A sample enters the fit only when its direction differs from the previously accepted one by more
/// than ``minimumAngleStep``: this spreads the data over orientations and keeps the cost low.
///
/// The normalisation `… = 1` can only describe an ellipsoid that encloses the origin (at the origin the
/// left side is 0, inside every such ellipsoid). A phone's or a cheap IMU's raw magnetometer carries a
/// hard iron of 100–600 µT against the Earth's ≈ 47 µT: the origin then lies far outside the ellipsoid
/// and this fit never converges. Beside it runs a second fit of the same model normalised by the
/// quadric's trace (``TraceNormalisedEllipsoidFit``), which stays regular wherever the ellipsoid lies.
/// Its result replaces the first fit's while it says that the origin lies outside the ellipsoid
/// (the fitted hard iron longer than the fitted field strength: exactly the case the first fit cannot
/// represent) and it is graded at least ``MagneticCalibrationAccuracy/low``; otherwise, with an
/// Earth-like raw field, the first fit is used unchanged (``usesLargeOffsetFit``).
///
/// The ellipsoid fit needs the field seen from most directions, which hand-held use and walking never
/// give. Beside it runs ``rotation``, a gyro-aided hard-iron estimate (``RotationHardIronEstimator``) fed
/// through ``add(_:attitude:bias:dt:headingThreshold:)``, which needs only the rotations the device makes.
/// The calibration in use (``offset``, ``gains``, ``accuracy``) is the ellipsoid's when
/// ``prefersEllipsoid`` (it grades at least ``MagneticCalibrationAccuracy/medium`` or at least as well as
/// the rotation estimate, and a `medium` rotation estimate gives way only to a `high` ellipsoid that
/// agrees with it), otherwise the rotation estimate's offset with unit gains.
///
/// No heap allocation. Values only; not thread-safe to mutate concurrently (use one per filter).
public struct MagneticCalibrator: Sendable {
    /// The error allowed a `high` ellipsoid fit's hard iron when it is checked against a `medium`
    /// rotation estimate's (see ``prefersEllipsoid``), µT rms per axis. Default 5 µT, a tenth of a typical
    /// geomagnetic field: an offset error that turns the heading by up to about 6°.
    public var ellipsoidAgreementTolerance: Double = 5
    /// Smallest angle between accepted samples, radians. Default 0.1 rad (≈ 5.7°).
    public var minimumAngleStep: Double = 0.1
    /// Forgetting factor per accepted sample, dimensionless. Default 0.995.
    public var forgettingFactor: Double = 0.995

    /// Hard-iron offset in use, µT (subtracted from the raw field).
    public private(set) var offset: Vector3 = .zero
    /// Diagonal soft-iron gains in use, applied after removing the offset, dimensionless.
    public private(set) var gains: Vector3 = Vector3(1, 1, 1)
    /// Radius of the fitted ellipsoid's sphere after correction, µT (the local field strength as seen
    /// by the sensor).
    public private(set) var fieldStrength: Double = 0
    /// Accuracy of the calibration in use (the better of the ellipsoid fit and the rotation estimate).
    public private(set) var accuracy: MagneticCalibrationAccuracy = .uncalibrated
    /// Hard-iron offset of the ellipsoid fit, µT.
    public private(set) var ellipsoidOffset: Vector3 = .zero
    /// Diagonal soft-iron gains of the ellipsoid fit, dimensionless.
    public private(set) var ellipsoidGains: Vector3 = Vector3(1, 1, 1)
    /// Accuracy of the ellipsoid fit alone.
    public private(set) var ellipsoidAccuracy: MagneticCalibrationAccuracy = .uncalibrated
    /// The trace-normalised ellipsoid fit for hard irons larger than the field (see the type's
    /// discussion); it sees the same samples as the first fit.
    public private(set) var largeOffsetFit = TraceNormalisedEllipsoidFit()
    /// Whether ``ellipsoidOffset``, ``ellipsoidGains``, ``ellipsoidAccuracy`` and ``fieldStrength`` are
    /// ``largeOffsetFit``'s (its hard iron is longer than its field strength and it is graded at least
    /// ``MagneticCalibrationAccuracy/low``) rather than the first fit's.
    public private(set) var usesLargeOffsetFit = false
    private var originFitOffset: Vector3 = .zero
    private var originFitGains: Vector3 = Vector3(1, 1, 1)
    private var originFitStrength: Double = 0
    private var originFitAccuracy: MagneticCalibrationAccuracy = .uncalibrated
    /// `g = 1 + Σ aᵢcᵢ²` of the first fit's last solution: its normalisation `Σ aᵢxᵢ² + bᵢxᵢ = 1` is the
    /// ellipsoid `Σ aᵢ(xᵢ − cᵢ)² = g`, so the algebraic error of a sample whose normalised radius is
    /// `1 + δ` is about `2 g δ`. For a sphere of radius `r` about an offset `c`, `g = r²/(r² − |c|²)`:
    /// 1 without a hard iron, 2.2 for a 30 µT offset in a 41 µT field.
    private var originFitNormalisation: Double = 1
    /// The gyro-aided hard-iron estimate.
    public var rotation = RotationHardIronEstimator()
    /// Whether the calibration in use is the rotation estimate's (rather than the ellipsoid's).
    public private(set) var usesRotationEstimate = false
    /// Number of samples accepted into the fit.
    public private(set) var acceptedSamples: Int = 0
    /// The grade of a calibration already applied to the readings before they reach this calibrator (a
    /// stored device calibration, ``SensorCalibration``). While it is better than both online
    /// estimates, the calibration in use is the identity (offset zero, unit gains) with this accuracy,
    /// so a device calibrated before starts with a calibrated heading. Default
    /// ``MagneticCalibrationAccuracy/uncalibrated``: no effect.
    public var priorAccuracy: MagneticCalibrationAccuracy = .uncalibrated {
        didSet { select() }
    }
    /// The hard-iron offset, µT, of the calibration that ``priorAccuracy`` grades, used in its place while
    /// it is better than both online estimates. Zero (the default) for a calibration applied to the
    /// readings beforehand; the offset of a calibration learned in an earlier run for
    /// ``AttitudeFilter/seed(from:)`` (``LearnedCalibration``).
    public var priorOffset: Vector3 = .zero {
        didSet { select() }
    }
    /// The diagonal soft-iron gains (dimensionless) that go with ``priorOffset``. Default 1, 1, 1.
    public var priorGains = Vector3(1, 1, 1) {
        didSet { select() }
    }

    /// Coordinate scale, µT: the norm of the first sample.
    public private(set) var scale: Double = 0
    private var theta: InlineArray<6, Double> = [0, 0, 0, 0, 0, 0]
    private var p: InlineArray<36, Double> = .init(repeating: 0)
    private var lastAccepted: Vector3 = .zero
    private var lastAcceptedLength: Double = 0
    private var cosStep: (step: Double, cos: Double) = (0, 1)
    private var octants: UInt8 = 0
    private var residual: Double = 1
    /// The last ``recentCapacity`` samples accepted into the fit (raw, µT), oldest overwritten first.
    private var recent: InlineArray<32, Vector3> = .init(repeating: .zero)
    private var recentCount = 0
    /// Number of accepted samples ``normSpread(calibrated:)`` looks at.
    public static let recentCapacity = 32

    /// Creates an empty calibrator.
    public init() {}

    /// How much the field strength varies over the last accepted samples (spread over orientations by
    /// ``minimumAngleStep``): the standard deviation of their norms over the mean norm, raw or through
    /// the calibration in use; `nil` before 16 samples. A real hard or soft iron makes the raw norm vary
    /// with orientation and a calibration that models it makes the calibrated norm steady; a
    /// magnetometer already calibrated reads a steady norm raw, and a spurious calibration does not make
    /// it steadier.
    public func normSpread(calibrated: Bool) -> Double? {
        guard recentCount >= 16 else { return nil }
        var sum = 0.0, sumSquares = 0.0
        for i in 0..<recentCount {
            let n = (calibrated ? calibrate(recent[i]) : recent[i]).length
            sum += n
            sumSquares += n * n
        }
        let count = Double(recentCount)
        let mean = sum / count
        guard mean > 1e-9 else { return nil }
        return max(0, sumSquares / count - mean * mean).squareRoot() / mean
    }

    /// Applies the current calibration to a raw field, µT → µT.
    @inlinable
    public func calibrate(_ raw: Vector3) -> Vector3 {
        let d = raw - offset
        return Vector3(d.x * gains.x, d.y * gains.y, d.z * gains.z)
    }

    /// Offers one raw sample (µT) to both ellipsoid fits. Non-finite or zero samples are ignored.
    public mutating func add(_ m: Vector3) {
        let n = m.length
        guard n.isFinite, n > 1e-6 else { return }
        addToOriginFit(m, length: n)
        largeOffsetFit.add(m, minimumAngleStep: minimumAngleStep, forgettingFactor: forgettingFactor)
        publish()
        select()
    }

    /// The first fit (normalisation `… = 1`, coordinates scaled by the first sample's norm).
    private mutating func addToOriginFit(_ m: Vector3, length n: Double) {
        if scale == 0 {
            scale = n
            for i in 0..<36 { p[i] = 0 }
            for i in 0..<6 { p[i * 7] = 100 }
            theta = [1, 1, 1, 0, 0, 0]
        }
        if acceptedSamples > 0 {
            // Compare cosines without a division: accept when m·last ≤ cos(step)·|m|·|last|.
            if cosStep.step != minimumAngleStep { cosStep = (minimumAngleStep, _cos(minimumAngleStep)) }
            if m.dot(lastAccepted) > cosStep.cos * n * lastAcceptedLength { return }
        }
        lastAccepted = m
        lastAcceptedLength = n
        recent[acceptedSamples % Self.recentCapacity] = m
        recentCount = min(recentCount + 1, Self.recentCapacity)
        acceptedSamples += 1
        let s = m / scale
        let phi: InlineArray<6, Double> = [s.x * s.x, s.y * s.y, s.z * s.z, s.x, s.y, s.z]
        // RLS update: k = P φ / (λ + φᵀ P φ); θ += k (1 − φᵀθ); P = (P − k φᵀ P) / λ.
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
        let err = 1 - prediction
        for i in 0..<6 { theta[i] += pphi[i] / denom * err }
        let inv = 1 / forgettingFactor
        for i in 0..<6 {
            for j in 0..<6 {
                p[i * 6 + j] = (p[i * 6 + j] - pphi[i] * pphi[j] / denom) * inv
            }
        }
        // The grade judges the fit by its radius error, whatever the offset: the algebraic error divided
        // by g (undivided, a 30 µT hard iron in BROAD's 41 µT field kept a fit within 1 µT of the truth
        // at `low` for two minutes, its rms 0.054–0.078 against 0.05).
        let radial = err / originFitNormalisation
        residual += 0.05 * (radial * radial - residual)
        solve()
        if originFitAccuracy >= .low {
            let d = m - originFitOffset
            octants |= UInt8(1) << UInt8((d.x > 0 ? 1 : 0) | (d.y > 0 ? 2 : 0) | (d.z > 0 ? 4 : 0))
        }
        originFitAccuracy = ellipsoidGrade(accepted: acceptedSamples, octants: octants,
                                           residual: residual, gains: originFitGains,
                                           current: originFitAccuracy)
    }

    /// Publishes the ellipsoid fit in use: the large-offset fit's while it is graded and its centre lies
    /// outside its sphere (the origin outside the ellipsoid, which the first fit cannot represent),
    /// otherwise the first fit's.
    private mutating func publish() {
        let wide = largeOffsetFit
        usesLargeOffsetFit = wide.accuracy >= .low && wide.offset.length > wide.fieldStrength
        if usesLargeOffsetFit {
            ellipsoidOffset = wide.offset
            ellipsoidGains = wide.gains
            ellipsoidAccuracy = wide.accuracy
            fieldStrength = wide.fieldStrength
        } else {
            ellipsoidOffset = originFitOffset
            ellipsoidGains = originFitGains
            ellipsoidAccuracy = originFitAccuracy
            fieldStrength = originFitStrength
        }
    }

    /// Offers one raw sample (µT) with the attitude it was taken at to the gyro-aided hard-iron estimate
    /// (``rotation``). Non-finite samples are ignored.
    /// - Parameters:
    ///   - m: raw magnetic field, µT, device frame.
    ///   - attitude: attitude device → E6 (z up, heading arbitrary but integrated from the gyro).
    ///   - bias: the filter's gyro bias estimate, rad/s, device frame.
    ///   - dt: time since the previous call, seconds.
    ///   - headingThreshold: heading uncertainty at which the estimate counts as
    ///     ``MagneticCalibrationAccuracy/medium``, radians.
    public mutating func add(_ m: Vector3, attitude: Quaternion, bias: Vector3, dt: Double, headingThreshold: Double) {
        rotation.update(m, attitude: attitude, bias: bias, dt: dt, headingThreshold: headingThreshold)
        select()
    }

    /// Reverses the direction of time for ``rotation`` (see ``RotationHardIronEstimator/reverseTimeDirection()``).
    public mutating func reverseTimeDirection() {
        rotation.reverseTimeDirection()
    }

    /// Whether the ellipsoid fit's calibration is preferred to the rotation estimate's: it grades at
    /// least ``MagneticCalibrationAccuracy/medium`` or at least as well; but while the rotation estimate
    /// is itself ``MagneticCalibrationAccuracy/medium``, only an ellipsoid graded
    /// ``MagneticCalibrationAccuracy/high`` whose hard iron agrees with that estimate's
    /// (``RotationHardIronEstimator/agrees(with:tolerance:)`` with ``ellipsoidAgreementTolerance``).
    ///
    /// A `medium` rotation estimate means the readings follow a constant hard iron within about the
    /// magnetometer's noise over the orientations seen, so soft iron large enough to matter there would
    /// have shown; an ellipsoid fitted to the few orientations of ordinary handling adds shape
    /// parameters that mostly fit noise. On two public iPhone exports of ordinary use the fit's gains
    /// came out 3–48 % from unity (the phones' own calibration is a hard iron alone), and on the second,
    /// turned mostly about one axis, it graded `medium`, for moments `high`, with a hard iron 12–27 µT
    /// off along z and a field strength falling from 44 to 28 µT, while the gyro-aided estimate stayed
    /// within 3.5 µT of the phone's own from 8 s on.
    public var prefersEllipsoid: Bool {
        guard ellipsoidAccuracy >= .medium || ellipsoidAccuracy >= rotation.accuracy else { return false }
        guard rotation.accuracy >= .medium else { return true }
        return ellipsoidAccuracy >= .high && rotation.agrees(with: ellipsoidOffset, tolerance: ellipsoidAgreementTolerance)
    }

    /// Picks the calibration in use.
    private mutating func select() {
        if prefersEllipsoid {
            offset = ellipsoidOffset
            gains = ellipsoidGains
            accuracy = ellipsoidAccuracy
            usesRotationEstimate = false
        } else {
            offset = rotation.offset
            gains = Vector3(1, 1, 1)
            accuracy = rotation.accuracy
            usesRotationEstimate = true
        }
        if priorAccuracy > accuracy {
            offset = priorOffset
            gains = priorGains
            accuracy = priorAccuracy
            usesRotationEstimate = false
        }
    }

    private mutating func solve() {
        let a = theta[0], b = theta[1], c = theta[2]
        guard a > 0, b > 0, c > 0 else {
            originFitAccuracy = .uncalibrated
            return
        }
        let cx = -theta[3] / (2 * a), cy = -theta[4] / (2 * b), cz = -theta[5] / (2 * c)
        let g = 1 + a * cx * cx + b * cy * cy + c * cz * cz
        guard g > 0 else {
            originFitAccuracy = .uncalibrated
            return
        }
        let rx = (g / a).squareRoot(), ry = (g / b).squareRoot(), rz = (g / c).squareRoot()
        let r = _cbrt(rx * ry * rz)
        let newOffset = Vector3(cx, cy, cz) * scale
        let newGains = Vector3(r / rx, r / ry, r / rz)
        guard newOffset.isFinite, newGains.isFinite, r.isFinite else { return }
        originFitOffset = newOffset
        originFitGains = newGains
        originFitStrength = r * scale
        originFitNormalisation = g
        if originFitAccuracy == .uncalibrated { originFitAccuracy = .low }
    }
}

/// Grades an online ellipsoid fit (``MagneticCalibrator``, ``TraceNormalisedEllipsoidFit``) from the
/// samples accepted, the octants (seen from the fitted centre) they cover, the running mean square of
/// the radial error (about twice the relative radius error, whatever the offset: the first fit divides
/// its algebraic error by its normalisation `g`) and the anisotropy of the soft-iron
/// gains: `high` needs 150 samples in all 8 octants, an rms under 0.02 and gains within a ratio of 1.5;
/// `medium` 60 samples in 6 octants, an rms under 0.05 and gains within 2; `low` 20 samples. A fit that
/// is not yet `low` (no ellipsoid) stays as it is.
func ellipsoidGrade(accepted: Int, octants: UInt8, residual: Double, gains: Vector3,
                    current: MagneticCalibrationAccuracy) -> MagneticCalibrationAccuracy {
    guard current >= .low else { return current }
    let covered = octants.nonzeroBitCount
    let rms = residual.squareRoot()
    let anisotropy = max(gains.x, gains.y, gains.z) / min(gains.x, gains.y, gains.z)
    if accepted >= 150, covered >= 8, rms < 0.02, anisotropy < 1.5 {
        return .high
    } else if accepted >= 60, covered >= 6, rms < 0.05, anisotropy < 2 {
        return .medium
    } else if accepted >= 20 {
        return .low
    } else {
        return .uncalibrated
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline func _cbrt(_ x: Double) -> Double { cbrt(x) }
