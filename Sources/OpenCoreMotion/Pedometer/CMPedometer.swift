import Foundation
import MotionFusion
#if Recorder
import MotionRecorderStore
#endif
import MotionSources

/// Step counting, distance, cadence and pace from the accelerometer, as Core Motion's `CMPedometer`.
///
/// ```swift
/// let pedometer = CMPedometer()
/// if CMPedometer.isStepCountingAvailable() {
///     pedometer.startUpdates(from: Date()) { data, error in
///         guard let data else { return }
///         print(data.numberOfSteps, data.distance ?? 0, data.currentCadence ?? 0)
///     }
/// }
/// ```
///
/// ## On Linux
/// Steps are detected in the accelerometer of the source (`CMPedometer()` uses the process's default
/// source, as ``CMMotionManager``): ``StepDetector`` in MotionFusion, on the magnitude of the
/// acceleration, so it works wherever the device is carried (hand, pocket, armband, bag). On the
/// Oxford Step Counter walks its mean absolute error is about 1.4 % in-sample and 1.6–1.7 %
/// cross-validated by user and by placement (`coremotion bench steps`; README). As on Apple devices,
/// steps are reported once a few regular steps confirm walking (the first update carries them
/// together), so brief jolts are not counted.
///
/// Distance is the number of steps times a step length from ``StepLengthModel`` (height × a linear
/// function of cadence, after Renaudin et al. 2012), for a walker of ``StepLengthModel/height``
/// (default 1.70 m; set ``stepLengthModel`` beyond Apple).
///
/// History (``queryPedometerData(from:to:withHandler:)`` and a past start date for
/// ``startUpdates(from:withHandler:)``) comes from the accelerometer samples ``CMSensorRecorder`` stores
/// (run `coremotion record` to collect them): the steps in a range are detected in the recorded
/// samples of that range, at most 7 days back.
///
/// Floors come from the barometer when there is one (``isFloorCountingAvailable()``; the process's
/// default barometer, as ``CMAltimeter``'s, or the one given to ``init(source:barometer:databasePath:)``):
/// ``FloorCounter`` in MotionFusion counts a floor each 3 m of height gained or lost while walking (a
/// floor is counted past 2.4 m, and the reference then moves by whole floors, so noise never counts
/// twice); height changed while not walking (a lift) is not counted. Live updates carry the floors since
/// they started; history queries have no pressure (the recorder stores the accelerometer only), so their
/// floor properties are `nil`, as they are without a barometer.
///
/// ## Threading
/// Every member may be called from any thread. Handlers run on a private serial queue, one call at a
/// time, in order. Once ``stopUpdates()`` (or ``stopEventUpdates()``) returns, no further call of that
/// handler begins.
open class CMPedometer: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The source read, or `nil` when the process has none.
    let source: (any SensorSource)?
    /// The recorder database history is read from.
    let databasePath: String
    /// The barometer floors are counted from, or `nil`.
    let barometer: (any BarometerSource)?

    private struct Live {
        var manager: CMMotionManager
        var generation: Int
        var accumulator: PedometerAccumulator
        var firstTimestamp: Double?
        var anchor: Date
        var updates: Updates?
        var events: CMPedometerEventHandler?
        var floors: FloorCounter?
        var nextPressureTime = -Double.infinity
    }

    private struct Updates {
        var handler: CMPedometerHandler
        var from: Date
        var historySteps: Int
        var historyDistance: Double
        var historyActiveTime: Double
        var baseSteps: Int
        var baseDistance: Double
        var baseActiveTime: Double
        var baseAscended: Int
        var baseDescended: Int
    }

    private struct State {
        var live: Live?
        var generation = 0
        var lengthModel = StepLengthModel()
    }

    private let state = Locked(State())
    private let queue = OperationQueue.serial(name: "OpenCoreMotion.CMPedometer")

    /// Accelerometer rate of live step detection (Hz), the recorder's rate.
    static let rate = 50.0
    /// Barometer readings per second for floors.
    static let pressureRate = 25.0
    /// How far back history is kept (s): 7 days, as on Apple devices.
    static let historyLimit: TimeInterval = 7 * 24 * 3600

    /// A pedometer on the process's default source and the recorder's default database.
    ///
    /// This is the designated initializer, as on Apple platforms: a subclass (a test's mock) calls `super.init()`.
    public override init() {
        source = SourceSelection.defaultSource
        databasePath = RecordingStore.defaultPath()
        barometer = AltimeterSelection.defaultBarometer
        super.init()
    }

    /// A pedometer on `source`, with history from the recorder database at `databasePath` (beyond Apple).
    ///
    /// - Parameters:
    ///   - source: where the accelerometer comes from.
    ///   - databasePath: the ``CMSensorRecorder`` database that history is read from. Default: the
    ///     process's default database.
    public convenience init(source: any SensorSource, databasePath: String = RecordingStore.defaultPath()) {
        self.init(optionalSource: source, databasePath: databasePath, barometer: nil)
    }

    /// A pedometer on `source` that counts floors from `barometer` (beyond Apple).
    ///
    /// The barometer is read at the accelerometer samples' timestamps (25 times a second), so a
    /// virtual-time barometer must share the source's clock (for the simulator: the same virtual start).
    public convenience init(source: any SensorSource, barometer: any BarometerSource,
                            databasePath: String = RecordingStore.defaultPath()) {
        self.init(optionalSource: source, databasePath: databasePath, barometer: barometer)
    }

    init(optionalSource: (any SensorSource)?, databasePath: String, barometer: (any BarometerSource)? = nil) {
        source = optionalSource
        self.databasePath = databasePath
        self.barometer = barometer
        super.init()
    }

    deinit {
        let manager = state.withLock { $0.live?.manager }
        manager?.stopAccelerometerUpdates()
    }

    /// The step-length model used for distance and pace (beyond Apple). Default: a 1.70 m walker.
    /// Changes apply to steps counted afterwards.
    public var stepLengthModel: StepLengthModel {
        get { state.withLock { $0.lengthModel } }
        set {
            state.withLock { s in
                s.lengthModel = newValue
                s.live?.accumulator.lengthModel = newValue
            }
        }
    }

    // MARK: Availability

    static func hasAccelerometer(_ source: (any SensorSource)?) -> Bool {
        source?.info.sensors[.accelerometer] != nil
    }

    /// Whether steps can be counted: the default source has an accelerometer.
    open class func isStepCountingAvailable() -> Bool { hasAccelerometer(SourceSelection.defaultSource) }
    /// Whether distance is estimated: as ``isStepCountingAvailable()`` (distance comes from the steps).
    open class func isDistanceAvailable() -> Bool { isStepCountingAvailable() }
    /// Whether cadence is reported: as ``isStepCountingAvailable()``.
    open class func isCadenceAvailable() -> Bool { isStepCountingAvailable() }
    /// Whether pace is reported: as ``isStepCountingAvailable()``.
    open class func isPaceAvailable() -> Bool { isStepCountingAvailable() }
    /// Whether pause and resume events are reported: as ``isStepCountingAvailable()``.
    open class func isPedometerEventTrackingAvailable() -> Bool { isStepCountingAvailable() }
    /// Whether floors are counted: step counting is available and the process has a default barometer
    /// (see ``CMAltimeter``).
    open class func isFloorCountingAvailable() -> Bool {
        isStepCountingAvailable() && AltimeterSelection.defaultBarometer != nil
    }

    /// ``CMAuthorizationStatus/authorized`` when step counting is available, else
    /// ``CMAuthorizationStatus/restricted``. Linux has no per-app motion permission: access is decided
    /// by the device files' permissions, which the source reports when it starts.
    open class func authorizationStatus() -> CMAuthorizationStatus {
        isStepCountingAvailable() ? .authorized : .restricted
    }

    // MARK: History

    /// Reports the steps, distance and average active pace between `start` and `end`, from the
    /// accelerometer samples ``CMSensorRecorder`` stored (see the type's discussion).
    ///
    /// The handler runs once, on the pedometer's queue, with a record whose `currentPace` and
    /// `currentCadence` are `nil` (as on Apple devices), or with an error in ``CMErrorDomain``:
    /// `CMErrorMotionActivityNotAvailable` without an accelerometer, `CMErrorInvalidParameter` when
    /// `end` is before `start`, `CMErrorUnknown` when the database cannot be read. A range without
    /// recorded samples gives 0 steps. Only the last 7 days are kept.
    open func queryPedometerData(from start: Date, to end: Date, withHandler handler: @escaping CMPedometerHandler) {
        nonisolated(unsafe) let handler = handler
        // The pedometer is thread-safe by construction (its state is in a `Locked`).
        let pedometer = UncheckedSendable(self)
        queue.addOperation {
            switch pedometer.value.history(from: start, to: end) {
            case .success(let h):
                handler(CMPedometerData(startDate: start, endDate: end, numberOfSteps: h.steps, distance: h.distance,
                                        averageActivePace: h.averageActivePace), nil)
            case .failure(let error):
                handler(nil, error)
            }
        }
    }

    struct History {
        var steps = 0
        var distance = 0.0
        var activeTime = 0.0
        var averageActivePace: Double? { distance > 0 && activeTime > 0 ? activeTime / distance : nil }
    }

    /// Steps in the recorded samples of `start…end`.
    func history(from start: Date, to end: Date) -> Result<History, NSError> {
        guard Self.hasAccelerometer(source) else {
            return .failure(.coreMotion(CMErrorMotionActivityNotAvailable, "step counting is not available: the source has no accelerometer"))
        }
        guard end >= start else {
            return .failure(.coreMotion(CMErrorInvalidParameter, "the end date is before the start date"))
        }
        let now = Date()
        let from = max(start, now.addingTimeInterval(-Self.historyLimit))
        let to = min(end, now)
        var accumulator = PedometerAccumulator(lengthModel: stepLengthModel)
        guard from < to, FileManager.default.fileExists(atPath: databasePath), let source else {
            return .success(History())
        }
        let recorder = CMSensorRecorder(source: source, databasePath: databasePath)
        var chunkStart = from
        while chunkStart < to {
            let chunkEnd = min(chunkStart.addingTimeInterval(AccelerometerRecording.maximumDuration), to)
            guard let list = recorder.accelerometerData(from: chunkStart, to: chunkEnd) else {
                return .failure(.coreMotion(CMErrorUnknown, "the recorder's database \(databasePath) could not be read", path: databasePath))
            }
            for sample in list.samples {
                let a = sample.acceleration
                accumulator.process(timestamp: sample.startDate.timeIntervalSince1970, x: a.x, y: a.y, z: a.z)
            }
            chunkStart = chunkEnd
        }
        return .success(History(steps: accumulator.steps, distance: accumulator.distance, activeTime: accumulator.activeTime))
    }

    // MARK: Live updates

    /// Starts live updates: the handler receives, on the pedometer's queue, the cumulative data from
    /// `start` to the latest step, each time the count grows (a bout's confirming steps arrive in one
    /// update). A `start` in the past includes the recorded history from then (see the type's
    /// discussion). `currentCadence` (steps/s) and `currentPace` (s/m) describe the current walking
    /// bout and are `nil` between bouts.
    ///
    /// Without an accelerometer the handler receives `CMErrorMotionActivityNotAvailable` once. When
    /// the source fails the handler receives its error once and updates stop. Calling again replaces
    /// the handler and start date.
    open func startUpdates(from start: Date, withHandler handler: @escaping CMPedometerHandler) {
        nonisolated(unsafe) let handler = handler
        guard Self.hasAccelerometer(source) else {
            queue.addOperation {
                handler(nil, NSError.coreMotion(CMErrorMotionActivityNotAvailable, "step counting is not available: the source has no accelerometer"))
            }
            return
        }
        let history: History
        switch start < Date() ? self.history(from: start, to: Date()) : .success(History()) {
        case .success(let h): history = h
        case .failure(let error):
            queue.addOperation { handler(nil, error) }
            return
        }
        let startManager = state.withLock { s -> CMMotionManager? in
            let created = ensureLive(&s)
            guard let live = s.live else { return nil }
            s.live?.updates = Updates(
                handler: handler, from: start, historySteps: history.steps, historyDistance: history.distance,
                historyActiveTime: history.activeTime, baseSteps: live.accumulator.steps,
                baseDistance: live.accumulator.distance, baseActiveTime: live.accumulator.activeTime,
                baseAscended: live.floors?.ascended ?? 0, baseDescended: live.floors?.descended ?? 0)
            return created ? live.manager : nil
        }
        if let startManager { run(startManager) }
    }

    /// Stops live updates. Once it returns, no further call of the updates handler begins.
    open func stopUpdates() {
        let stop = state.withLock { s -> CMMotionManager? in
            s.live?.updates = nil
            return endLiveIfIdle(&s)
        }
        stop?.stopAccelerometerUpdates()
        drain()
    }

    /// Starts pause and resume events: ``CMPedometerEventType/resume`` when a walking bout is
    /// confirmed (dated at its first step), ``CMPedometerEventType/pause`` when no step has followed the
    /// last one for 2 s (dated at that last step). Handlers run on the pedometer's queue. Without an
    /// accelerometer the handler receives `CMErrorMotionActivityNotAvailable` once.
    open func startEventUpdates(handler: @escaping CMPedometerEventHandler) {
        nonisolated(unsafe) let handler = handler
        guard Self.hasAccelerometer(source) else {
            queue.addOperation {
                handler(nil, NSError.coreMotion(CMErrorMotionActivityNotAvailable, "pedometer events are not available: the source has no accelerometer"))
            }
            return
        }
        let startManager = state.withLock { s -> CMMotionManager? in
            let created = ensureLive(&s)
            s.live?.events = handler
            return created ? s.live?.manager : nil
        }
        if let startManager { run(startManager) }
    }

    /// Stops pause and resume events. Once it returns, no further call of the events handler begins.
    open func stopEventUpdates() {
        let stop = state.withLock { s -> CMMotionManager? in
            s.live?.events = nil
            return endLiveIfIdle(&s)
        }
        stop?.stopAccelerometerUpdates()
        drain()
    }

    /// Waits for a handler call in progress on the pedometer's queue, unless called from it.
    private func drain() {
        guard OperationQueue.current !== queue else { return }
        queue.addOperations([BlockOperation {}], waitUntilFinished: true)
    }

    /// Creates the live session when there is none; returns whether it did.
    private func ensureLive(_ s: inout State) -> Bool {
        guard s.live == nil, let source else { return false }
        s.generation += 1
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 1 / Self.rate
        s.live = Live(manager: manager, generation: s.generation,
                      accumulator: PedometerAccumulator(lengthModel: s.lengthModel), anchor: Date(),
                      floors: barometer == nil ? nil : FloorCounter())
        return true
    }

    /// Ends the live session when nothing listens any more; returns its manager to stop.
    private func endLiveIfIdle(_ s: inout State) -> CMMotionManager? {
        guard let live = s.live, live.updates == nil, live.events == nil else { return nil }
        s.live = nil
        s.generation += 1
        return live.manager
    }

    private func run(_ manager: CMMotionManager) {
        let generation = state.withLock { $0.generation }
        manager.startAccelerometerUpdates(to: queue) { [weak self] data, error in
            self?.receive(data, error, generation: generation)
        }
    }

    /// One accelerometer sample or a source error, on the pedometer's queue.
    private func receive(_ data: CMAccelerometerData?, _ error: (any Error)?, generation: Int) {
        var dataOut: (CMPedometerHandler, CMPedometerData)?
        var eventOut: (CMPedometerEventHandler, CMPedometerEvent)?
        var failure: (CMPedometerHandler?, CMPedometerEventHandler?, any Error)?
        state.withLock { s in
            guard var live = s.live, live.generation == generation else { return }
            if let error {
                failure = (live.updates?.handler, live.events, error)
                s.live = nil
                s.generation += 1
                return
            }
            guard let data else { return }
            let t = data.timestamp
            if live.firstTimestamp == nil { live.firstTimestamp = t }
            let first = live.firstTimestamp ?? t
            func date(_ time: Double) -> Date { live.anchor.addingTimeInterval(time - first) }
            let wasWalking = live.accumulator.detector.inBout
            let a = data.acceleration
            let n = live.accumulator.process(timestamp: t, x: a.x, y: a.y, z: a.z)
            let walking = live.accumulator.detector.inBout
            var floorsChanged = false
            if live.floors != nil, let barometer, t >= live.nextPressureTime {
                live.nextPressureTime = max(live.nextPressureTime + 1 / Self.pressureRate, t)
                do {
                    let pressure = try barometer.readPressure(at: t)
                    // Walking: in a bout, or between a bout's steps (the detector confirms a bout late).
                    let recent = live.accumulator.detector.lastStepTime.map { t - $0 < 2.5 } ?? false
                    let change = live.floors?.process(timestamp: t, pressure: pressure, walking: walking || recent)
                    floorsChanged = (change?.up ?? 0) + (change?.down ?? 0) > 0
                } catch {
                    // The barometer is gone: floors stop growing; steps go on.
                    live.nextPressureTime = .infinity
                }
            }
            if let events = live.events, wasWalking != walking, let last = live.accumulator.detector.lastStepTime {
                if walking {
                    let period = live.accumulator.detector.stepPeriod ?? 0
                    eventOut = (events, CMPedometerEvent(date: date(last - Double(max(n - 1, 0)) * period), type: .resume))
                } else {
                    eventOut = (events, CMPedometerEvent(date: date(last), type: .pause))
                }
            }
            if n > 0 || floorsChanged, let u = live.updates {
                let acc = live.accumulator
                let steps = u.historySteps + acc.steps - u.baseSteps
                let distance = u.historyDistance + acc.distance - u.baseDistance
                let active = u.historyActiveTime + acc.activeTime - u.baseActiveTime
                let end = date(acc.detector.lastStepTime ?? t)
                dataOut = (u.handler, CMPedometerData(
                    startDate: u.from, endDate: max(end, u.from), numberOfSteps: steps, distance: distance,
                    floorsAscended: live.floors.map { $0.ascended - u.baseAscended },
                    floorsDescended: live.floors.map { $0.descended - u.baseDescended },
                    currentPace: acc.pace, currentCadence: acc.cadence,
                    averageActivePace: distance > 0 && active > 0 ? active / distance : nil))
            }
            s.live = live
        }
        if let (handler, value) = eventOut { handler(value, nil) }
        if let (handler, value) = dataOut { handler(value, nil) }
        if let (updates, events, error) = failure {
            let nsError = error as NSError
            updates?(nil, nsError)
            events?(nil, nsError)
        }
    }
}
