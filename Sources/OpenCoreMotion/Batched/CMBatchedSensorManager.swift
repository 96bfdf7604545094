import Foundation
import MotionSources

/// High-rate accelerometer and device motion delivered in batches, as Core Motion's
/// `CMBatchedSensorManager`: handlers (or async sequences) receive arrays of samples, about one
/// second of them at a time, so the process wakes once a second instead of at every sample.
///
/// ```swift
/// let manager = CMBatchedSensorManager()
/// for try await batch in manager.accelerometerUpdates() {
///     for data in batch { print(data.timestamp, data.acceleration.z) }
/// }
/// ```
///
/// ## On Linux
/// The manager reads the process's default source (the one `CMMotionManager()` uses;
/// ``init(source:)`` takes one explicitly) at ``accelerometerDataFrequency`` (Apple's 800 Hz, or the
/// source's highest rate when lower) and ``deviceMotionDataFrequency`` (200 Hz, or the gyroscope's
/// highest rate when lower). The source is asked to hold samples up to one batch (its maximum
/// latency), so sources that batch in hardware — buffered IIO with a watermark, phones — wake this
/// process about once per batch. A batch holds the samples whose timestamps span one second
/// (``batchDuration``); the last, partial batch is dropped when updates stop. Device motion is fused in
/// ``CMAttitudeReferenceFrame/xArbitraryZVertical``.
///
/// Without the sensors, ``isAccelerometerSupported`` (``isDeviceMotionSupported``) is `false` and a
/// start delivers `CMErrorNotAvailable` (109) once; a source failure is delivered once and ends updates.
///
/// ## Threading
/// Every member may be called from any thread. Handlers run on a private serial queue, one batch at a
/// time, in order; once a stop method returns (called off that queue), no further batch begins.
open class CMBatchedSensorManager: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its state is behind a `Locked`, so sharing it between threads is safe.

    /// Seconds of samples in one batch (beyond Apple).
    public static let batchDuration: TimeInterval = 1

    /// Apple's accelerometer rate, Hz.
    static let accelerometerRate = 800.0
    /// Apple's device-motion rate, Hz.
    static let deviceMotionRate = 200.0

    private struct Batches<T> {
        var active = false
        var generation = 0
        var pending: [T] = []
        var latest: [T]?
        var handler: (([T]?, (any Error)?) -> Void)?
    }

    private struct State {
        var accelerometer = Batches<CMAccelerometerData>()
        var deviceMotion = Batches<CMDeviceMotion>()
    }

    private let manager: CMMotionManager
    private let state = Locked(State())
    private let queue = OperationQueue.serial(name: "OpenCoreMotion.CMBatchedSensorManager")

    /// A manager on the process's default source. The designated initializer, as on Apple platforms.
    public override init() {
        manager = CMMotionManager()
        super.init()
    }

    /// A manager on `source` (beyond Apple).
    public init(source: any SensorSource) {
        manager = CMMotionManager(source: source)
        super.init()
    }

    deinit {
        manager.stopAccelerometerUpdates()
        manager.stopDeviceMotionUpdates()
    }

    // MARK: Availability

    /// ``CMAuthorizationStatus/authorized`` when the accelerometer is supported, else
    /// ``CMAuthorizationStatus/restricted`` (Linux has no per-app motion permission).
    open class var authorizationStatus: CMAuthorizationStatus { isAccelerometerSupported ? .authorized : .restricted }

    /// Whether the default source has an accelerometer.
    open class var isAccelerometerSupported: Bool {
        SourceSelection.defaultSource?.info.sensors[.accelerometer] != nil
    }

    /// Whether the default source has an accelerometer and a gyroscope.
    open class var isDeviceMotionSupported: Bool {
        guard let sensors = SourceSelection.defaultSource?.info.sensors else { return false }
        return sensors[.accelerometer] != nil && sensors[.gyro] != nil
    }

    /// Accelerometer samples per second in the batches: 800, or the source's highest accelerometer
    /// rate when lower; 0 without an accelerometer.
    open var accelerometerDataFrequency: Int {
        guard let cap = manager.source?.info.sensors[.accelerometer] else { return 0 }
        return Self.wholeHertz(min(Self.accelerometerRate, cap.maximumRate))
    }

    /// Device-motion samples per second in the batches: 200, or the gyroscope's highest rate when
    /// lower; 0 without an accelerometer and a gyroscope.
    open var deviceMotionDataFrequency: Int {
        guard let sensors = manager.source?.info.sensors, sensors[.accelerometer] != nil, let gyro = sensors[.gyro] else { return 0 }
        return Self.wholeHertz(min(Self.deviceMotionRate, gyro.maximumRate))
    }

    /// `rate` in whole hertz, rounded down, except that a rate a rounding error below a whole number
    /// counts as that number (a recording at 0.01 s spacing is 99.99999999995 Hz by its timestamps).
    static func wholeHertz(_ rate: Double) -> Int {
        guard rate.isFinite, rate > 0 else { return 0 }
        // A rate derived from a recording's timestamps may be huge: clamped before the conversion.
        return Int(min(rate * (1 + 1e-9), 1e9).rounded(.down))  // safe: finite, in 0…1e9 Hz (guard and min above)
    }

    // MARK: Accelerometer

    /// Whether accelerometer batches are being collected.
    open var isAccelerometerActive: Bool { state.withLock { $0.accelerometer.active } }

    /// The latest complete accelerometer batch, oldest sample first; `nil` before the first.
    open var accelerometerBatch: [CMAccelerometerData]? { state.withLock { $0.accelerometer.latest } }

    /// Starts collecting accelerometer batches into ``accelerometerBatch``.
    open func startAccelerometerUpdates() {
        startAccelerometer(handler: nil)
    }

    /// Starts collecting accelerometer batches and passes each to `handler` (see the type's threading).
    open func startAccelerometerUpdates(handler: @escaping ([CMAccelerometerData]?, (any Error)?) -> Void) {
        startAccelerometer(handler: handler)
    }

    /// Stops accelerometer batches; the partial batch is dropped.
    open func stopAccelerometerUpdates() {
        manager.stopAccelerometerUpdates()
        let wait = state.withLock { s -> Bool in
            defer { s.accelerometer.active = false; s.accelerometer.generation += 1; s.accelerometer.pending = []; s.accelerometer.handler = nil }
            return s.accelerometer.active
        }
        if wait { drain() }
    }

    // MARK: Device motion

    /// Whether device-motion batches are being collected.
    open var isDeviceMotionActive: Bool { state.withLock { $0.deviceMotion.active } }

    /// The latest complete device-motion batch, oldest sample first; `nil` before the first.
    open var deviceMotionBatch: [CMDeviceMotion]? { state.withLock { $0.deviceMotion.latest } }

    /// Starts collecting device-motion batches into ``deviceMotionBatch``.
    open func startDeviceMotionUpdates() {
        startDeviceMotion(handler: nil)
    }

    /// Starts collecting device-motion batches and passes each to `handler` (see the type's threading).
    open func startDeviceMotionUpdates(handler: @escaping ([CMDeviceMotion]?, (any Error)?) -> Void) {
        startDeviceMotion(handler: handler)
    }

    /// Stops device-motion batches; the partial batch is dropped.
    open func stopDeviceMotionUpdates() {
        manager.stopDeviceMotionUpdates()
        let wait = state.withLock { s -> Bool in
            defer { s.deviceMotion.active = false; s.deviceMotion.generation += 1; s.deviceMotion.pending = []; s.deviceMotion.handler = nil }
            return s.deviceMotion.active
        }
        if wait { drain() }
    }

    // MARK: Async sequences

    /// Accelerometer batches as an async sequence, as Apple's Swift overlay. Iterating starts the
    /// updates (on a consumer of its own, independent of the handler methods); leaving the loop or
    /// cancelling the task stops them. Throws `CMErrorNotAvailable` without an accelerometer, or the
    /// source's failure.
    public func accelerometerUpdates() -> AccelerometerUpdates {
        let source = manager.source
        return AccelerometerUpdates {
            Self.stream(source: source) { batcher, handler in batcher.startAccelerometerUpdates(handler: handler) }
        }
    }

    /// Device-motion batches as an async sequence; see ``accelerometerUpdates()``.
    public func deviceMotionUpdates() -> DeviceMotionUpdates {
        let source = manager.source
        return DeviceMotionUpdates {
            Self.stream(source: source) { batcher, handler in batcher.startDeviceMotionUpdates(handler: handler) }
        }
    }

    /// The batches of ``accelerometerUpdates()``.
    public struct AccelerometerUpdates: AsyncSequence, Sendable {
        /// One batch.
        public typealias Element = [CMAccelerometerData]
        let makeStream: @Sendable () -> AsyncThrowingStream<Element, any Error>

        /// Iterates the batches.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncThrowingStream<Element, any Error>.Iterator
            /// The next batch, or `nil` when the updates ended.
            public mutating func next() async throws -> Element? { try await base.next() }
        }

        /// Starts the updates.
        public func makeAsyncIterator() -> Iterator { Iterator(base: makeStream().makeAsyncIterator()) }
    }

    /// The batches of ``deviceMotionUpdates()``.
    public struct DeviceMotionUpdates: AsyncSequence, Sendable {
        /// One batch.
        public typealias Element = [CMDeviceMotion]
        let makeStream: @Sendable () -> AsyncThrowingStream<Element, any Error>

        /// Iterates the batches.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncThrowingStream<Element, any Error>.Iterator
            /// The next batch, or `nil` when the updates ended.
            public mutating func next() async throws -> Element? { try await base.next() }
        }

        /// Starts the updates.
        public func makeAsyncIterator() -> Iterator { Iterator(base: makeStream().makeAsyncIterator()) }
    }

    private static func stream<T>(
        source: (any SensorSource)?,
        start: (CMBatchedSensorManager, @escaping ([T]?, (any Error)?) -> Void) -> Void
    ) -> AsyncThrowingStream<[T], any Error> {
        AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            guard let source else {
                continuation.finish(throwing: NSError.coreMotion(CMErrorNotAvailable, "no motion source"))
                return
            }
            let batcher = CMBatchedSensorManager(source: source)
            start(batcher) { batch, error in
                // Immutable samples the manager made for this consumer (see Unchecked.swift).
                if let batch {
                    nonisolated(unsafe) let batch = batch
                    continuation.yield(batch)
                } else { continuation.finish(throwing: error) }
            }
            // The manager is thread-safe by construction (its state is in a `Locked`).
            let stopping = UncheckedSendable(batcher)
            continuation.onTermination = { _ in
                stopping.value.stopAccelerometerUpdates()
                stopping.value.stopDeviceMotionUpdates()
            }
        }
    }

    // MARK: Batching

    private func startAccelerometer(handler: (([CMAccelerometerData]?, (any Error)?) -> Void)?) {
        stopAccelerometerUpdates()
        guard manager.isAccelerometerAvailable else {
            fail(handler, "no accelerometer on this source")
            return
        }
        let generation = state.withLock { s -> Int in
            s.accelerometer.generation += 1
            s.accelerometer.active = true
            s.accelerometer.handler = handler
            return s.accelerometer.generation
        }
        manager.accelerometerUpdateInterval = 1 / Double(accelerometerDataFrequency)
        let window = Self.batchDuration - 0.5 / Double(accelerometerDataFrequency)
        manager.start(.accelerometer, stream: .accelerometer, push: QueuePush(queue: queue) { [weak self] (data: CMAccelerometerData?, error: (any Error)?) in
            self?.receive(data, error, generation: generation, window: window, \.accelerometer)
        }, maximumLatency: Self.batchDuration)
    }

    private func startDeviceMotion(handler: (([CMDeviceMotion]?, (any Error)?) -> Void)?) {
        stopDeviceMotionUpdates()
        guard manager.isDeviceMotionAvailable else {
            fail(handler, "no accelerometer and gyroscope on this source")
            return
        }
        let generation = state.withLock { s -> Int in
            s.deviceMotion.generation += 1
            s.deviceMotion.active = true
            s.deviceMotion.handler = handler
            return s.deviceMotion.generation
        }
        manager.deviceMotionUpdateInterval = 1 / Double(deviceMotionDataFrequency)
        let window = Self.batchDuration - 0.5 / Double(deviceMotionDataFrequency)
        manager.start(.deviceMotion, stream: .deviceMotion(.xArbitraryZVertical), push: QueuePush(queue: queue) { [weak self] (data: CMDeviceMotion?, error: (any Error)?) in
            self?.receive(data, error, generation: generation, window: window, \.deviceMotion)
        }, maximumLatency: Self.batchDuration)
    }

    /// One sample (or the failure) on the private queue: the pending batch is delivered when this
    /// sample lies `window` seconds or more after its first one, and this sample starts the next.
    private func receive<T: CMLogItem>(_ sample: T?, _ error: (any Error)?, generation: Int, window: Double,
                                       _ path: WritableKeyPath<State, Batches<T>>) {
        var out: ((([T]?, (any Error)?) -> Void)?, [T]?, (any Error)?)?
        state.withLock { s in
            guard s[keyPath: path].active, s[keyPath: path].generation == generation else { return }
            if let error {
                out = (s[keyPath: path].handler, nil, error)
                s[keyPath: path].active = false
                s[keyPath: path].generation += 1
                s[keyPath: path].pending = []
                return
            }
            guard let sample else { return }
            guard let first = s[keyPath: path].pending.first, sample.timestamp - first.timestamp >= window else {
                s[keyPath: path].pending.append(sample)
                return
            }
            let batch = s[keyPath: path].pending
            s[keyPath: path].pending = [sample]
            s[keyPath: path].latest = batch
            out = (s[keyPath: path].handler, batch, nil)
        }
        if let (handler, batch, error) = out { handler?(batch, error) }
    }

    private func fail<T>(_ handler: (([T]?, (any Error)?) -> Void)?, _ message: String) {
        guard let handler else { return }
        nonisolated(unsafe) let h = handler
        queue.addOperation { h(nil, NSError.coreMotion(CMErrorNotAvailable, message)) }
    }

    /// Waits for the batch being delivered, unless called from it.
    private func drain() {
        guard OperationQueue.current !== queue else { return }
        queue.addOperations([BlockOperation {}], waitUntilFinished: true)
    }
}
