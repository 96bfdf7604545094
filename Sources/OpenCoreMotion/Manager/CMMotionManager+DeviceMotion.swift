import Foundation

extension CMMotionManager {
    /// Seconds between device-motion updates, clamped to the gyroscope's range (see the type's
    /// discussion). Default ``CMMotionManager/defaultUpdateInterval``.
    public var deviceMotionUpdateInterval: TimeInterval {
        get { interval(.deviceMotion) }
        set { setInterval(newValue, .deviceMotion) }
    }

    /// Whether device motion can be computed: the source has an accelerometer and a gyroscope.
    public var isDeviceMotionAvailable: Bool { isAvailable(.deviceMotion) }

    /// Whether device-motion updates are running.
    public var isDeviceMotionActive: Bool { isActive(.deviceMotion) }

    /// The latest device motion: `nil` until the first estimate after a start, then the newest one.
    public var deviceMotion: CMDeviceMotion? { latest(.deviceMotion, as: CMDeviceMotion.self) }

    /// Starts device-motion updates in ``CMAttitudeReferenceFrame/xArbitraryZVertical``, to be read
    /// from ``deviceMotion``.
    public func startDeviceMotionUpdates() {
        startDeviceMotionUpdates(using: .xArbitraryZVertical)
    }

    /// Starts device-motion updates in `referenceFrame`, to be read from ``deviceMotion``.
    /// A frame outside ``availableReferenceFrames`` does nothing.
    public func startDeviceMotionUpdates(using referenceFrame: CMAttitudeReferenceFrame) {
        start(.deviceMotion, stream: .deviceMotion(referenceFrame), push: nil)
    }

    /// Starts device-motion updates in ``CMAttitudeReferenceFrame/xArbitraryZVertical``, pushed to
    /// `handler` on `queue`.
    public func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMDeviceMotionHandler) {
        startDeviceMotionUpdates(using: .xArbitraryZVertical, to: queue, withHandler: handler)
    }

    /// Starts device-motion updates in `referenceFrame`, pushed to `handler` on `queue`: one
    /// operation per update, in order, none dropped.
    ///
    /// The handler receives an error in ``CMErrorDomain``:
    /// - `CMErrorTrueNorthNotAvailable` (102) for ``CMAttitudeReferenceFrame/xTrueNorthZVertical``
    ///   without a ``location``; updates do not start;
    /// - `CMErrorNotAvailable` (109) for a frame the source cannot provide; updates do not start;
    /// - `CMErrorDeviceRequiresMovement` (101) once, with ``showsDeviceMovementDisplay``, while the
    ///   magnetometer needs movement to calibrate; updates go on;
    /// - the source's failure, after which updates stop.
    public func startDeviceMotionUpdates(
        using referenceFrame: CMAttitudeReferenceFrame,
        to queue: OperationQueue,
        withHandler handler: @escaping CMDeviceMotionHandler
    ) {
        start(.deviceMotion, stream: .deviceMotion(referenceFrame), push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops device-motion updates. Once it returns, no further handler call begins.
    public func stopDeviceMotionUpdates() {
        stop(.deviceMotion)
    }

    static func isSingleFrame(_ f: CMAttitudeReferenceFrame) -> Bool {
        f.rawValue != 0 && f.rawValue & (f.rawValue - 1) == 0
    }
}
