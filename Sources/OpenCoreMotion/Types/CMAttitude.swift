import Foundation
import MotionFusion

/// The device's orientation relative to a reference frame (see ``CMAttitudeReferenceFrame``).
///
/// The underlying rotation maps the device frame to the reference frame. The Euler angles are the
/// intrinsic z-x'-y'' sequence Core Motion uses, `R = Rz(yaw) · Rx(pitch) · Ry(roll)`:
/// - ``pitch`` = asin(2(wx + yz)), about x, in −π/2…π/2;
/// - ``roll`` = atan2(2(wy − xz), 1 − 2(x² + y²)), about y, in −π…π;
/// - ``yaw`` = atan2(2(wz − xy), 1 − 2(x² + z²)), about z, in −π…π, growing counter-clockwise.
///
/// ## Threading
/// Every member may be used from any thread; ``multiply(byInverseOf:)`` is atomic.
open class CMAttitude: NSObject, NSCopying, @unchecked Sendable {
    private let storage: Locked<Quaternion>

    /// Creates an attitude from a device → reference rotation (beyond Apple). It is normalised.
    public init(rotation: Quaternion) {
        storage = Locked(rotation.normalized)
        super.init()
    }

    /// Creates an attitude from a Core Motion quaternion (beyond Apple).
    public convenience init(quaternion q: CMQuaternion) {
        self.init(rotation: Quaternion(w: q.w, x: q.x, y: q.y, z: q.z))
    }

    /// The rotation device → reference, as a MotionFusion quaternion.
    public var rotation: Quaternion { storage.withLock { $0 } }

    /// Rotation about the device's y axis, in radians (−π…π).
    open var roll: Double {
        let q = rotation
        return atan2(2 * (q.w * q.y - q.x * q.z), 1 - 2 * (q.x * q.x + q.y * q.y))
    }

    /// Rotation about the device's x axis, in radians (−π/2…π/2).
    open var pitch: Double {
        let q = rotation
        return asin(min(1, max(-1, 2 * (q.w * q.x + q.y * q.z))))
    }

    /// Rotation about the vertical axis, in radians (−π…π).
    open var yaw: Double {
        let q = rotation
        return atan2(2 * (q.w * q.z - q.x * q.y), 1 - 2 * (q.x * q.x + q.z * q.z))
    }

    /// The attitude as a unit quaternion (device → reference).
    open var quaternion: CMQuaternion {
        let q = rotation
        return CMQuaternion(x: q.x, y: q.y, z: q.z, w: q.w)
    }

    /// The attitude as a rotation matrix, `v_reference = M · v_device`.
    open var rotationMatrix: CMRotationMatrix {
        let q = rotation
        let (w, x, y, z) = (q.w, q.x, q.y, q.z)
        return CMRotationMatrix(
            m11: 1 - 2 * (y * y + z * z), m12: 2 * (x * y - w * z), m13: 2 * (x * z + w * y),
            m21: 2 * (x * y + w * z), m22: 1 - 2 * (x * x + z * z), m23: 2 * (y * z - w * x),
            m31: 2 * (x * z - w * y), m32: 2 * (y * z + w * x), m33: 1 - 2 * (x * x + y * y)
        )
    }

    /// Replaces this attitude by its rotation relative to `attitude`: `self = attitude⁻¹ · self`.
    ///
    /// Afterwards this attitude is expressed in the frame the device had at `attitude`: a device that
    /// has not moved since then reads roll, pitch and yaw ≈ 0.
    open func multiply(byInverseOf attitude: CMAttitude) {
        let reference = attitude.rotation
        storage.withLock { $0 = (reference.conjugate * $0).normalized }
    }

    /// A new attitude with the same rotation.
    open func copy(with zone: NSZone? = nil) -> Any { CMAttitude(rotation: rotation) }

    open override var description: String {
        "CMAttitude(roll: \(roll), pitch: \(pitch), yaw: \(yaw))"
    }
}
