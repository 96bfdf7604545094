import Foundation

extension CMMotionManager {
    /// Accelerometer samples as an async sequence (beyond Apple).
    ///
    /// ```swift
    /// for try await sample in manager.accelerometerUpdates(interval: 0.02) {
    ///     print(sample.acceleration.z)
    /// }
    /// ```
    ///
    /// Each sequence is its own consumer of the shared source: it does not change
    /// ``isAccelerometerActive`` or ``accelerometerData``. Samples are buffered without limit, so none
    /// is lost while the loop body runs. Cancelling the task (or leaving the loop) ends the sequence
    /// and stops the sensor when no other consumer needs it.
    ///
    /// - Parameters:
    ///   - interval: seconds between samples, clamped like ``accelerometerUpdateInterval``; `nil` (the
    ///     default) uses ``accelerometerUpdateInterval``.
    ///   - maximumLatency: seconds a sample may wait so the source can deliver several at once and
    ///     wake less often (Android's report latency, an IIO watermark); timestamps and order are kept.
    ///     Default 0: each sample as soon as it is taken. Any other consumer of the source asking for
    ///     less wins.
    /// - Returns: a sequence that throws an `NSError` in ``CMErrorDomain`` when the sensor is not
    ///   available (`CMErrorNotAvailable`) or the source fails, and ends when a recording ends.
    public func accelerometerUpdates(interval: TimeInterval? = nil, maximumLatency: TimeInterval = 0) -> AsyncThrowingStream<CMAccelerometerData, any Error> {
        updates(.accelerometer, stream: .accelerometer, interval: interval, maximumLatency: maximumLatency)
    }

    /// Gyroscope samples as an async sequence (beyond Apple). See ``accelerometerUpdates(interval:maximumLatency:)``.
    public func gyroUpdates(interval: TimeInterval? = nil, maximumLatency: TimeInterval = 0) -> AsyncThrowingStream<CMGyroData, any Error> {
        updates(.gyro, stream: .gyro, interval: interval, maximumLatency: maximumLatency)
    }

    /// Magnetometer samples as an async sequence (beyond Apple). See ``accelerometerUpdates(interval:maximumLatency:)``.
    public func magnetometerUpdates(interval: TimeInterval? = nil, maximumLatency: TimeInterval = 0) -> AsyncThrowingStream<CMMagnetometerData, any Error> {
        updates(.magnetometer, stream: .magnetometer, interval: interval, maximumLatency: maximumLatency)
    }

    /// Device motion as an async sequence (beyond Apple). See ``accelerometerUpdates(interval:maximumLatency:)``;
    /// the reference frame follows ``startDeviceMotionUpdates(using:to:withHandler:)``, including
    /// its errors. Default frame ``CMAttitudeReferenceFrame/xArbitraryZVertical``.
    public func deviceMotionUpdates(
        using referenceFrame: CMAttitudeReferenceFrame = .xArbitraryZVertical,
        interval: TimeInterval? = nil,
        maximumLatency: TimeInterval = 0
    ) -> AsyncThrowingStream<CMDeviceMotion, any Error> {
        updates(.deviceMotion, stream: .deviceMotion(referenceFrame), interval: interval, maximumLatency: maximumLatency)
    }

    private func updates<T: CMLogItem>(
        _ slot: Slot, stream: MotionStream, interval: TimeInterval?, maximumLatency: TimeInterval
    ) -> AsyncThrowingStream<T, any Error> {
        AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            let hub: SourceHub
            let declination: Double
            switch check(slot, stream: stream) {
            case .success(let passed): (hub, declination) = passed
            case .failure(let refusal):
                continuation.finish(throwing: refusal.error)
                return
            }
            var spec = ConsumerSpec(
                stream: stream,
                interval: Self.clamp(interval ?? self.interval(slot), slot: slot, info: hub.source.info),
                deliver: { output in
                    switch output {
                    case .accelerometer(let d as T), .gyro(let d as T), .magnetometer(let d as T), .deviceMotion(let d as T):
                        continuation.yield(d)
                    case .failure(let error):
                        continuation.finish(throwing: error)
                    case .finished:
                        continuation.finish()
                    case .notice:
                        break  // notices and source interruptions do not end a sequence
                    default:
                        break  // an output of another slot's type (never routed here)
                    }
                }
            )
            spec.maximumLatency = maximumLatency.isFinite ? max(0, maximumLatency) : 0
            spec.declination = declination
            do {
                let id = try hub.add(spec)
                continuation.onTermination = { _ in hub.remove(id) }
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }
}
