/// A reference frame in which device motion is expressed: Core Motion's `CMAttitudeReferenceFrame`,
/// plus east–north–up for the BROAD benchmark. Every frame has z up; they differ by a rotation about z.
@frozen
public enum AttitudeReferenceFrame: Sendable, Hashable {
    /// x arbitrary and fixed at start, z up; never uses the magnetometer (`xArbitraryZVertical`).
    case arbitrary
    /// x arbitrary (the heading at start), z up; the magnetometer stops yaw drift
    /// (`xArbitraryCorrectedZVertical`).
    case arbitraryCorrected
    /// x magnetic north, y west, z up (`xMagneticNorthZVertical`).
    case magneticNorth
    /// x true north, y west, z up (`xTrueNorthZVertical`); `declination` in radians, positive east.
    case trueNorth(declination: Double)
    /// x east, y north, z up (the BROAD benchmark's earth frame): magnetic north turned by +90° about z
    /// when the magnetometer is used, else the arbitrary frame turned the same way.
    case eastNorthUp

    /// Whether the frame needs the magnetometer (9D fusion).
    @inlinable
    public var usesMagnetometer: Bool {
        switch self {
        case .arbitrary: false
        case .arbitraryCorrected, .magneticNorth, .trueNorth, .eastNorthUp: true
        }
    }

    /// Whether the frame's heading refers to a north (reported in degrees; −1 in the arbitrary frames).
    @inlinable
    public var isNorthReferenced: Bool {
        switch self {
        case .magneticNorth, .trueNorth, .eastNorthUp: true
        case .arbitrary, .arbitraryCorrected: false
        }
    }

    /// Whether the yaw is set to 0 at the first update (the arbitrary frames, as Core Motion does when
    /// updates start).
    @inlinable
    public var resetsYaw: Bool {
        switch self {
        case .arbitrary, .arbitraryCorrected: true
        case .magneticNorth, .trueNorth, .eastNorthUp: false
        }
    }
}

extension Quaternion {
    /// The compass heading, in degrees [0, 360) clockwise from north, of a device → north–west–up
    /// attitude: where the device's top (its y axis) points, or, when the device stands upright
    /// (its top within 30° of vertical), where its back (−z) faces.
    ///
    /// Pure arithmetic on the quaternion; no allocation.
    @inlinable
    public var compassHeading: Double {
        var v = rotate(Vector3(0, 1, 0))
        // Upright: the top's horizontal part is shorter than sin(30°); use the back instead.
        if v.x * v.x + v.y * v.y < 0.25 { v = rotate(Vector3(0, 0, -1)) }
        // North–west–up: east is −y.
        var degrees = _atan2(-v.y, v.x) * (180 / Double.pi)
        if degrees < 0 { degrees += 360 }
        if degrees >= 360 { degrees -= 360 }
        return degrees
    }

    /// Core Motion's rotation matrix of this attitude, `v_reference = M · v_device`; its third row is
    /// −gravity in the device frame. Same as ``Matrix3/init(_:)``.
    @inlinable
    public var rotationMatrix: Matrix3 { Matrix3(self) }

    /// This attitude with its yaw removed by a rotation about the reference z axis, and that rotation:
    /// `reset ⊗ self` has Core Motion yaw 0.
    @inlinable
    public var yawResetRotation: Quaternion { Quaternion.aboutZ(-eulerAngles.yaw) }
}

/// Device motion in one reference frame: what Core Motion's `CMDeviceMotion` carries, as values.
///
/// Units: seconds, unit quaternion device → reference (scalar `w` first), g, rad/s, µT, degrees.
@frozen
public struct FusedMotion: Sendable, Hashable {
    /// The time of the fused update, seconds (the gyroscope sample's timestamp).
    public var timestamp: Double
    /// Attitude device → reference frame.
    public var attitude: Quaternion
    /// Gravity in the device frame, g: `Rᵀ · (0, 0, −1)`.
    public var gravity: Vector3
    /// Accelerometer minus gravity, device frame, g.
    public var userAcceleration: Vector3
    /// Gyroscope minus its estimated bias, device frame, rad/s.
    public var rotationRate: Vector3
    /// Calibrated magnetic field, device frame, µT; zero in ``AttitudeReferenceFrame/arbitrary``.
    public var magneticField: Vector3
    /// Accuracy of ``magneticField``; ``MagneticCalibrationAccuracy/uncalibrated`` in
    /// ``AttitudeReferenceFrame/arbitrary``.
    public var magneticFieldAccuracy: MagneticCalibrationAccuracy
    /// Heading of the device in degrees [0, 360) (``Quaternion/compassHeading``) in the north frames; −1
    /// in the arbitrary frames.
    public var heading: Double

