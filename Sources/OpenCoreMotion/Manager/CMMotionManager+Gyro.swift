import Foundation

extension CMMotionManager {
    /// Seconds between gyroscope updates, clamped to the source's range (see the type's discussion).
    /// Default ``CMMotionManager/defaultUpdateInterval``.
    public var gyroUpdateInterval: TimeInterval {
        get { interval(.gyro) }
        set { setInterval(newValue, .gyro) }
    }

    /// Whether the source has a gyroscope.
    public var isGyroAvailable: Bool { isAvailable(.gyro) }

    /// Whether gyroscope updates are running: `true` after a successful start, `false` after a stop or
    /// a source failure.
    public var isGyroActive: Bool { isActive(.gyro) }

    /// The latest gyroscope sample: `nil` until the first sample after a start, then the newest one.
    public var gyroData: CMGyroData? { latest(.gyro, as: CMGyroData.self) }

    /// Starts gyroscope updates to be read from ``gyroData``. No effect when unavailable.
    public func startGyroUpdates() {
        start(.gyro, stream: .gyro, push: nil)
    }

    /// Starts gyroscope updates pushed to `handler` on `queue`: one operation per sample, in order,
    /// none dropped. No effect when unavailable. A source failure reaches the handler once as an
    /// error in ``CMErrorDomain`` and stops updates.
    public func startGyroUpdates(to queue: OperationQueue, withHandler handler: @escaping CMGyroHandler) {
        start(.gyro, stream: .gyro, push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops gyroscope updates. Once it returns, no further handler call for the gyroscope begins.
    public func stopGyroUpdates() {
        stop(.gyro)
    }
}
