import MotionFusion
import MotionSources

/// Everything a ``PhoneSource`` knows, as a pure state machine: no I/O, no clock of its own, no lock.
///
/// Inputs are events (a demand set or cleared, a hold taken or released, the transport started or
/// stopped, a decoded message arriving at a host time, a tick with the current host time); each
/// returns what the runner does next: which sink gets which samples, what to log, which running
/// transport to stop. The runner (``PhoneSource``) keeps the machine inside one lock and performs the
/// returned actions outside it.
///
/// Per sensor, delivered timestamps strictly increase: a reading whose phone time does not advance is
/// dropped as stale (a repeated row, a late batch); a phone clock that steps back is detected by the
/// sensor's clock's ``PhoneClockMapper`` and starts the phone's history afresh, as does a clock not
/// seen before (a new phyphox session, whose times start at 0 again). Mapped host times never lie
/// after the arrival; a mapped time that would not advance past the sensor's previous one (the mapping
/// moved back: the first messages came later than the ones after them, so the offset estimate fell)
/// takes the previous one plus the phone's own spacing shortened by ``catchUpRate``. So the stamps
/// keep the motion's time, at most that much compressed, rather than piling up a microsecond apart,
/// where device motion would integrate a batch's rotation over no time; they return to the mapping
/// within `lead / catchUpRate` of phone time, and until then lie up to `lead` after the arrival.
/// Without a phone time such a reading is nudged 1 µs past the previous one.
///
/// `Running` is what a started transport leaves to stop later (``PhoneSource`` keeps its transport and
/// its silence ticker; tests use any value).
///
/// ## Threading
/// A value type: use it from one thread at a time (``PhoneSource`` keeps it in a lock).
struct PhoneSourceStateMachine<Running: Sendable>: Sendable {
    /// Where a source's events go.
    typealias Sink = @Sendable (SourceEvent) -> Void

    /// What to do with one received message.
    struct Delivery {
        /// The reasons of malformed parts to log, each to be logged once (the first ten, then every hundredth).
        var problems: [String] = []
        /// The sink to hand ``samples`` to, in order; `nil` when no one asked.
        var sink: Sink?
        /// The accepted readings of the sensors asked for, host times (s since boot), per sensor increasing.
        var samples: [RawSample] = []
    }

    /// The fraction by which a reading's phone spacing is shortened while its stamp catches up with a
    /// mapping that moved back (see the type's discussion): 0.05, so a lead of 0.5 s (a first message
    /// held up under load) is gone after 10 s, while device motion integrates the rotation of that time
    /// at most 5 % short, which the inclination and heading corrections then remove.
    static var catchUpRate: Double { 0.05 }

    /// Whether the phone's own attitude and gravity are kept for ``ownAttitude(at:isTrueNorth:)``.
    let keepsOwnAttitude: Bool
    /// Whether the transport listens (silence is watched from the first datum) rather than connects
    /// (watched from the start, so an unreachable phone is reported too).
    let listens: Bool

    /// The consumer's sink, `nil` without demand.
    private(set) var sink: Sink?
    /// The sensors the consumer asked for.
    private(set) var wanted: Set<SensorKind> = []
    /// An interruption was reported and no reading was delivered since.
    private(set) var interrupted = false
    /// The started transport, `nil` when stopped.
    private(set) var running: Running?
    /// ``hold()`` calls not yet released: the transport runs while positive, whatever the demand.
    private(set) var holders = 0
    private var clocks: [String: PhoneClockMapper] = [:]
    private var lastPhone: [SensorKind: Double] = [:]
    private var lastHost: [SensorKind: Double] = [:]
    private var lastExtraPhone: [String: Double] = [:]
    private(set) var monitor: SilenceMonitor
    private var stats: PhoneStatistics
    private var problemsLogged = 0
    /// The latest pressure, attitude and gravity (host times).
    private(set) var extras = PhoneExtras()
    /// When ``keepsOwnAttitude``: the phone's recent attitudes and gravities, host times.
    private var attitudes = OwnAttitudeHistory<Quaternion>()
    private var gravities = OwnAttitudeHistory<Vector3>()

