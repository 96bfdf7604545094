import Foundation
import MotionFusion
#if Recorder
import MotionRecorderStore
#endif
import MotionSources

/// The user's activity (stationary, walking, running, cycling, in a vehicle) from the motion sensors, as
/// Core Motion's `CMMotionActivityManager`.
///
/// ```swift
/// let manager = CMMotionActivityManager()
/// if CMMotionActivityManager.isActivityAvailable() {
///     manager.startActivityUpdates(to: .main) { activity in
///         guard let activity else { return }
///         if activity.walking { print("walking since", activity.startDate) }
///     }
/// }
/// ```
///
/// ## On Linux
/// The accelerometer (and the gyroscope when the source has one) of the source (`CMMotionActivityManager()`
/// uses the process's default source, as ``CMMotionManager``) is read at 50 Hz and classified by
/// ``ActivityClassifier`` in MotionFusion: steps and their cadence (``StepDetector``), the spread of the
/// acceleration magnitude, its vibration above 5 Hz and the rotation rate, with hysteresis (a new activity
/// is reported after 2.5 s, 8 s for vehicles). How well each class is recognised (`coremotion bench
/// activity`; README):
/// - stationary, walking, running: measured on real recordings (Oxford walks: 98.5 % of the time walking;
///   BROAD rest phases: 91 % stationary once 5 s have passed since the last movement) and on the simulator;
/// - automotive and cycling: only on the simulator's `drive` and `cycle` scenarios (95 %); no labelled
///   recording of them was available, so treat them as experimental. Cycling needs a gyroscope (without
///   one a bicycle reads as automotive).
///
/// Updates arrive when the activity or its confidence changes; the first one, `unknown`, as soon as the
/// first sample arrives.
///
/// History (``queryActivityStarting(from:to:to:withHandler:)``) is classified from the accelerometer
/// samples ``CMSensorRecorder`` stored (run `coremotion record` to collect them), at most 7 days back,
/// without a gyroscope (so cycling is not reported there).
///
/// ## Threading
/// Every member may be called from any thread. Handlers run on the queue given, in order. Once
/// ``stopActivityUpdates()`` returns (called off that queue), no further call of the handler begins.
open class CMMotionActivityManager: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The source read, or `nil` when the process has none.
    let source: (any SensorSource)?
    /// The recorder database history is read from.
    let databasePath: String

    private struct Live {
        var manager: CMMotionManager
        var generation: Int
        var classifier = ActivityClassifier()
        var anchor = Date()
        var firstTimestamp: Double?
        var queue: OperationQueue
        var handler: CMMotionActivityHandler
        var failure: (@Sendable (NSError) -> Void)?
        var delivered = false
    }

    private let state = Locked<(live: Live?, generation: Int)>((nil, 0))
    private let sensorQueue = OperationQueue.serial(name: "OpenCoreMotion.CMMotionActivityManager")

    /// Sensor rate (Hz) of live classification.
    static let rate = 50.0

    /// A manager on the process's default source and the recorder's default database.
    ///
    /// This is the designated initializer, as on Apple platforms: a subclass (a test's mock) calls `super.init()`.
    public override init() {
        source = SourceSelection.defaultSource
        databasePath = RecordingStore.defaultPath()
        super.init()
    }

    /// A manager on `source`, with history from the recorder database at `databasePath` (beyond Apple).
    public convenience init(source: any SensorSource, databasePath: String = RecordingStore.defaultPath()) {
        self.init(optionalSource: source, databasePath: databasePath)
    }

    init(optionalSource: (any SensorSource)?, databasePath: String) {
        source = optionalSource
        self.databasePath = databasePath
        super.init()
    }

    deinit {
        let manager = state.withLock { s -> CMMotionManager? in
            let m = s.live?.manager
            s.live = nil
            s.generation += 1
            return m
        }
        manager?.stopAccelerometerUpdates()
        manager?.stopGyroUpdates()
    }

    static func hasAccelerometer(_ source: (any SensorSource)?) -> Bool {
        source?.info.sensors[.accelerometer] != nil
    }

    /// Whether activity is available: the default source has an accelerometer.
    open class func isActivityAvailable() -> Bool { hasAccelerometer(SourceSelection.defaultSource) }

    /// ``CMAuthorizationStatus/authorized`` when activity is available, else
    /// ``CMAuthorizationStatus/restricted`` (Linux has no per-app motion permission: the device files'
    /// permissions decide, and the source reports them when it starts).
    open class func authorizationStatus() -> CMAuthorizationStatus {
        isActivityAvailable() ? .authorized : .restricted
    }

    // MARK: History

    /// Reports on `queue` the activities between `start` and `end`, classified from the accelerometer
    /// samples ``CMSensorRecorder`` stored, in time order (each with the date it began; a gap of more
    /// than 5 s in the recording starts an `unknown` activity).
    ///
    /// The handler runs once, with the list (empty when nothing was recorded in the range) or an error in
    /// ``CMErrorDomain``: `CMErrorMotionActivityNotAvailable` without an accelerometer,
    /// `CMErrorInvalidParameter` when `end` is before `start`, `CMErrorUnknown` when the database cannot be
    /// read. Only the last 7 days are kept.
    open func queryActivityStarting(from start: Date, to end: Date, to queue: OperationQueue,
                                    withHandler handler: @escaping CMMotionActivityQueryHandler) {
        nonisolated(unsafe) let handler = handler
        // The manager is thread-safe by construction and the activities are immutable samples.
        let manager = UncheckedSendable(self)
        sensorQueue.addOperation {
            let result = UncheckedSendable(manager.value.history(from: start, to: end))
            queue.addOperation {
                switch result.value {
                case .success(let list): handler(list, nil)
                case .failure(let error): handler(nil, error)
                }
            }
        }
    }

    func history(from start: Date, to end: Date) -> Result<[CMMotionActivity], NSError> {
        guard Self.hasAccelerometer(source), let source else {
            return .failure(.coreMotion(CMErrorMotionActivityNotAvailable, "activity is not available: the source has no accelerometer"))
        }
        guard end >= start else {
            return .failure(.coreMotion(CMErrorInvalidParameter, "the end date is before the start date"))
        }
        let now = Date()
        let from = max(start, now.addingTimeInterval(-CMPedometer.historyLimit))
        let to = min(end, now)
        guard from < to, FileManager.default.fileExists(atPath: databasePath) else { return .success([]) }
        let recorder = CMSensorRecorder(source: source, databasePath: databasePath)
        var classifier = ActivityClassifier()
        var out: [CMMotionActivity] = []
        var chunkStart = from
        while chunkStart < to {
            let chunkEnd = min(chunkStart.addingTimeInterval(AccelerometerRecording.maximumDuration), to)
            guard let list = recorder.accelerometerData(from: chunkStart, to: chunkEnd) else {
                return .failure(.coreMotion(CMErrorUnknown, "the recorder's database \(databasePath) could not be read", path: databasePath))
            }
            for sample in list.samples {
                let a = sample.acceleration
                let t = sample.startDate.timeIntervalSince1970
                let first = out.isEmpty
                guard classifier.process(timestamp: t, x: a.x, y: a.y, z: a.z) || first else { continue }
                let began = classifier.activityStart
                let activity = CMMotionActivity(kind: classifier.activity, confidence: .init(classifier.confidence),
                                                startDate: Date(timeIntervalSince1970: began),
                                                timestamp: sample.timestamp - (t - began))
                // A change of confidence alone updates the last record rather than adding one.
                if let last = out.last, last.kind == activity.kind, last.startDate == activity.startDate {
                    out[out.count - 1] = activity
                } else {
                    out.append(activity)
                }
            }
            chunkStart = chunkEnd
        }
        return .success(out)
    }

    // MARK: Live updates

    /// Starts live updates on `queue`: the handler receives the current activity when the first sample
    /// arrives (`unknown`, low confidence) and again whenever the activity or its confidence changes.
    ///
    /// Without an accelerometer, or when the source fails, the handler receives `nil` once and updates
    /// stop (Apple's handler has no error argument; ``activityUpdates()`` throws the error). Calling again
    /// replaces the queue and handler and restarts the classification.
    open func startActivityUpdates(to queue: OperationQueue, withHandler handler: @escaping CMMotionActivityHandler) {
        start(queue: queue, handler: handler, failure: nil)
    }

    func start(queue: OperationQueue, handler: @escaping CMMotionActivityHandler,
               failure: (@Sendable (NSError) -> Void)?) {
        guard Self.hasAccelerometer(source), let source else {
            nonisolated(unsafe) let handler = handler
            queue.addOperation {
                failure?(.coreMotion(CMErrorMotionActivityNotAvailable, "activity is not available: the source has no accelerometer"))
                handler(nil)
            }
            return
        }
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 1 / Self.rate
        manager.gyroUpdateInterval = 1 / Self.rate
        let (old, generation) = state.withLock { s -> (CMMotionManager?, Int) in
            let old = s.live?.manager
            s.generation += 1
            s.live = Live(manager: manager, generation: s.generation, queue: queue, handler: handler, failure: failure)
            return (old, s.generation)
        }
        old?.stopAccelerometerUpdates()
        old?.stopGyroUpdates()
        if manager.isGyroAvailable {
            manager.startGyroUpdates(to: sensorQueue) { [weak self] data, _ in
                guard let self, let data else { return }
                let r = data.rotationRate
                self.state.withLock { s in
                    guard s.live?.generation == generation else { return }
                    s.live?.classifier.processRotationRate(timestamp: data.timestamp, x: r.x, y: r.y, z: r.z)
                }
            }
        }
        manager.startAccelerometerUpdates(to: sensorQueue) { [weak self] data, error in
            self?.receive(data, error, generation: generation)
        }
    }

    /// Stops live updates. Once it returns (called off the handler's queue), no further call of the
    /// handler begins.
    open func stopActivityUpdates() {
        let (manager, queue) = state.withLock { s -> (CMMotionManager?, OperationQueue?) in
            let live = s.live
            s.live = nil
            s.generation += 1
            return (live?.manager, live?.queue)
        }
        manager?.stopAccelerometerUpdates()
        manager?.stopGyroUpdates()
        if OperationQueue.current !== sensorQueue {
            sensorQueue.addOperations([BlockOperation {}], waitUntilFinished: true)
        }
        if let queue, OperationQueue.current !== queue {
            queue.addOperations([BlockOperation {}], waitUntilFinished: true)
        }
    }

    /// One accelerometer sample or a source error, on the sensor queue.
    private func receive(_ data: CMAccelerometerData?, _ error: (any Error)?, generation: Int) {
        var out: (OperationQueue, CMMotionActivity)?
        var failed: Live?
        var stop: CMMotionManager?
        state.withLock { s in
            guard var live = s.live, live.generation == generation else { return }
            if let error {
                failed = live
                stop = live.manager
                s.live = nil
                s.generation += 1
                _ = error
                return
            }
            guard let data else { return }
            let t = data.timestamp
            if live.firstTimestamp == nil { live.firstTimestamp = t }
            let a = data.acceleration
            let changed = live.classifier.process(timestamp: t, x: a.x, y: a.y, z: a.z)
            if changed || !live.delivered {
                live.delivered = true
                let c = live.classifier
                let first = live.firstTimestamp ?? t
                let began = c.activityStart
                out = (live.queue, CMMotionActivity(kind: c.activity, confidence: .init(c.confidence),
                                                    startDate: live.anchor.addingTimeInterval(began - first),
                                                    timestamp: began))
            }
            s.live = live
        }
        if let (queue, activity) = out {
            // The manager is thread-safe by construction and the activity is an immutable sample.
            let weakSelf = UncheckedWeak(self)
            let activity = UncheckedSendable(activity)
            queue.addOperation {
                guard let handler = weakSelf.value?.state.withLock({ $0.live?.generation == generation ? $0.live?.handler : nil }) else { return }
                handler(activity.value)
            }
        }
        if let failed {
            stop?.stopAccelerometerUpdates()
            stop?.stopGyroUpdates()
            let nsError = (error ?? NSError.coreMotion(CMErrorUnknown, "the source failed")) as NSError
            nonisolated(unsafe) let handler = failed.handler
            let failure = failed.failure
            failed.queue.addOperation {
                failure?(nsError)
                handler(nil)
            }
        }
    }
}

