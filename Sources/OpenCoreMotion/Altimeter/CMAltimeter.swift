import Foundation
import MotionRecordingFormats
import MotionSources

/// Altitude changes from a barometer, as Core Motion's `CMAltimeter`.
///
/// ```swift
/// let altimeter = CMAltimeter()
/// if CMAltimeter.isRelativeAltitudeAvailable() {
///     altimeter.startRelativeAltitudeUpdates(to: .main) { data, error in
///         print(data?.relativeAltitude ?? 0, "m at", data?.pressure ?? 0, "kPa")
///     }
/// }
/// ```
///
/// ## On Linux
/// `CMAltimeter()` reads the process's default barometer: `COREMOTION_BAROMETER` when set
/// (`sim`, `sim:still|stairs|lift[:SEED]`, `iio`, `iio:NAME`, `replay:PATH`, a phone spec such as
/// `phyphox://HOST:PORT` whose pressure is read, `none`), otherwise the simulator's still barometer when
/// `COREMOTION_SOURCE` names the simulator, the recording's pressure (``PressureTrack``) when it is
/// `replay:PATH`, the phone's pressure when it names a phone, otherwise the first IIO pressure sensor
/// (`in_pressure_input` or `in_pressure_raw` × `in_pressure_scale`, kPa) under `COREMOTION_SYSFS_ROOT`
/// or `/sys`. ``init(barometer:)`` takes one explicitly.
///
/// The barometer is read 25 times a second; each second the mean pressure is delivered with the
/// altitude relative to the first second's, by the International Standard Atmosphere
/// (`h = 44330.8 m · (1 − (p/p₀)^0.190263)`), so 1 Pa is about 8.4 cm near sea level. Weather changes
/// pressure too (about 1 hPa in 3 hours, 8 m): relative altitude drifts over hours, as on Apple devices.
///
/// Absolute altitude needs a reference (a sea-level pressure from a weather service or GNSS): none is
/// known on Linux, so ``isAbsoluteAltitudeAvailable()`` is `false` unless `COREMOTION_SEA_LEVEL_PRESSURE`
/// (kPa) is set; then altitude is the ISA altitude for that reference, accuracy 10 m.
///
/// ## Threading
/// Every member may be called from any thread. Handlers run on the queue given, in order. Once a stop
/// method returns (called off that queue), no further call of that handler begins.
open class CMAltimeter: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The barometer read, or `nil` when there is none.
    public let barometer: (any BarometerSource)?

    private struct Run {
        var generation: Int
        var queue: OperationQueue
        var relative: CMAltitudeHandler?
        var absolute: CMAbsoluteAltitudeHandler?
    }

    private struct State {
        var run: Run?
        var generation = 0
        /// The worker reading the barometer for the current run, if any (``SourceWorker``, the runtime
        /// every threaded source uses); a stop asks it to end, which cuts its sleep short.
        var worker: SourceWorker?

        /// Ends the current run; returns its worker, to be asked to stop outside the lock.
        mutating func endRun() -> SourceWorker? {
            run = nil
            generation += 1
            defer { worker = nil }
            return worker
        }
    }

    private let state = Locked(State())

    /// The clock the barometer is read on in real time (the real one; a ``ManualClock`` in tests).
    let clock: any SourceClock

    /// Readings per second.
    static let sampleRate = 25.0
    /// Readings averaged into one update (one second).
    static let samplesPerUpdate = 25

    /// An altimeter on the process's default barometer (see the type's discussion).
    ///
    /// This is the designated initializer, as on Apple platforms: a subclass (a test's mock) calls `super.init()`.
    public override init() {
        barometer = AltimeterSelection.defaultBarometer
        clock = MonotonicSourceClock.shared
        super.init()
    }

    /// An altimeter on `barometer` (beyond Apple).
    public convenience init(barometer: any BarometerSource) {
        self.init(optionalBarometer: barometer)
    }

    /// An altimeter on `barometer`, or on none, read in real time on `clock` (default: the real one).
    init(optionalBarometer: (any BarometerSource)?, clock: any SourceClock = MonotonicSourceClock.shared) {
        barometer = optionalBarometer
        self.clock = clock
        super.init()
    }

    deinit {
        state.withLock { $0.endRun() }?.requestStop()
    }

    /// Whether relative altitude is available: the default barometer exists.
    open class func isRelativeAltitudeAvailable() -> Bool { AltimeterSelection.defaultBarometer != nil }

    /// Whether absolute altitude is available: a barometer and a sea-level reference
    /// (`COREMOTION_SEA_LEVEL_PRESSURE`, kPa) are known.
    open class func isAbsoluteAltitudeAvailable() -> Bool {
        isRelativeAltitudeAvailable() && AltimeterSelection.seaLevelPressure != nil
    }

    /// ``CMAuthorizationStatus/authorized`` when a barometer is available, else
    /// ``CMAuthorizationStatus/restricted`` (Linux has no per-app permission for it).
    open class func authorizationStatus() -> CMAuthorizationStatus {
        isRelativeAltitudeAvailable() ? .authorized : .restricted
    }

    /// Starts relative altitude updates, about one a second, on `queue`. Without a barometer the
    /// handler receives `CMErrorNotAvailable` once. A read error (device gone) reaches the handler once
    /// and stops updates. Calling again restarts from a new reference.
    open func startRelativeAltitudeUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAltitudeHandler) {
        start(queue: queue, relative: handler, absolute: nil)
    }

    /// Stops relative altitude updates.
    open func stopRelativeAltitudeUpdates() {
        stop(state.withLock { s in
            let q = s.run?.queue
            s.run?.relative = nil
            return (q, s.run?.absolute == nil ? s.endRun() : nil)
        })
    }

    /// Starts absolute altitude updates, about one a second, on `queue`, when
    /// ``isAbsoluteAltitudeAvailable()``; otherwise the handler receives `CMErrorNotAvailable` once.
    open func startAbsoluteAltitudeUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAbsoluteAltitudeHandler) {
        guard AltimeterSelection.seaLevelPressure != nil else {
            nonisolated(unsafe) let handler = handler
            queue.addOperation {
                handler(nil, NSError.coreMotion(CMErrorNotAvailable, "absolute altitude needs a sea-level reference: set COREMOTION_SEA_LEVEL_PRESSURE (kPa)"))
            }
            return
        }
        start(queue: queue, relative: nil, absolute: handler)
    }

    /// Stops absolute altitude updates.
    open func stopAbsoluteAltitudeUpdates() {
        stop(state.withLock { s in
            let q = s.run?.queue
            s.run?.absolute = nil
            return (q, s.run?.relative == nil ? s.endRun() : nil)
        })
    }

    private func stop(_ ended: (queue: OperationQueue?, worker: SourceWorker?)) {
        ended.worker?.requestStop()
        guard let queue = ended.queue, OperationQueue.current !== queue else { return }
        queue.addOperations([BlockOperation {}], waitUntilFinished: true)
    }

    private func start(queue: OperationQueue, relative: CMAltitudeHandler?, absolute: CMAbsoluteAltitudeHandler?) {
        guard let barometer else {
            nonisolated(unsafe) let relative = relative, absolute = absolute
            queue.addOperation {
                let error = NSError.coreMotion(CMErrorNotAvailable, "no barometer: set COREMOTION_BAROMETER or connect an IIO pressure sensor")
                relative?(nil, error)
                absolute?(nil, error)
            }
            return
        }
        let worker = SourceWorker(clock: clock)
        let (generation, previous) = state.withLock { s -> (Int, SourceWorker?) in
            s.generation += 1
            var run = Run(generation: s.generation, queue: queue, relative: s.run?.relative, absolute: s.run?.absolute)
            if let relative { run.relative = relative }
            if let absolute { run.absolute = absolute }
            s.run = run
            defer { s.worker = worker }
            return (s.generation, s.worker)
        }
        previous?.requestStop()
        // The thread holds the altimeter weakly: releasing it ends the readings, as stopping does.
        let box = WeakAltimeter(self)
        worker.spawn(name: "CMAltimeter") { worker in
            Self.loop(worker: worker, owner: { box.value }, barometer: barometer, generation: generation)
        }
    }

    /// Reads the barometer until the run `generation` ends, its worker is stopped or the altimeter is
    /// released.
    private static func loop(worker: SourceWorker, owner: () -> CMAltimeter?, barometer: any BarometerSource, generation: Int) {
        let virtual = barometer.virtualStartTime
        var t = virtual ?? worker.clock.now()
        var sum = 0.0
        var count = 0
        var reference: Double?
        let seaLevel = AltimeterSelection.seaLevelPressure
        while true {
            guard let me = owner(),
                  let run = me.state.withLock({ $0.run?.generation == generation ? $0.run : nil }) else { return }
            let pressure: Double
            do {
                pressure = try barometer.readPressure(at: t)
            } catch {
                let ns = NSError.coreMotion(error.kind == .permissionDenied ? CMErrorNotAuthorized : CMErrorNotAvailable,
                                            error.description, path: error.path)
                // The run ends here; its handlers get the error once (unless stopped meanwhile), after the
                // updates already queued (a replayed recording queues many before it ends).
                me.deliver(run, generation: generation) { [weak me] r in
                    r.relative?(nil, ns)
                    r.absolute?(nil, ns)
                    me?.state.withLock { s in
                        if s.run?.generation == generation { _ = s.endRun() }
                    }
                }
                return
            }
            if pressure.isFinite, pressure > 0 {
                sum += pressure
                count += 1
            }
            if count == Self.samplesPerUpdate {
                let mean = sum / Double(count)
                sum = 0
                count = 0
                let p0 = reference ?? mean
                reference = p0
                let relativeAltitude = SimulatedBarometer.altitude(pressure: mean, seaLevel: 101.325)
                    - SimulatedBarometer.altitude(pressure: p0, seaLevel: 101.325)
                let timestamp = t
                let absolute = seaLevel.map { SimulatedBarometer.altitude(pressure: mean, seaLevel: $0) }
                me.deliver(run, generation: generation) { r in
                    r.relative?(CMAltitudeData(timestamp: timestamp, relativeAltitude: relativeAltitude, pressure: mean), nil)
                    if let absolute {
                        r.absolute?(CMAbsoluteAltitudeData(timestamp: timestamp, altitude: absolute, accuracy: 10, precision: 0.2), nil)
                    }
                }
            }
            t += 1 / Self.sampleRate
            if virtual == nil {
                if !worker.sleep(until: t) { return }
            } else if run.queue.operationCount > 100 {
                // Virtual time: do not run ahead of a slow handler without limit. This waits for the
                // handler's queue, real work, so it is on the real clock whatever the worker's.
                MonotonicSourceClock.shared.sleep(until: MonotonicClock.now() + 0.001)
                if worker.isStopping { return }
            }
        }
    }

    /// Runs `body` on the run's queue with the handlers current there, if the run is still current.
    private func deliver(_ run: Run, generation: Int, _ body: @escaping (Run) -> Void) {
        nonisolated(unsafe) let body = body
        let weakSelf = WeakAltimeter(self)
        run.queue.addOperation {
            guard let current = weakSelf.value?.state.withLock({ $0.run?.generation == generation ? $0.run : nil }) else { return }
            body(current)
        }
    }
}

