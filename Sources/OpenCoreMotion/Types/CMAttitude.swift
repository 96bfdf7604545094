import Foundation
import MotionFusion

/// The device's orientation relative to a reference frame (see ``CMAttitudeReferenceFrame``).
///
/// The underlying rotation maps the device frame to the reference frame. The Euler angles are the
/// intrinsic z-x'-y'' sequence Core Motion uses, `R = Rz(yaw) · Rx(pitch) · Ry(roll)`, computed by
/// MotionFusion's `EulerAngles` (the formulas are there and in the README).
///
/// As on Apple platforms the class is `open`: a test can subclass it, call `super.init()` and override
/// ``roll``, ``pitch``, ``yaw``, ``quaternion`` or ``rotationMatrix``. ``rotation`` and the Euler angles
/// of the base class derive from ``quaternion``, so overriding that one moves them all. It conforms to
/// `NSCopying` and `NSSecureCoding`.
///
/// ## Threading
/// Every member may be used from any thread; ``multiply(byInverseOf:)`` is atomic.
open class CMAttitude: NSObject, NSCopying, NSSecureCoding {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is behind a `Locked`, so sharing it between threads is safe.
    private let storage: Locked<Quaternion>

    /// The identity attitude (roll, pitch and yaw 0). Apple documents no value for it.
    public override init() {
        storage = Locked(.identity)
        super.init()
    }

    /// Creates an attitude from a device → reference rotation (beyond Apple). It is normalised.
    public init(rotation: Quaternion) {
        storage = Locked(rotation.normalized)
        super.init()
    }

    /// Creates an attitude from a Core Motion quaternion (beyond Apple).
    public convenience init(quaternion q: CMQuaternion) {
        self.init(rotation: Quaternion(w: q.w, x: q.x, y: q.y, z: q.z))
    }

    /// Decodes an attitude written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        let q = Quaternion(w: coder.decodeDouble(forKey: "quaternion.w"), x: coder.decodeDouble(forKey: "quaternion.x"),
                           y: coder.decodeDouble(forKey: "quaternion.y"), z: coder.decodeDouble(forKey: "quaternion.z"))
        storage = Locked(q.normalized)
        super.init()
    }

    /// `true`: attitudes decode with `NSSecureCoding`.
    open class var supportsSecureCoding: Bool { true }

    /// Writes the attitude's ``quaternion`` (read through the accessor, so a subclass's override is written).
    open func encode(with coder: NSCoder) {
        let q = quaternion
        coder.encode(q.x, forKey: "quaternion.x")
        coder.encode(q.y, forKey: "quaternion.y")
        coder.encode(q.z, forKey: "quaternion.z")
        coder.encode(q.w, forKey: "quaternion.w")
    }

    /// The rotation device → reference, as a MotionFusion quaternion (beyond Apple): ``quaternion``.
    public var rotation: Quaternion {
        let q = quaternion
        return Quaternion(w: q.w, x: q.x, y: q.y, z: q.z)
    }

    /// Rotation about the device's y axis, in radians (−π…π) (`EulerAngles`).
    open var roll: Double { rotation.eulerAngles.roll }

    /// Rotation about the device's x axis, in radians (−π/2…π/2) (`EulerAngles`).
    open var pitch: Double { rotation.eulerAngles.pitch }

    /// Rotation about the vertical axis, in radians (−π…π) (`EulerAngles`).
    open var yaw: Double { rotation.eulerAngles.yaw }

    /// The attitude as a unit quaternion (device → reference).
    open var quaternion: CMQuaternion {
        let q = storage.withLock { $0 }
        return CMQuaternion(x: q.x, y: q.y, z: q.z, w: q.w)
    }

    /// The attitude as a rotation matrix, `v_reference = M · v_device` (MotionFusion's `Quaternion.rotationMatrix`).
    open var rotationMatrix: CMRotationMatrix {
        let m = rotation.rotationMatrix
        return CMRotationMatrix(
            m11: m.r0.x, m12: m.r0.y, m13: m.r0.z,
            m21: m.r1.x, m22: m.r1.y, m23: m.r1.z,
            m31: m.r2.x, m32: m.r2.y, m33: m.r2.z
        )
    }

    /// Replaces this attitude by its rotation relative to `attitude`: `self = attitude⁻¹ · self`.
    ///
    /// Afterwards this attitude is expressed in the frame the device had at `attitude`: a device that
    /// has not moved since then reads roll, pitch and yaw ≈ 0. `attitude` is read through its
    /// ``quaternion`` accessor, so a subclass's override counts.
    open func multiply(byInverseOf attitude: CMAttitude) {
        let reference = attitude.rotation
        storage.withLock { $0 = (reference.conjugate * $0).normalized }
    }

    /// A new attitude with the same ``quaternion``.
    open func copy(with zone: NSZone? = nil) -> Any { CMAttitude(rotation: rotation) }

    open override var description: String {
        "CMAttitude(roll: \(roll), pitch: \(pitch), yaw: \(yaw))"
    }
}