extension CMMotionActivityManager {
    /// Live activities as an async sequence (beyond Apple): what ``startActivityUpdates(to:withHandler:)``
    /// would deliver.
    ///
    /// ```swift
    /// for try await activity in CMMotionActivityManager().activityUpdates() {
    ///     print(activity)
    /// }
    /// ```
    ///
    /// Each sequence is its own consumer. Records are buffered without limit. Leaving the loop or
    /// cancelling the task stops it.
    ///
    /// - Returns: a sequence that throws an `NSError` in ``CMErrorDomain`` when activity is not available
    ///   or the source fails.
    public func activityUpdates() -> AsyncThrowingStream<CMMotionActivity, any Error> {
        let manager = CMMotionActivityManager(optionalSource: source, databasePath: databasePath)
        let queue = OperationQueue.serial()
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            manager.start(queue: queue, handler: { activity in
                // Immutable samples the manager made for this consumer (see Unchecked.swift).
                if let activity {
                    nonisolated(unsafe) let activity = activity
                    continuation.yield(activity)
                }
            }, failure: { error in
                continuation.finish(throwing: error)
            })
            // The manager is thread-safe by construction (its state is in a `Locked`).
            let stopping = UncheckedSendable(manager)
            continuation.onTermination = { _ in stopping.value.stopActivityUpdates() }
        }
    }
}
