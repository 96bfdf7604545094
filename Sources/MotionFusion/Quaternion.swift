/// A quaternion `w + xi + yj + zk`, scalar first, with Hamilton's product convention.
///
/// Throughout OpenCoreMotion a unit quaternion `q` describes an orientation as the rotation that maps
/// vectors from the **device frame to the reference frame**: `v_ref = q.rotate(v_device)`, which is
/// Core Motion's convention for `CMAttitude.quaternion`. Values only; safe from any thread.
@frozen
public struct Quaternion: Hashable, Sendable {
    /// Scalar part.
    public var w: Double
    /// First vector part (i).
    public var x: Double
    /// Second vector part (j).
    public var y: Double
    /// Third vector part (k).
    public var z: Double

    /// Creates a quaternion from its components, scalar first.
    @inlinable
    public init(w: Double, x: Double, y: Double, z: Double) {
        self.w = w
        self.x = x
        self.y = y
        self.z = z
    }

    /// The identity rotation.
    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

    /// The rotation by `angle` radians about `axis` (normalised here; a zero axis gives the identity).
    @inlinable
    public init(axis: Vector3, angle: Double) {
        guard let u = axis.normalized else {
            self = .identity
            return
        }
        let h = angle / 2
        let s = _sin(h)
        self.init(w: _cos(h), x: u.x * s, y: u.y * s, z: u.z * s)
    }

    /// The rotation whose axis is `v`'s direction and whose angle is `|v|` radians (the exponential map).
    ///
    /// Accurate for small vectors: uses a Taylor expansion below 1e-6 rad.
    @inlinable
    public init(rotationVector v: Vector3) {
        let angle = v.length
        if angle < 1e-6 {
            // sin(a/2)/a ≈ 1/2 − a²/48
            let k = 0.5 - angle * angle / 48
            self.init(w: 1 - angle * angle / 8, x: v.x * k, y: v.y * k, z: v.z * k)
        } else {
            let h = angle / 2
            let k = _sin(h) / angle
            self.init(w: _cos(h), x: v.x * k, y: v.y * k, z: v.z * k)
        }
    }

    /// The vector part `(x, y, z)`.
    @inlinable public var vector: Vector3 { Vector3(x, y, z) }

    /// The conjugate; for a unit quaternion, the inverse rotation.
    @inlinable public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }

    /// The Euclidean norm.
    @inlinable public var length: Double { (w * w + x * x + y * y + z * z).squareRoot() }

    /// `true` when every component is finite.
    @inlinable public var isFinite: Bool { w.isFinite && x.isFinite && y.isFinite && z.isFinite }

    /// The quaternion scaled to unit length; the identity when the norm is zero or not finite.
    @inlinable
    public var normalized: Quaternion {
        @inline(__always) get {
        let n = length
        guard n > 0, n.isFinite else { return .identity }
        let k = 1 / n
        return Quaternion(w: w * k, x: x * k, y: y * k, z: z * k)
        }
    }

    /// Hamilton product `a ⊗ b`: the rotation `b` followed by `a`.
    @inlinable @inline(__always)
    public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w
        )
    }

    /// Rotates `v` by this unit quaternion: `q ⊗ (0, v) ⊗ q*`, i.e. device frame → reference frame.
    @inlinable @inline(__always)
    public func rotate(_ v: Vector3) -> Vector3 {
        // v' = v + 2w(u × v) + 2u × (u × v), with u the vector part.
        let u = vector
        let t = u.cross(v) * 2
        return v + t * w + u.cross(t)
    }

    /// Rotates `v` by the inverse of this unit quaternion: reference frame → device frame.
    @inlinable
    public func inverseRotate(_ v: Vector3) -> Vector3 {
        conjugate.rotate(v)
    }
}

// Trigonometry without Foundation: the standard library exposes none, so bind libm through the
// platform module that the Swift runtime always links.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline func _sin(_ x: Double) -> Double { sin(x) }
@usableFromInline func _cos(_ x: Double) -> Double { cos(x) }