    /// Creates a value.
    @inlinable
    public init(timestamp: Double, attitude: Quaternion, gravity: Vector3, userAcceleration: Vector3,
                rotationRate: Vector3, magneticField: Vector3, magneticFieldAccuracy: MagneticCalibrationAccuracy,
                heading: Double) {
        self.timestamp = timestamp
        self.attitude = attitude
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.rotationRate = rotationRate
        self.magneticField = magneticField
        self.magneticFieldAccuracy = magneticFieldAccuracy
        self.heading = heading
    }

    /// Core Motion's roll, pitch and yaw of ``attitude``, radians.
    @inlinable public var eulerAngles: EulerAngles { attitude.eulerAngles }
}

/// Expresses attitude estimates in one reference frame, for one consumer: the one home of the
/// frame → quaternion and heading rules of live device motion and `coremotion fuse`.
///
/// - ``AttitudeReferenceFrame/arbitrary``: ``AttitudeEstimate/quaternion6D``, yaw reset to 0 at the
///   first update; no magnetic field (zero, uncalibrated); heading −1.
/// - ``AttitudeReferenceFrame/arbitraryCorrected``: ``AttitudeEstimate/quaternionArbitraryCorrected``,
///   yaw reset to 0 at the first update; heading −1.
/// - ``AttitudeReferenceFrame/magneticNorth``: ``AttitudeEstimate/quaternion``.
/// - ``AttitudeReferenceFrame/trueNorth(declination:)``: `q_z(−declination) ⊗ q_magnetic`.
/// - ``AttitudeReferenceFrame/eastNorthUp``: `q_z(+90°) ⊗ q_magnetic`.
///
/// In the north frames the heading is ``Quaternion/compassHeading`` of the (true or magnetic)
/// north–west–up attitude, always in [0, 360) as Core Motion documents it (until the magnetometer has
/// set north, that attitude is the arbitrary one); in the arbitrary frames it is −1.
///
/// A value type with O(1) work and no allocation per update; not shared between threads while mutated.
public struct ReferenceFrameProjection: Sendable, Hashable {
    /// The frame.
    public let frame: AttitudeReferenceFrame
    /// For the arbitrary frames: the rotation that takes the first update's yaw to 0.
    public private(set) var yawReset: Quaternion?

    /// Creates a projection into `frame`; the arbitrary frames reset the yaw at the first update.
    public init(_ frame: AttitudeReferenceFrame) {
        self.frame = frame
    }

    /// Expresses a device → base-frame attitude in ``frame``.
    /// - Parameters:
    ///   - base: attitude device → magnetic north–west–up when `isNorthReferenced`, else device → an
    ///     arbitrary z-up frame.
    ///   - isNorthReferenced: whether `base` is referenced to magnetic north (informative: the north frames
    ///     report a heading either way, as Core Motion does).
    /// - Returns: the attitude in ``frame`` and the heading in degrees (−1 when there is none).
    public mutating func express(_ base: Quaternion, isNorthReferenced: Bool) -> (attitude: Quaternion, heading: Double) {
        switch frame {
        case .arbitrary, .arbitraryCorrected:
            let reset = yawReset ?? base.yawResetRotation
            yawReset = reset
            return ((reset * base).normalized, -1)
        case .magneticNorth:
            return (base, base.compassHeading)
        case .trueNorth(let declination):
            let q = Quaternion.aboutZ(-declination) * base
            return (q, q.compassHeading)
        case .eastNorthUp:
            return (Quaternion.aboutZ(Double.pi / 2) * base, base.compassHeading)
        }
    }

    /// Device motion at `timestamp` from a filter estimate, in ``frame``.
    public mutating func motion(_ e: AttitudeEstimate, timestamp: Double) -> FusedMotion {
        let base: Quaternion
        var north = false
        switch frame {
        case .arbitrary: base = e.quaternion6D
        case .arbitraryCorrected: base = e.quaternionArbitraryCorrected
        case .magneticNorth, .trueNorth, .eastNorthUp:
            base = e.quaternion
            north = e.isMagneticNorthReferenced
        }
        let (q, heading) = express(base, isNorthReferenced: north)
        let hasField = frame != .arbitrary
        return FusedMotion(
            timestamp: timestamp, attitude: q, gravity: e.gravity, userAcceleration: e.userAcceleration,
            rotationRate: e.rotationRate,
            magneticField: hasField ? e.magneticField : .zero,
            magneticFieldAccuracy: hasField ? e.magneticFieldAccuracy : .uncalibrated,
            heading: heading
        )
    }
}
