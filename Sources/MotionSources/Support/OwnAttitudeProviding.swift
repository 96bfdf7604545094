import MotionFusion

/// A device's own attitude estimate, as a source received it (a phone's sensor fusion).
public struct OwnAttitude: Sendable, Hashable {
    /// Unit quaternion device → north–west–up (Core Motion's `xMagneticNorthZVertical`, or
    /// `xTrueNorthZVertical` when ``isTrueNorth``), scalar first.
    public var attitude: Quaternion
    /// The device's own gravity estimate in g, device frame, Core Motion's sign (face up reads z ≈ −1);
    /// `nil` when the device sends none (then gravity is derived from ``attitude``).
    public var gravity: Vector3?
    /// Host time of the attitude, seconds since boot.
    public var timestamp: Double
    /// Whether x of the reference frame is true rather than magnetic north.
    public var isTrueNorth: Bool

    /// Creates a value.
    public init(attitude: Quaternion, gravity: Vector3?, timestamp: Double, isTrueNorth: Bool = false) {
        self.attitude = attitude
        self.gravity = gravity
        self.timestamp = timestamp
        self.isTrueNorth = isTrueNorth
    }

    /// Gravity in g in the device frame: ``gravity`` when sent, else the reference frame's down
    /// (0, 0, −1) turned into the device frame by ``attitude``.
    public var effectiveGravity: Vector3 {
        gravity ?? attitude.inverseRotate(Vector3(0, 0, -1))
    }
}

/// A source that can carry its device's own attitude, which device motion then reports in place of
/// OpenCoreMotion's own fusion (a phone spec with `?motion=phone`).
///
/// ## Threading
/// Both members are safe from any thread; ``latestOwnAttitude()`` takes a lock briefly and never
/// calls back into the caller.
public protocol OwnAttitudeProviding: SensorSource {
    /// Whether device motion should use ``latestOwnAttitude()`` instead of fusing the raw sensors.
    /// Constant for the life of the source.
    var reportsOwnAttitude: Bool { get }
    /// The device's attitude at host time `timestamp` (seconds since boot): the newest one it sent at
    /// or before that time (so a batch's samples get the attitude of their own moment, not the
    /// batch's last), or `nil` when there is none or it is older than the source's silence limit.
    func ownAttitude(at timestamp: Double) -> OwnAttitude?
}