/// A weak reference to an altimeter, for its reading thread and its queue's operations (the altimeter is
/// thread-safe by construction: its state is in a `Locked`).
private typealias WeakAltimeter = UncheckedWeak<CMAltimeter>

/// The process's default barometer and sea-level reference.
enum AltimeterSelection {
    static let defaultBarometer: (any BarometerSource)? = {
        let env = ProcessInfo.processInfo.environment
        if let spec = env["COREMOTION_BAROMETER"], !spec.isEmpty {
            return barometer(named: spec)
        }
        if let source = env["COREMOTION_SOURCE"], source == "sim" || source.hasPrefix("sim:") {
            return SimulatedBarometerSource(scenario: .still)
        }
        if let source = env["COREMOTION_SOURCE"], source.hasPrefix("replay:") {
            return barometer(named: source)
        }
        if let source = env["COREMOTION_SOURCE"], source.contains("://"), let phone = barometer(named: source) {
            return phone
        }
        return SourceSelection.catalog.firstBarometer()
    }()

    /// A barometer from a specification (`sim[:SCENARIO[:SEED]]`, `iio[:NAME]` with the `LinuxHardware`
    /// trait, `replay:PATH`, a phone spec such as `sensorlogger://HOST:PORT` or `phyphox://HOST:PORT` with
    /// the `NetworkSources` trait (its pressure; see `PhoneBarometer`), `none`), or `nil` (also for a
    /// recording without pressure or that cannot be read, and for a family this build lacks).
    static func barometer(named spec: String) -> (any BarometerSource)? {
        SourceSelection.catalog.barometer(named: spec)
    }

    /// `COREMOTION_SEA_LEVEL_PRESSURE` in kPa when set to a plausible value (80–110 kPa).
    static var seaLevelPressure: Double? {
        guard let text = ProcessInfo.processInfo.environment["COREMOTION_SEA_LEVEL_PRESSURE"],
              let p = Double(text), p >= 80, p <= 110 else { return nil }
        return p
    }
}
