import Foundation

extension CMMotionManager {
    /// Seconds between magnetometer updates, clamped to the source's range (see the type's discussion).
    /// Default ``CMMotionManager/defaultUpdateInterval``.
    public var magnetometerUpdateInterval: TimeInterval {
        get { interval(.magnetometer) }
        set { setInterval(newValue, .magnetometer) }
    }

    /// Whether the source has a magnetometer.
    public var isMagnetometerAvailable: Bool { isAvailable(.magnetometer) }

    /// Whether magnetometer updates are running: `true` after a successful start, `false` after a stop or
    /// a source failure.
    public var isMagnetometerActive: Bool { isActive(.magnetometer) }

    /// The latest magnetometer sample: `nil` until the first sample after a start, then the newest one.
    public var magnetometerData: CMMagnetometerData? { latest(.magnetometer, as: CMMagnetometerData.self) }

    /// Starts magnetometer updates to be read from ``magnetometerData``. No effect when unavailable.
    public func startMagnetometerUpdates() {
        start(.magnetometer, stream: .magnetometer, push: nil)
    }

    /// Starts magnetometer updates pushed to `handler` on `queue`: one operation per sample, in order,
    /// none dropped. No effect when unavailable. A source failure reaches the handler once as an
    /// error in ``CMErrorDomain`` and stops updates.
    public func startMagnetometerUpdates(to queue: OperationQueue, withHandler handler: @escaping CMMagnetometerHandler) {
        start(.magnetometer, stream: .magnetometer, push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops magnetometer updates. Once it returns, no further handler call for the magnetometer begins.
    public func stopMagnetometerUpdates() {
        stop(.magnetometer)
    }
}