    /// Creates a stopped machine.
    /// - Parameters:
    ///   - silence: seconds without data before silence is reported.
    ///   - keepsOwnAttitude: keep the phone's attitudes and gravities (`motion=phone`).
    ///   - listens: whether the transport listens (see ``listens``).
    ///   - platform: the platform the spec implies, `nil` when the messages will tell.
    init(silence: Double, keepsOwnAttitude: Bool, listens: Bool, platform: String?) {
        self.keepsOwnAttitude = keepsOwnAttitude
        self.listens = listens
        monitor = SilenceMonitor(limit: silence)
        stats = PhoneStatistics()
        stats.platform = platform
    }

    /// A snapshot of what was received so far.
    var statistics: PhoneStatistics {
        var st = stats
        st.clockResets = clocks.values.reduce(0) { $0 + $1.resets }
        return st
    }

    /// Per sensor with more than ten readings, the rate measured so far in Hz.
    var measuredRates: [SensorKind: Double] {
        stats.sensors.compactMapValues { $0.count > 10 ? $0.rate : nil }
    }

    // MARK: Demand and life cycle

    /// A consumer asks for `sensors`, delivered to `sink`.
    mutating func demand(_ sensors: Set<SensorKind>, sink: @escaping Sink) {
        self.sink = sink
        wanted = sensors
    }

    /// The consumer asks for nothing more: no sink call is made from now on.
    mutating func clearDemand() {
        sink = nil
        wanted = []
    }

    /// Takes one hold (the transport runs without a sink).
    mutating func hold() { holders += 1 }

    /// Releases one hold.
    mutating func release() { holders = max(0, holders - 1) }

    /// Whether the transport must be started; when it must, the source is no longer interrupted.
    mutating func needsStart() -> Bool {
        guard running == nil else { return false }
        interrupted = false
        return true
    }

    /// A transport was started at host time `now`. Returns it back when another was started
    /// meanwhile: the caller stops the returned one.
    mutating func started(_ transport: Running, now: Double) -> Running? {
        if running != nil { return transport }
        running = transport
        if listens { monitor.disarm() } else { monitor.arm(now: now) }
        return nil
    }

    /// Stops when nothing uses the source (no sink, no hold): returns the transport to stop.
    mutating func stopIfUnused() -> Running? {
        guard sink == nil, holders == 0 else { return nil }
        defer { running = nil; monitor.disarm() }
        return running
    }

    // MARK: Traffic

