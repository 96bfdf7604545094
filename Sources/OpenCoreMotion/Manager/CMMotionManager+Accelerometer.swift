import Foundation

extension CMMotionManager {
    /// Seconds between accelerometer updates, clamped to the source's range (see the type's discussion).
    /// Default ``CMMotionManager/defaultUpdateInterval``.
    public var accelerometerUpdateInterval: TimeInterval {
        get { interval(.accelerometer) }
        set { setInterval(newValue, .accelerometer) }
    }

    /// Whether the source has an accelerometer.
    public var isAccelerometerAvailable: Bool { isAvailable(.accelerometer) }

    /// Whether accelerometer updates are running: `true` after a successful start, `false` after a stop or
    /// a source failure.
    public var isAccelerometerActive: Bool { isActive(.accelerometer) }

    /// The latest accelerometer sample: `nil` until the first sample after a start, then the newest one.
    public var accelerometerData: CMAccelerometerData? { latest(.accelerometer, as: CMAccelerometerData.self) }

    /// Starts accelerometer updates to be read from ``accelerometerData``. No effect when unavailable.
    public func startAccelerometerUpdates() {
        start(.accelerometer, stream: .accelerometer, push: nil)
    }

    /// Starts accelerometer updates pushed to `handler` on `queue`: one operation per sample, in order,
    /// none dropped. No effect when unavailable. A source failure reaches the handler once as an
    /// error in ``CMErrorDomain`` and stops updates.
    public func startAccelerometerUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAccelerometerHandler) {
        start(.accelerometer, stream: .accelerometer, push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops accelerometer updates. Once it returns, no further handler call for the accelerometer begins.
    public func stopAccelerometerUpdates() {
        stop(.accelerometer)
    }
}
