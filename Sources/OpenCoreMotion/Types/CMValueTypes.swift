import MotionFusion

/// Acceleration along the device's three axes, in g (9.80665 m/s²).
///
/// As Apple's C struct it declares no `Equatable` or `Hashable`: an app may add them itself.
///
/// Core Motion's sign: at rest, gravity appears as a vector pointing down, so a device lying face up
/// reads z ≈ −1.
public struct CMAcceleration: Sendable {
    /// Along x (to the right of the screen), in g.
    public var x: Double
    /// Along y (to the top of the screen), in g.
    public var y: Double
    /// Along z (out of the screen), in g.
    public var z: Double
    /// Creates a value from its components in g.
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
    /// The zero vector.
    public init() { self.init(x: 0, y: 0, z: 0) }
}

/// Rotation rate about the device's three axes, in radians per second, right-handed.
public struct CMRotationRate: Sendable {
    /// About x, in rad/s.
    public var x: Double
    /// About y, in rad/s.
    public var y: Double
    /// About z, in rad/s.
    public var z: Double
    /// Creates a value from its components in rad/s.
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
    /// The zero vector.
    public init() { self.init(x: 0, y: 0, z: 0) }
}

/// Magnetic flux density along the device's three axes, in microtesla (µT).
public struct CMMagneticField: Sendable {
    /// Along x, in µT.
    public var x: Double
    /// Along y, in µT.
    public var y: Double
    /// Along z, in µT.
    public var z: Double
    /// Creates a value from its components in µT.
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
    /// The zero vector.
    public init() { self.init(x: 0, y: 0, z: 0) }
}

/// How well the magnetometer is calibrated, as Core Motion reports it.
public enum CMMagneticFieldCalibrationAccuracy: Int32, Sendable {
    /// Not calibrated: the field value must not be trusted (−1).
    case uncalibrated = -1
    /// Low accuracy (0).
    case low = 0
    /// Medium accuracy (1).
    case medium = 1
    /// High accuracy (2).
    case high = 2
}

/// A magnetic field with hard and soft iron removed, and how well that is known.
public struct CMCalibratedMagneticField: Sendable {
    /// The calibrated field in µT, device frame.
    public var field: CMMagneticField
    /// The calibration's accuracy.
    public var accuracy: CMMagneticFieldCalibrationAccuracy
    /// Creates a value.
    public init(field: CMMagneticField, accuracy: CMMagneticFieldCalibrationAccuracy) {
        self.field = field
        self.accuracy = accuracy
    }
    /// A zero field with accuracy raw value 0, ``CMMagneticFieldCalibrationAccuracy/low``, as Apple's
    /// zero-initialised C struct (``CMMagneticFieldCalibrationAccuracy/uncalibrated`` is −1).
    public init() { self.init(field: CMMagneticField(), accuracy: .low) }
}

/// A unit quaternion, components in Core Motion's order (x, y, z, w): the rotation from the device
/// frame to the reference frame.
public struct CMQuaternion: Sendable {
    /// First vector component.
    public var x: Double
    /// Second vector component.
    public var y: Double
    /// Third vector component.
    public var z: Double
    /// Scalar component.
    public var w: Double
    /// Creates a quaternion.
    public init(x: Double, y: Double, z: Double, w: Double) { self.x = x; self.y = y; self.z = z; self.w = w }
    /// All four components zero, as Apple's zero-initialised C struct (not a rotation: the identity
    /// is `CMQuaternion(x: 0, y: 0, z: 0, w: 1)`).
    public init() { self.init(x: 0, y: 0, z: 0, w: 0) }
}

/// A 3×3 rotation matrix, row-major: `m_ij` is row i, column j.
///
/// It is the matrix of ``CMAttitude``'s rotation from the device frame to the reference frame:
/// `v_reference = M · v_device`. Its third row is therefore the reference frame's up axis seen from
/// the device, which is minus ``CMDeviceMotion/gravity``.
public struct CMRotationMatrix: Sendable {
    /// Row 1, column 1.
    public var m11: Double
    /// Row 1, column 2.
    public var m12: Double
    /// Row 1, column 3.
    public var m13: Double
    /// Row 2, column 1.
    public var m21: Double
    /// Row 2, column 2.
    public var m22: Double
    /// Row 2, column 3.
    public var m23: Double
    /// Row 3, column 1.
    public var m31: Double
    /// Row 3, column 2.
    public var m32: Double
    /// Row 3, column 3.
    public var m33: Double
    /// Creates a matrix from its nine entries, row by row.
    public init(
        m11: Double, m12: Double, m13: Double,
        m21: Double, m22: Double, m23: Double,
        m31: Double, m32: Double, m33: Double
    ) {
        self.m11 = m11; self.m12 = m12; self.m13 = m13
        self.m21 = m21; self.m22 = m22; self.m23 = m23
        self.m31 = m31; self.m32 = m32; self.m33 = m33
    }
    /// All nine entries zero, as Apple's zero-initialised C struct (not a rotation).
    public init() { self.init(m11: 0, m12: 0, m13: 0, m21: 0, m22: 0, m23: 0, m31: 0, m32: 0, m33: 0) }
}

/// The reference frame an attitude is expressed in. In every frame z is vertical, pointing up.
public struct CMAttitudeReferenceFrame: OptionSet, Hashable, Sendable {
    /// The bit mask.
    public let rawValue: UInt
    /// Creates a frame set from its bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// x arbitrary and fixed when updates start; no magnetometer, so yaw drifts slowly.
    public static let xArbitraryZVertical = CMAttitudeReferenceFrame(rawValue: 1 << 0)
    /// x arbitrary at the start, then held by the magnetometer so yaw does not drift.
    public static let xArbitraryCorrectedZVertical = CMAttitudeReferenceFrame(rawValue: 1 << 1)
    /// x toward magnetic north.
    public static let xMagneticNorthZVertical = CMAttitudeReferenceFrame(rawValue: 1 << 2)
    /// x toward true north: needs a location for the declination (see `CMMotionManager.location`).
    public static let xTrueNorthZVertical = CMAttitudeReferenceFrame(rawValue: 1 << 3)
}

extension CMAcceleration {
    init(_ v: Vector3) { self.init(x: v.x, y: v.y, z: v.z) }
}
extension CMRotationRate {
    init(_ v: Vector3) { self.init(x: v.x, y: v.y, z: v.z) }
}
extension CMMagneticField {
    init(_ v: Vector3) { self.init(x: v.x, y: v.y, z: v.z) }
}
