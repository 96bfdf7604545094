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
    /// ``isAccelerometerActive`` or ``accelerometerData``. Samples are buffered, so none is lost while
    /// the loop body runs: without limit from a source on a clock (a device, a phone, a replay in real
    /// time), which is never held back. A source that runs as fast as its consumers take its samples (the
    /// simulator or a replay in virtual time) waits instead, once 4096 samples wait for the loop, until
    /// the loop has taken one (see <doc:DeliverySemantics>). Cancelling the task (or leaving the loop)
    /// ends the sequence and stops the sensor when no other consumer needs it.
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
        let checked = check(slot, stream: stream)
        // A virtual-time source would fill memory ahead of a slow loop: its sequence holds a bounded
        // buffer, and the source's thread waits for room (`yieldWaitingForRoom`).
        let paced = if case .success(let (hub, _)) = checked { hub.isPacedByConsumers } else { false }
        let policy: AsyncThrowingStream<T, any Error>.Continuation.BufferingPolicy =
            paced ? .bufferingOldest(QueuePush.pacedBacklog) : .unbounded
        return AsyncThrowingStream(bufferingPolicy: policy) { continuation in
            let hub: SourceHub
            let declination: Double
            switch checked {
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
                        if paced { continuation.yieldWaitingForRoom(d) } else { continuation.yield(d) }
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

extension AsyncThrowingStream.Continuation {
    /// Yields `element` into a bounded buffer (`bufferingOldest`), waiting on the calling thread (a
    /// virtual-time source's own) while the buffer is full, until the consumer has taken one element or
    /// the sequence has ended (then the element goes nowhere, as with any yield after the end). Checks for
    /// room every millisecond: the stream says nothing when an element is taken.
    func yieldWaitingForRoom(_ element: Element) {
        // The package's own samples, immutable once made, handed to the stream once (see Unchecked.swift);
        // a refused one comes back to this thread, which tries again.
        nonisolated(unsafe) var element = element
        while true {
            switch yield(element) {
            case .enqueued, .terminated:
                return
            case .dropped(let refused):
                element = refused
                usleep(1000)
            @unknown default:
                return
            }
        }
    }
}
