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
    /// - Parameter interval: seconds between samples, clamped like ``accelerometerUpdateInterval``;
    ///   `nil` (the default) uses ``accelerometerUpdateInterval``.
    /// - Returns: a sequence that throws an `NSError` in ``CMErrorDomain`` when the sensor is not
    ///   available (`CMErrorNotAvailable`) or the source fails, and ends when a recording ends.
    public func accelerometerUpdates(interval: TimeInterval? = nil) -> AsyncThrowingStream<CMAccelerometerData, any Error> {
        updates(.accelerometer, stream: .accelerometer, interval: interval)
    }

    /// Gyroscope samples as an async sequence (beyond Apple). See ``accelerometerUpdates(interval:)``.
    public func gyroUpdates(interval: TimeInterval? = nil) -> AsyncThrowingStream<CMGyroData, any Error> {
        updates(.gyro, stream: .gyro, interval: interval)
    }

    /// Magnetometer samples as an async sequence (beyond Apple). See ``accelerometerUpdates(interval:)``.
    public func magnetometerUpdates(interval: TimeInterval? = nil) -> AsyncThrowingStream<CMMagnetometerData, any Error> {
        updates(.magnetometer, stream: .magnetometer, interval: interval)
    }

    /// Device motion as an async sequence (beyond Apple). See ``accelerometerUpdates(interval:)``;
    /// the reference frame follows ``startDeviceMotionUpdates(using:to:withHandler:)``, including
    /// its errors. Default frame ``CMAttitudeReferenceFrame/xArbitraryZVertical``.
    public func deviceMotionUpdates(
        using referenceFrame: CMAttitudeReferenceFrame = .xArbitraryZVertical,
        interval: TimeInterval? = nil
    ) -> AsyncThrowingStream<CMDeviceMotion, any Error> {
        updates(.deviceMotion, stream: .deviceMotion(referenceFrame), interval: interval)
    }

    private func updates<T: CMLogItem>(_ slot: Slot, stream: MotionStream, interval: TimeInterval?) -> AsyncThrowingStream<T, any Error> {
        AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            guard let hub, isAvailable(slot) else {
                continuation.finish(throwing: NSError.coreMotion(CMErrorNotAvailable, "no \(slot) on this source"))
                return
            }
            if case .deviceMotion(let frame) = stream,
               !(availableReferenceFrames.contains(frame) && Self.isSingleFrame(frame)) {
                continuation.finish(throwing: NSError.coreMotion(CMErrorNotAvailable, "reference frame \(frame.rawValue) is not available from this source"))
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
                    default:
                        break
                    }
                }
            )
            spec.showsDeviceMovementDisplay = false
            if stream == .deviceMotion(.xTrueNorthZVertical) {
                guard let location, let declination = MagneticDeclination.degrees(at: location) else {
                    continuation.finish(throwing: NSError.coreMotion(CMErrorTrueNorthNotAvailable, "true north needs a location: set CMMotionManager.location"))
                    return
                }
                spec.declination = declination
            }
            do {
                let id = try hub.add(spec)
                continuation.onTermination = { _ in hub.remove(id) }
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }
}