    /// One message decoded to `decoded` arrived at host time `arrival` (s since boot) from `peer`.
    ///
    /// Counts it, maps its phone times through the clock's ``PhoneClockMapper`` (a clock step
    /// forgets the phone times seen so far), drops non-finite and stale readings, and returns the
    /// readings of the sensors asked for with their host times.
    mutating func receive(_ decoded: PhoneDecoded, arrival: Double, peer: String? = nil) -> Delivery {
        var out = Delivery()
        stats.messages += 1
        stats.empty += decoded.empty
        if let peer { stats.peer = peer }
        for reason in decoded.rejected {
            stats.malformed += 1
            if takeLogTurn() { out.problems.append(reason) }
        }
        if decoded.readings.isEmpty && decoded.extras.isEmpty && !decoded.rejected.isEmpty { return out }
        _ = monitor.heard(now: arrival)
        // A clock not seen before is a new session of the phone (phyphox names its clock by session):
        // its times start again, so the phone times seen on the other clocks say nothing about them.
        let newClock = clocks[decoded.clock] == nil && !clocks.isEmpty
        var clock = clocks[decoded.clock] ?? PhoneClockMapper()
        let resets = clock.resets
        for r in decoded.readings {
            if let p = r.phoneTime { clock.observe(phoneTime: p, arrival: arrival) }
        }
        for e in decoded.extras {
            if let p = e.phoneTime { clock.observe(phoneTime: p, arrival: arrival) }
        }
        if clock.resets != resets || newClock {
            lastPhone.removeAll()
            lastExtraPhone.removeAll()
            attitudes.removeAll()
            gravities.removeAll()
            for k in stats.sensors.keys { stats.sensors[k]?.firstPhone = nil; stats.sensors[k]?.lastPhone = nil }
        }
        clocks[decoded.clock] = clock
        out.samples.reserveCapacity(decoded.readings.count)
        for r in decoded.readings {
            guard r.value.x.isFinite, r.value.y.isFinite, r.value.z.isFinite else { stats.malformed += 1; continue }
            var host = arrival
            var spacing = 0.0
            if let p = r.phoneTime {
                if let lp = lastPhone[r.sensor] {
                    if p <= lp { stats.stale += 1; continue }
                    spacing = (p - lp) * (1 + clock.skew)
                }
                lastPhone[r.sensor] = p
                host = min(clock.hostTime(forPhoneTime: p) ?? arrival, arrival)
            }
            if let lh = lastHost[r.sensor], host <= lh {
                host = lh + max(1e-6, spacing * (1 - Self.catchUpRate))
            }
            lastHost[r.sensor] = host
            var c = stats.sensors[r.sensor] ?? PhoneStatistics.SensorCount(first: host)
            if c.firstPhone == nil, let p = r.phoneTime {
                c.firstPhone = p
                c.countBeforeFirstPhone = c.count
            }
            c.count += 1
            c.last = host
            c.lastPhone = r.phoneTime
            stats.sensors[r.sensor] = c
            if wanted.contains(r.sensor) { out.samples.append(RawSample(sensor: r.sensor, timestamp: host, value: r.value)) }
        }
        for e in decoded.extras {
            let name = e.quantity.name
            var host = arrival
            if let p = e.phoneTime {
                if let lp = lastExtraPhone[name], p <= lp { continue }
                lastExtraPhone[name] = p
                host = min(clock.hostTime(forPhoneTime: p) ?? arrival, arrival)
            }
            let count = (extras.latest[name]?.count ?? 0) + 1
            extras.latest[name] = PhoneExtras.Latest(count: count, value: e.quantity, timestamp: host)
            if keepsOwnAttitude {
                switch e.quantity {
                case .attitude(let q): attitudes.append(q, at: host)
                case .gravity(let g): gravities.append(g, at: host)
                case .pressure: break
                }
            }
        }
        if !out.samples.isEmpty { interrupted = false }
        out.sink = sink
        return out
    }

    /// A message was dropped for its size. Returns whether to log it.
    mutating func oversized() -> Bool {
        stats.oversized += 1
        return takeLogTurn()
    }

    /// Records the platform the messages reveal.
    mutating func notePlatform(_ platform: String) { stats.platform = platform }

    /// A connection was made or accepted.
    mutating func connectionOpened(_ peer: String) {
        stats.connections += 1
        stats.peer = peer
    }

    /// Time passed, to host time `now`. Returns `true` once per silence, when the phone sent nothing
    /// for the silence limit: the caller then calls ``interrupt()``.
    mutating func tick(now: Double) -> Bool {
        guard monitor.tick(now: now) else { return false }
        stats.silences += 1
        return true
    }

    /// A non-fatal interruption: returns the sink to tell, once; repeats return `nil` until a reading
    /// is delivered again (and always without a sink).
    mutating func interrupt() -> Sink? {
        guard !interrupted, let sink else { return nil }
        interrupted = true
        return sink
    }

    /// The phone's attitude at or before `timestamp` (host time), with its gravity at or before the
    /// same time; `nil` before the first and once the attitude is older than the silence limit.
    func ownAttitude(at timestamp: Double, isTrueNorth: Bool) -> OwnAttitude? {
        let limit = monitor.limit
        guard let a = attitudes.value(atOrBefore: timestamp), timestamp - a.timestamp <= limit else { return nil }
        let g = gravities.value(atOrBefore: timestamp).flatMap { timestamp - $0.timestamp <= limit ? $0.value : nil }
        return OwnAttitude(attitude: a.value, gravity: g, timestamp: a.timestamp, isTrueNorth: isTrueNorth)
    }

    /// Counts one problem; returns whether it is one to log (the first ten, then every hundredth).
    private mutating func takeLogTurn() -> Bool {
        defer { problemsLogged += 1 }
        return problemsLogged < 10 || problemsLogged % 100 == 0
    }
}
