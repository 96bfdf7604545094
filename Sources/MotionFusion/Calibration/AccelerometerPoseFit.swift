/// Batch accelerometer calibration from static poses: a per-axis offset and scale such that every pose
/// reads 1 g.
///
/// ## Model
/// `calibrated = (raw − offset) ⊘ scale` (per axis, g), and at rest `|calibrated| = 1`. With the device
/// still on each of its six faces this is the classic six-position test (IEEE Std 1293-1998, *IEEE
/// Standard Specification Format Guide and Test Procedure for Linear, Single-Axis, Nongyroscopic
/// Accelerometers*, its tumble test): on the faces, `offset = (up + down) / 2` and
/// `scale = (up − down) / 2` per axis. With any other set of at least six well-spread poses the same
/// unknowns come from the axis-aligned ellipsoid `Σ p_k x_k² + q_k x_k = 1` through the poses' means,
/// solved by linear least squares (the multi-position calibration of D. Tedaldi, A. Pretto and
/// E. Menegatti, "A robust and easy to implement method for IMU calibration without external
/// equipments", ICRA 2014, without the axis misalignments). Offsets are a few hundredths of a g, so the
/// ellipsoid never passes near the origin and this normalisation stays regular.
///
/// Only the magnitude of gravity is used, so the result does not depend on Core Motion's sign.
public struct AccelerometerPoseFit: Sendable, Hashable {
    /// Offset, g, device frame.
    public var offset: Vector3
    /// Scale per axis, dimensionless (1 for a perfect sensor).
    public var scale: Vector3
    /// Rms of `|calibrated| − 1` over the poses, g.
    public var residual: Double
    /// The device faces seen (a pose within 30° of an axis, up or down), in the order
    /// `+x, −x, +y, −y, +z, −z` of the raw reading's sign.
    public var faces: [Bool]
    /// Number of poses used.
    public var poses: Int

    /// Applies the calibration to a raw reading, g → g.
    @inlinable
    public func calibrate(_ raw: Vector3) -> Vector3 {
        let d = raw - offset
        return Vector3(d.x / scale.x, d.y / scale.y, d.z / scale.z)
    }

    /// Fits the mean readings of static poses (g). Non-finite poses are skipped.
    /// - Returns: `nil` with fewer than six poses or when they do not determine the six unknowns (all
    ///   poses about one axis, for example), or when the result is not plausible (a scale outside
    ///   0.5…2 or an offset above 0.5 g).
    public static func fit(poses: [Vector3]) -> AccelerometerPoseFit? {
        let points = poses.filter { $0.isFinite && $0.length > 0.1 }
        guard points.count >= 6 else { return nil }
        var eq = NormalEquations(unknowns: 6)
        for p in points { eq.add([p.x * p.x, p.y * p.y, p.z * p.z, p.x, p.y, p.z], 1) }
        guard let t = eq.solve(), t[0] > 0, t[1] > 0, t[2] > 0 else { return nil }
        let offset = Vector3(-t[3] / (2 * t[0]), -t[4] / (2 * t[1]), -t[5] / (2 * t[2]))
        let g = 1 + t[0] * offset.x * offset.x + t[1] * offset.y * offset.y + t[2] * offset.z * offset.z
        guard g > 0 else { return nil }
        let scale = Vector3((g / t[0]).squareRoot(), (g / t[1]).squareRoot(), (g / t[2]).squareRoot())
        guard offset.isFinite, scale.isFinite, offset.length <= 0.5,
              [scale.x, scale.y, scale.z].allSatisfy({ $0 >= 0.5 && $0 <= 2 }) else { return nil }
        var fit = AccelerometerPoseFit(offset: offset, scale: scale, residual: 0, faces: faces(of: points), poses: points.count)
        var sum = 0.0
        for p in points {
            let r = fit.calibrate(p).length - 1
            sum += r * r
        }
        fit.residual = (sum / Double(points.count)).squareRoot()
        return fit
    }

    /// Which of the six faces `+x, −x, +y, −y, +z, −z` the poses show (within 30° of the axis).
    public static func faces(of poses: [Vector3]) -> [Bool] {
        var seen = [Bool](repeating: false, count: 6)
        let limit = 0.8660254037844386 // cos 30°
        for p in poses {
            guard let u = p.normalized else { continue }
            for (axis, c) in [u.x, u.y, u.z].enumerated() where abs(c) >= limit {
                seen[axis * 2 + (c > 0 ? 0 : 1)] = true
            }
        }
        return seen
    }
}
