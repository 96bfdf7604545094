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
/// Every member may be called from any thread. Handlers run on the queue given, in order, one call at a
/// time. Once a stop method returns, no further call of that handler begins (a call already under way
/// runs to its end) and no thread of the altimeter reads the barometer any more.
///
/// ## Virtual time
/// A barometer in virtual time (``BarometerSource/virtualStartTime`` not `nil`: the simulator's, in tests)
/// runs as fast as its handlers take updates: past 60 updates (a simulated minute) waiting for a
/// handler, the reading thread waits until the handler has taken half of them (the bounded backlog with
/// which `CMMotionManager` holds back a simulator or replay in virtual time), so a handler that is held back, or a queue
/// that is suspended, holds the barometer's time back too; a stop releases it at once. A barometer on the
/// real clock is never held back: its updates wait for the handler, none is lost.
open class CMAltimeter: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The barometer read, or `nil` when there is none.
    public let barometer: (any BarometerSource)?

    /// A handler with its queue and the delivery that calls it there.
    private struct Subscription<Item> {
        var queue: OperationQueue
        var handler: (Item?, (any Error)?) -> Void
        var delivery: QueueDelivery<Item>

        init(queue: OperationQueue, handler: @escaping (Item?, (any Error)?) -> Void, paced: Bool) {
            self.queue = queue
            self.handler = handler
            delivery = QueueDelivery(queue: queue, handler: handler)
            if paced { delivery.limitBacklog(to: CMAltimeter.pacedBacklog) }
        }

        /// The same handler on the same queue with a fresh delivery, for a new run.
        func renewed(paced: Bool) -> Self { Self(queue: queue, handler: handler, paced: paced) }
    }

    /// One run: the handlers subscribed, fed by the barometer's source.
    private struct Run {
        var relative: Subscription<CMAltitudeData>?
        var absolute: Subscription<CMAbsoluteAltitudeData>?

        /// Ends the run: no handler call begins once this returns (apart from at most one per delivery
        /// already being started, see ``QueueDelivery``), and the source's reading thread has ended
        /// (its stop joins it; cancelling the deliveries first wakes a thread waiting for room in one of
        /// them).
        func end(_ source: PolledBarometerSource) {
            relative?.delivery.cancel()
            absolute?.delivery.cancel()
            _ = try? source.apply(.none) { _ in }
        }
    }

    /// The current run. Starts and stops run under this lock from beginning to end, the old run's
    /// thread joined and the new one spawned inside, so two of them never interleave and a stop that
    /// returns leaves no reading thread behind. The reading thread never takes it.
    private let run = Locked<Run?>(nil)

    /// The barometer as a source: every run reads it through this, on the clock given at creation (the
    /// real one; a ``ManualClock`` in tests). `nil` without a barometer.
    private let source: PolledBarometerSource?

    /// Readings per second.
    static let sampleRate = 25.0
    /// Readings averaged into one update (one second).
    static let samplesPerUpdate = 25
    /// The updates a handler may fall behind a barometer in virtual time before the reading thread
    /// waits for it: a minute of updates.
    static let pacedBacklog = 60

    /// An altimeter on the process's default barometer (see the type's discussion).
    ///
    /// This is the designated initializer, as on Apple platforms: a subclass (a test's mock) calls `super.init()`.
    public override init() {
        barometer = AltimeterSelection.defaultBarometer
        source = barometer.map { PolledBarometerSource(barometer: $0) }
        super.init()
    }

    /// An altimeter on `barometer` (beyond Apple).
    public convenience init(barometer: any BarometerSource) {
        self.init(optionalBarometer: barometer)
    }

    /// An altimeter on `barometer`, or on none, read in real time on `clock` (default: the real one,
    /// ``MonotonicSourceClock``; a ``ManualClock`` in tests). A barometer in virtual time ignores the clock.
    init(optionalBarometer: (any BarometerSource)?, clock: any SourceClock = MonotonicSourceClock.shared) {
        barometer = optionalBarometer
        source = optionalBarometer.map { PolledBarometerSource(barometer: $0, clock: clock) }
        super.init()
    }

    deinit {
        run.withLock { r in
            if let source { r?.end(source) }
            r = nil
        }
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

    /// Stops relative altitude updates. Blocks until the reading thread has ended when no absolute
    /// updates remain (one reading at most); never waits for `queue`.
    open func stopRelativeAltitudeUpdates() {
        run.withLock { r in
            guard let current = r, let relative = current.relative else { return }
            relative.delivery.cancel()
            r?.relative = nil
            if current.absolute == nil, let source {
                current.end(source)
                r = nil
            }
        }
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

    /// Stops absolute altitude updates (see ``stopRelativeAltitudeUpdates()``).
    open func stopAbsoluteAltitudeUpdates() {
        run.withLock { r in
            guard let current = r, let absolute = current.absolute else { return }
            absolute.delivery.cancel()
            r?.absolute = nil
            if current.relative == nil, let source {
                current.end(source)
                r = nil
            }
        }
    }

    /// Ends the current run, if any, and starts a new one with the handlers given and those of the
    /// current run (each on its own queue, with a fresh delivery).
    private func start(queue: OperationQueue, relative: CMAltitudeHandler?, absolute: CMAbsoluteAltitudeHandler?) {
        guard let barometer, let source else {
            nonisolated(unsafe) let relative = relative, absolute = absolute
            queue.addOperation {
                let error = NSError.coreMotion(CMErrorNotAvailable, "no barometer: set COREMOTION_BAROMETER or connect an IIO pressure sensor")
                relative?(nil, error)
                absolute?(nil, error)
            }
            return
        }
        let paced = barometer.virtualStartTime != nil
        let seaLevel = AltimeterSelection.seaLevelPressure
        run.withLock { r in
            let previous = r
            previous?.end(source)
            var next = Run(relative: previous?.relative?.renewed(paced: paced),
                           absolute: previous?.absolute?.renewed(paced: paced))
            if let relative { next.relative = Subscription(queue: queue, handler: relative, paced: paced) }
            if let absolute { next.absolute = Subscription(queue: queue, handler: absolute, paced: paced) }
            r = next
            let updates = AltitudeUpdates(seaLevel: seaLevel, relative: next.relative?.delivery,
                                          absolute: seaLevel == nil ? nil : next.absolute?.delivery)
            do throws(SourceError) {
                try source.apply(SensorDemand(rates: [.pressure: Self.sampleRate]), sink: updates.handle)
            } catch {
                updates.handle(.failed(error))
            }
        }
    }

}

/// What one run of a ``CMAltimeter`` makes of its barometer's samples: the mean of each
/// ``CMAltimeter/samplesPerUpdate`` readings, queued to the handlers with the altitude relative to the
/// run's first mean (and, with a sea-level reference, the absolute altitude); a failure queued once, after
/// the updates already queued (a replayed recording queues many before it ends). An interruption (a
/// phone's barometer gone silent) only pauses the updates.
///
/// ## Threading
/// ``handle(_:)`` is the source's sink: called on the source's thread, one event at a time. Either
/// enqueue may wait for its handler (a barometer in virtual time); a stop wakes it.
private final class AltitudeUpdates: Sendable {
    private struct Mean {
        var sum = 0.0
        var count = 0
        var reference: Double?
    }

    private let seaLevel: Double?
    private let relative: QueueDelivery<CMAltitudeData>?
    private let absolute: QueueDelivery<CMAbsoluteAltitudeData>?
    private let mean = Locked(Mean())

    init(seaLevel: Double?, relative: QueueDelivery<CMAltitudeData>?, absolute: QueueDelivery<CMAbsoluteAltitudeData>?) {
        self.seaLevel = seaLevel
        self.relative = relative
        self.absolute = absolute
    }

    func handle(_ event: SourceEvent) {
        switch event {
        case .sample(let sample):
            guard sample.sensor == .pressure else { return }
            let pressure = sample.value.x
            let update = mean.withLock { m -> (mean: Double, reference: Double)? in
                guard pressure.isFinite, pressure > 0 else { return nil }
                m.sum += pressure
                m.count += 1
                guard m.count == CMAltimeter.samplesPerUpdate else { return nil }
                let mean = m.sum / Double(m.count)
                m.sum = 0
                m.count = 0
                let p0 = m.reference ?? mean
                m.reference = p0
                return (mean, p0)
            }
            guard let update else { return }
            let t = sample.timestamp
            relative?.enqueue(CMAltitudeData(
                timestamp: t,
                relativeAltitude: SimulatedBarometer.altitude(pressure: update.mean, seaLevel: 101.325)
                    - SimulatedBarometer.altitude(pressure: update.reference, seaLevel: 101.325),
                pressure: update.mean))
            if let absolute, let seaLevel {
                absolute.enqueue(CMAbsoluteAltitudeData(
                    timestamp: t, altitude: SimulatedBarometer.altitude(pressure: update.mean, seaLevel: seaLevel),
                    accuracy: 10, precision: 0.2))
            }
        case .failed(let error):
            let ns = NSError.coreMotion(error.kind == .permissionDenied ? CMErrorNotAuthorized : CMErrorNotAvailable,
                                        error.description, path: error.path)
            relative?.enqueue(error: ns)
            absolute?.enqueue(error: ns)
        case .interrupted, .finished:
            break
        }
    }
}

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
