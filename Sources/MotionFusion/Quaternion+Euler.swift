/// Euler angles in Core Motion's convention, in radians.
///
/// For an attitude quaternion `q = (w, x, y, z)` mapping device → reference frame (z up):
/// - `pitch = asin(2(wx + yz))`, rotation about the device x axis, in [−π/2, π/2];
/// - `roll = atan2(2(wy − xz), 1 − 2(x² + y²))`, about y, in (−π, π];
/// - `yaw = atan2(2(wz − xy), 1 − 2(x² + z²))`, about z, in (−π, π].
///
/// These are the angles of the decomposition `q = q_z(yaw) ⊗ q_x(pitch) ⊗ q_y(roll)`.
@frozen
public struct EulerAngles: Hashable, Sendable {
    /// Rotation about the device y axis, radians.
    public var roll: Double
    /// Rotation about the device x axis, radians.
    public var pitch: Double
    /// Rotation about the reference z axis, radians.
    public var yaw: Double

    /// Creates Euler angles, radians.
    @inlinable
    public init(roll: Double, pitch: Double, yaw: Double) {
        self.roll = roll
        self.pitch = pitch
        self.yaw = yaw
    }
}

extension Quaternion {
    /// Core Motion's roll, pitch and yaw of this unit quaternion (see ``EulerAngles``).
    public var eulerAngles: EulerAngles {
        let s = max(-1, min(1, 2 * (w * x + y * z)))
        return EulerAngles(
            roll: _atan2(2 * (w * y - x * z), 1 - 2 * (x * x + y * y)),
            pitch: _asin(s),
            yaw: _atan2(2 * (w * z - x * y), 1 - 2 * (x * x + z * z))
        )
    }

    /// The attitude with the given Core Motion Euler angles: `q_z(yaw) ⊗ q_x(pitch) ⊗ q_y(roll)`.
    public init(eulerAngles e: EulerAngles) {
        self = Quaternion(axis: Vector3(0, 0, 1), angle: e.yaw)
            * Quaternion(axis: Vector3(1, 0, 0), angle: e.pitch)
            * Quaternion(axis: Vector3(0, 1, 0), angle: e.roll)
    }

    /// The rotation by `angle` radians about the reference z axis (a heading change).
    @inlinable
    public static func aboutZ(_ angle: Double) -> Quaternion {
        Quaternion(w: _cos(angle / 2), x: 0, y: 0, z: _sin(angle / 2))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline func _atan2(_ y: Double, _ x: Double) -> Double { atan2(y, x) }
@usableFromInline func _asin(_ x: Double) -> Double { asin(x) }
@usableFromInline func _acos(_ x: Double) -> Double { acos(x) }
@usableFromInline func _exp(_ x: Double) -> Double { exp(x) }
@usableFromInline func _tan(_ x: Double) -> Double { tan(x) }
