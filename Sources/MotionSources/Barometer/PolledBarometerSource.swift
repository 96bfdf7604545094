import MotionFusion

/// A barometer run as a ``SensorSource``: reads a ``BarometerSource`` at the demanded rate on a
/// thread of its own (``SourceWorker``, the runtime of every threaded source) and delivers
/// ``SensorKind/pressure`` samples, so barometers keep the same contract as every other source (start,
/// stop, silence after a stop, one terminal event, interruption and resumption, rate changes).
///
/// `CMAltimeter` and `CMSensorRecorder`'s pressure recordings read their barometer through one.
///
/// ## Readings
/// The readings fall on the grid `start + k / rate`, where `start` is the clock's time when a run starts
/// (or, after a rate change, one period of the new rate after the last reading). Each sample is stamped
/// with its grid instant and carries the pressure in kPa in `x` (`y` and `z` 0). Between readings the
/// worker sleeps on the injected clock (``MonotonicSourceClock`` unless a test gives a ``ManualClock``).
///
/// A barometer in virtual time (``BarometerSource/virtualStartTime`` not `nil`: a simulator or a
/// recording) is not paced by a clock: its grid starts at the virtual start time and readings follow one
/// another as fast as the sink takes them (``ConsumerPacedSource``), so a sink that blocks holds the
/// barometer's time back.
///
/// A reading that is not a positive number (a phone's barometer before its first value, or silent) is
/// skipped. After at least one good reading, the first such reading sends `.interrupted` once; the next
/// good reading resumes. A read that throws (a device gone, a recording past its end) ends the run with
/// `.failed`: the first and only terminal event.
///
/// ## Threading
/// ``apply(_:sink:)`` may be called from any thread, including from inside the sink. Samples reach the
/// sink on the source's thread, one at a time, in timestamp order. When `apply` returns, a previous run has
/// ended: no call of the previous sink begins or is in progress (unless `apply` is called from inside the
/// sink, which cannot wait for its own call). Of two applies at once, the one that began last holds. Do
/// not call `apply` from another thread while holding a lock that the sink takes, as with
/// ``SimulatedDevice``: the two would wait for each other.
public final class PolledBarometerSource: SensorSource {
    /// The rates a barometer is read at: 1 to 50 Hz. Phones report pressure at a few to a few tens of
    /// hertz and IIO pressure chips are read through sysfs, one file read per reading.
    public static let capability = SensorCapability(minimumRate: 1, maximumRate: 50)

    /// The barometer read.
    public let barometer: any BarometerSource

    /// The barometer's identifier and name, and the ``SensorKind/pressure`` sensor at ``capability``.
    public let info: SourceInfo

    /// The clock a barometer on the real clock is read on.
    let clock: any SourceClock

    /// The run in progress, if any, and the number of applies so far: an apply that finds a later one
    /// has begun since it stopped the previous run leaves the source to that one. The lock is never held
    /// while a run is stopped, so a sink may call ``apply(_:sink:)`` while another thread stops it.
    private let run = Locked<(worker: SourceWorker?, applies: Int)>((nil, 0))

    /// The time of the last reading (so a re-rated or restarted run continues after it): written by the
    /// worker, read by `apply`.
    private let lastReading = Locked<Double?>(nil)

    /// A source reading `barometer` on the real clock (`CLOCK_MONOTONIC`).
    public convenience init(barometer: any BarometerSource) {
        self.init(barometer: barometer, clock: MonotonicSourceClock.shared)
    }

    /// A source reading `barometer` on `clock` (a ``ManualClock`` in tests). A barometer in virtual time
    /// ignores the clock.
    package init(barometer: any BarometerSource, clock: any SourceClock) {
        self.barometer = barometer
        self.clock = clock
        info = SourceInfo(identifier: barometer.identifier, name: barometer.name,
                          sensors: [.pressure: Self.capability],
                          details: [("clock", barometer.virtualStartTime.map { "virtual, from \($0) s" } ?? "real time (CLOCK_MONOTONIC)")])
    }

    deinit {
        run.withLock { $0.worker }?.stop()
    }

    /// Starts, re-rates or stops the readings.
    ///
    /// The rate demanded for ``SensorKind/pressure`` is clamped to ``capability``; other sensors are
    /// not granted. A demand without pressure stops the source: when this returns, the sink is not called
    /// again. Any other demand ends the run in progress (as a stop does) and starts a new one with `sink`.
    ///
    /// - Returns: `[.pressure: rate]`, or `[:]` when pressure is not demanded.
    /// - Throws: ``SourceError/Kind/io`` when the system cannot create the reading thread.
    @discardableResult
    public func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        let rate = demand.rates[.pressure].map { Self.capability.clamp(rate: $0) }
        let barometer = barometer
        let lastReading = lastReading
        let clock = clock
        let (previous, apply) = run.withLock { r -> (SourceWorker?, Int) in
            defer { r.worker = nil }
            r.applies += 1
            return (r.worker, r.applies)
        }
        previous?.stop()
        guard let rate else { return [:] }
        let virtual = barometer.virtualStartTime
        let next = lastReading.withLock { $0 }.map { $0 + 1 / rate }
        let start: Double
        if let virtual {
            start = next ?? (virtual.isFinite ? virtual : 0)
        } else {
            let now = clock.now()
            start = max(now, next ?? now)
        }
        return try run.withLock { r throws(SourceError) -> [SensorKind: Double] in
            // A later apply began meanwhile: its demand is the one that holds.
            guard r.applies == apply else { return [.pressure: rate] }
            let worker = SourceWorker(sink: sink, clock: clock)
            let started = worker.spawn(name: "barometer") { worker in
                Self.read(barometer, worker: worker, start: start, rate: rate, paced: virtual == nil, lastReading: lastReading)
            }
            guard started else {
                throw SourceError(.io, "cannot start a thread to read the barometer \(barometer.identifier) (pthread_create failed)")
            }
            r.worker = worker
            return [.pressure: rate]
        }
    }

    /// One run's loop: reads on the grid from `start` until the worker stops or a read throws.
    private static func read(_ barometer: any BarometerSource, worker: SourceWorker, start: Double, rate: Double,
                             paced: Bool, lastReading: Locked<Double?>) {
        var index = 0
        var hadReading = false
        var silent = false
        while !worker.isStopping {
            // Each reading's time from the start, not summed, so a long run keeps exactly to the rate.
            let t = start + Double(index) / rate
            if paced, !worker.sleep(until: t) { return }
            index += 1
            lastReading.withLock { $0 = t }
            let pressure: Double
            do {
                pressure = try barometer.readPressure(at: t)
            } catch {
                worker.end(.failed(error))
                return
            }
            if pressure.isFinite, pressure > 0 {
                hadReading = true
                silent = false
                worker.deliver(CollectionOfOne(RawSample(sensor: .pressure, timestamp: t, value: Vector3(pressure, 0, 0))))
            } else if hadReading, !silent {
                silent = true
                worker.send(.interrupted(SourceError(.io, "the barometer \(barometer.identifier) gives no reading")))
            }
        }
    }
}

extension PolledBarometerSource: ConsumerPacedSource {
    /// `true` for a barometer in virtual time: it reads as fast as its sink takes the samples.
    package var isPacedByConsumers: Bool { barometer.virtualStartTime != nil }
}
