import Foundation
import MotionFusion
import MotionSources
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// What a phone source has seen so far (``PhoneSource/statistics``).
package struct PhoneStatistics: Sendable, Hashable {
    /// Per sensor: readings accepted and the host times of the first and last one.
    package struct SensorCount: Sendable, Hashable {
        /// Readings accepted.
        package var count = 0
        /// Host time (s since boot) of the first accepted reading.
        package var first = 0.0
        /// Host time of the last accepted reading.
        package var last = 0.0
        /// Phone time (s, the phone's clock) of the first and last accepted reading, when they carry one.
        package var firstPhone: Double?
        package var lastPhone: Double?
        /// Readings accepted before ``firstPhone`` (a phone clock step starts the phone span afresh).
        package var countBeforeFirstPhone = 0
        /// The measured rate in Hz (`nil` with fewer than two readings): from the phone's own timestamps
        /// when the readings carry them (the phone's sampling, untouched by network delays and by the
        /// clock mapping settling), else from host times.
        package var rate: Double? {
            guard count > 1 else { return nil }
            if let a = firstPhone, let b = lastPhone, b > a, count - countBeforeFirstPhone > 1 {
                return Double(count - countBeforeFirstPhone - 1) / (b - a)
            }
            return last > first ? Double(count - 1) / (last - first) : nil
        }
    }

    /// Per-sensor counts.
    package var sensors: [SensorKind: SensorCount] = [:]
    /// Messages (requests, datagrams, lines, objects, frames) received.
    package var messages = 0
    /// Messages or parts of messages that did not decode.
    package var malformed = 0
    /// Messages dropped for exceeding a size cap.
    package var oversized = 0
    /// Entries sent without a value (phyphox's `null` before a buffer has filled): normal, not malformed.
    package var empty = 0
    /// Readings dropped because their phone time did not advance (repeated rows, late batches).
    package var stale = 0
    /// Times a phone clock stepped and its mapping restarted.
    package var clockResets = 0
    /// Times silence was reported.
    package var silences = 0
    /// Connections made (connecting sources) or accepted (listening ones).
    package var connections = 0
    /// The last peer heard from (address, and device id where the app sends one).
    package var peer: String?
    /// The phone's platform as far as its messages tell (Sensor Logger sends `accuracy` on Android only).
    package var platform: String?
}

/// A phone app streaming over the network as a motion source.
///
/// | spec | app | who connects |
/// |---|---|---|
/// | `sensorlogger://HOST:PORT` | Sensor Logger HTTP push | the phone POSTs to us; we listen on HOST:PORT |
/// | `sensorserver://HOST:PORT` | SensorServer | we connect to the phone's WebSocket `/sensors/connect` |
/// | `phyphox://HOST:PORT` | phyphox remote access | we poll the phone's REST interface (`/config`, `/control`, `/get`) |
/// | `sensorlog://HOST:PORT` | SensorLog TCP stream | we connect to the phone |
/// | `hyperimu://HOST:PORT` | HyperIMU UDP | the phone sends datagrams to us; we listen on HOST:PORT |
///
/// (parameters: ``PhoneSpec``). Each message is decoded and converted once, at this boundary, to Core
/// Motion's units and signs (``PhoneUnits``); the phone's timestamps are mapped onto this machine's
/// monotonic clock by a ``PhoneClockMapper`` per phone clock, and per sensor never go backwards.
///
/// Rates: the phone sends at the rate set in the app. ``apply(_:sink:)`` reports, per sensor asked
/// for, the rate measured so far (more than ten readings), else ``SensorCapability/maximumRate``
/// (500 Hz), so a consumer slower than the phone is thinned by timestamp downstream.
///
/// Faults: after `silence` seconds without data (default 5), and when a connecting source loses its
/// connection, the sink gets one `.interrupted` with ``SourceError/Kind/deviceRemoved``
/// (`CMErrorNotAvailable` for `CMMotionManager` handlers, whose updates keep running); repeats are held
/// back until a reading is delivered again, and readings resume delivery as soon as the phone sends.
/// The source never sends `.failed` once started. Connecting sources reconnect with exponential backoff.
/// Malformed or oversized messages are counted in ``statistics`` and logged (the first ten, then
/// every hundredth), never fatal. Listening sources bind only HOST, print the addresses to type into
/// the app, and fail to start with a clear ``SourceError`` when the port is in use.
///
/// ## Threading
/// Everything of one source runs on one NIO event loop: events reach the sink there, one at a time.
/// ``apply(_:sink:)`` may be called from any thread; called off the loop with an empty demand, it
/// returns once no sink call is in flight.
package final class PhoneSource: SensorSource {
    /// The parsed specification.
    package let spec: PhoneSpec
    /// Seconds without data before the sink gets an error.
    package let silence: Double
    /// Whether device motion reports the phone's own attitude and gravity (`?motion=phone`) rather
    /// than fusing the raw sensors (`?motion=fused`, the default). See ``OwnAttitudeProviding``.
    package let reportsOwnAttitude: Bool
    /// Where connection notes and malformed-message reports go (default: standard error).
    package let log: @Sendable (String) -> Void
    package let info: SourceInfo

    /// The event loop this source runs on.
    let eventLoop: any EventLoop

    struct State {
        var sink: (@Sendable (SourceEvent) -> Void)?
        var wanted: Set<SensorKind> = []
        /// An interruption was reported and no reading was delivered since.
        var interrupted = false
        var transport: (any PhoneTransport)?
        var ticker: RepeatedTask?
        var clocks: [String: PhoneClockMapper] = [:]
        var lastPhone: [SensorKind: Double] = [:]
        var lastHost: [SensorKind: Double] = [:]
        var monitor: SilenceMonitor
        var stats: PhoneStatistics
        var problemsLogged = 0
        var extras = PhoneExtras()
        /// Under `motion=phone`: the phone's recent attitudes and gravities, host times.
        var attitudes = OwnAttitudeHistory<Quaternion>()
        var gravities = OwnAttitudeHistory<Vector3>()
        var lastExtraPhone: [String: Double] = [:]
        /// ``hold()`` calls not yet released: the transport runs while positive, whatever the demand.
        var holders = 0
    }

    let state: NIOLockedValueBox<State>

    /// Creates a source from its spec (see ``PhoneSpec``).
    /// - Parameters:
    ///   - log: where notes go; default one line on standard error.
    ///   - eventLoopGroup: the loops to pick one from (default: NIO's shared group).
    package init(spec: PhoneSpec, log: (@Sendable (String) -> Void)? = nil,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws(SourceError) {
        self.spec = spec
        silence = try spec.number("silence", default: 5, in: 0.1...86_400)
        switch spec.parameters["motion"] {
        case nil, "fused": reportsOwnAttitude = false
        case "phone": reportsOwnAttitude = true
        case let other?:
            throw SourceError(.unavailable, "\(spec): motion=\(other); expected phone (the phone's own attitude and gravity) or fused (the default)")
        }
        if reportsOwnAttitude && spec.app == .hyperIMU {
            throw SourceError(.unavailable, "\(spec): motion=phone: HyperIMU sends no attitude; leave the option out to fuse its raw sensors")
        }
        self.log = log ?? { FileHandle.standardError.write(Data(("coremotion: " + $0 + "\n").utf8)) }
        eventLoop = eventLoopGroup.next()
        var stats = PhoneStatistics()
        stats.platform = spec.app == .sensorLogger ? nil : spec.app.platform
        state = NIOLockedValueBox(State(monitor: SilenceMonitor(limit: silence), stats: stats))
        let cap = SensorCapability(minimumRate: 1, maximumRate: 500)
        var details: [(String, String)] = [("app", spec.app.displayName), ("platform", spec.app.platform)]
        details.append(spec.app.listens ? ("listens on", "\(spec.host):\(spec.port)") : ("connects to", "\(spec.host):\(spec.port)"))
        details.append(("silence", "\(silence) s"))
        details.append(("device motion", reportsOwnAttitude ? "the phone's own attitude and gravity" : "fused here from the raw sensors"))
        info = SourceInfo(identifier: spec.description, name: "\(spec.app.displayName) phone at \(spec.host):\(spec.port)",
                          sensors: [.accelerometer: cap, .gyro: cap, .magnetometer: cap], details: details)
        // Validate the app's own parameters now, so a bad spec fails at once.
        _ = try makeTransport()
    }

    deinit {
        let (transport, ticker) = state.withLockedValue { ($0.transport, $0.ticker) }
        ticker?.cancel()
        transport?.stop()
    }

    /// Creates a source from a spec string such as `sensorlogger://0.0.0.0:8000`.
    package convenience init(spec text: String) throws(SourceError) {
        try self.init(spec: PhoneSpec(parsing: text))
    }

    /// A snapshot of what was received so far.
    package var statistics: PhoneStatistics {
        state.withLockedValue { s in
            var st = s.stats
            st.clockResets = s.clocks.values.reduce(0) { $0 + $1.resets }
            return st
        }
    }

    /// The local address a listening source is bound to (`HOST:PORT`, with the real port when the spec
    /// said 0), `nil` when not listening.
    package var boundAddress: (host: String, port: Int)? {
        state.withLockedValue { $0.transport?.localAddress }
    }

    func makeTransport() throws(SourceError) -> any PhoneTransport {
        switch spec.app {
        case .sensorLogger: try SensorLoggerServer(source: self)
        case .hyperIMU: try HyperIMUReceiver(source: self)
        case .sensorServer: try ConnectingTransport(source: self, protocol: .sensorServer)
        case .sensorLog: try ConnectingTransport(source: self, protocol: .sensorLog)
        case .phyphox: try PhyphoxTransport(source: self)
        }
    }

    @discardableResult
    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        if demand.isEmpty {
            state.withLockedValue { s in s.sink = nil; s.wanted = [] }
            stopIfUnused()
            return [:]
        }
        state.withLockedValue { s in
            s.sink = sink
            s.wanted = Set(demand.rates.keys)
        }
        do {
            try startIfStopped()
        } catch {
            state.withLockedValue { s in s.sink = nil; s.wanted = [] }
            throw error
        }
        // The phone sends at its own rate, whatever is asked. Report the rate measured so far, else
        // the highest this source accepts, so the hub thins the stream for slower consumers by
        // timestamp instead of passing every sample on.
        let measured = state.withLockedValue { s in s.stats.sensors.compactMapValues { $0.count > 10 ? $0.rate : nil } }
        let maximum = info.sensors[.accelerometer]?.maximumRate ?? 500
        return demand.rates.mapValues { _ in maximum }.merging(measured.filter { demand.rates[$0.key] != nil }) { _, m in min(m, maximum) }
    }

    /// Keeps the transport running without a sink (a ``PhoneBarometer`` reading the phone's pressure),
    /// until as many ``release()`` calls.
    /// - Throws: ``SourceError`` when the transport cannot start.
    package func hold() throws(SourceError) {
        state.withLockedValue { $0.holders += 1 }
        do {
            try startIfStopped()
        } catch {
            state.withLockedValue { $0.holders -= 1 }
            throw error
        }
    }

    /// Ends one ``hold()``; the transport stops when nothing else uses it.
    package func release() {
        state.withLockedValue { $0.holders = max(0, $0.holders - 1) }
        stopIfUnused()
    }

    /// The latest pressure, attitude and gravity the phone sent (host times).
    package var extras: PhoneExtras { state.withLockedValue { $0.extras } }

    /// Whether the phone's attitude refers to true north: Sensor Logger with `convention=apple` sends
    /// `CMAttitude` in `xTrueNorthZVertical`; every other app's attitude is magnetic.
    var attitudeIsTrueNorth: Bool { spec.app == .sensorLogger && spec.parameters["convention"] == "apple" }

    private func startIfStopped() throws(SourceError) {
        let needsStart = state.withLockedValue { s -> Bool in
            if s.transport == nil { s.interrupted = false }
            return s.transport == nil
        }
        guard needsStart else { return }
        let transport = try makeTransport()
        try transport.start()
        let now = MonotonicClock.now()
        let ticker = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) { [weak self] _ in
            self?.checkSilence()
        }
        let extra = state.withLockedValue { s -> (any PhoneTransport, RepeatedTask)? in
            // Another caller started one meanwhile: keep theirs.
            if s.transport != nil { return (transport, ticker) }
            s.transport = transport
            s.ticker = ticker
            if spec.app.listens { s.monitor.disarm() } else { s.monitor.arm(now: now) }
            return nil
        }
        if let (t, k) = extra { k.cancel(); t.stop() }
    }

    private func stopIfUnused() {
        let (transport, ticker) = state.withLockedValue { s -> ((any PhoneTransport)?, RepeatedTask?) in
            guard s.sink == nil, s.holders == 0 else { return (nil, nil) }
            defer { s.transport = nil; s.ticker = nil; s.monitor.disarm() }
            return (s.transport, s.ticker)
        }
        ticker?.cancel()
        transport?.stop()
        if !eventLoop.inEventLoop { try? eventLoop.submit {}.wait() }
    }

    // MARK: From the transports (on the event loop)

    /// Delivers what one message decoded to, stamped with its arrival time (s since boot).
    func received(_ decoded: PhoneDecoded, arrival: Double, peer: String? = nil) {
        var samples: [RawSample] = []
        samples.reserveCapacity(decoded.readings.count)
        let (sink, problems) = state.withLockedValue { s -> ((@Sendable (SourceEvent) -> Void)?, [String]) in
            s.stats.messages += 1
            s.stats.empty += decoded.empty
            if let peer { s.stats.peer = peer }
            var problems: [String] = []
            for reason in decoded.rejected {
                s.stats.malformed += 1
                if Self.shouldLog(s.problemsLogged) { problems.append("\(spec): malformed message (\(reason)); skipped") }
                s.problemsLogged += 1
            }
            if decoded.readings.isEmpty && decoded.extras.isEmpty && !decoded.rejected.isEmpty { return (nil, problems) }
            _ = s.monitor.heard(now: arrival)
            var clock = s.clocks[decoded.clock] ?? PhoneClockMapper()
            let resets = clock.resets
            for r in decoded.readings {
                if let p = r.phoneTime { clock.observe(phoneTime: p, arrival: arrival) }
            }
            for e in decoded.extras {
                if let p = e.phoneTime { clock.observe(phoneTime: p, arrival: arrival) }
            }
            if clock.resets != resets {
                s.lastPhone.removeAll()
                s.lastExtraPhone.removeAll()
                s.attitudes.removeAll()
                s.gravities.removeAll()
                for k in s.stats.sensors.keys { s.stats.sensors[k]?.firstPhone = nil; s.stats.sensors[k]?.lastPhone = nil }
            }
            s.clocks[decoded.clock] = clock
            for r in decoded.readings {
                guard r.value.x.isFinite, r.value.y.isFinite, r.value.z.isFinite else { s.stats.malformed += 1; continue }
                var host = arrival
                if let p = r.phoneTime {
                    if let lp = s.lastPhone[r.sensor], p <= lp { s.stats.stale += 1; continue }
                    s.lastPhone[r.sensor] = p
                    host = min(clock.hostTime(forPhoneTime: p) ?? arrival, arrival)
                }
                if let lh = s.lastHost[r.sensor], host <= lh { host = lh + 1e-6 }
                s.lastHost[r.sensor] = host
                var c = s.stats.sensors[r.sensor] ?? PhoneStatistics.SensorCount(first: host)
                if c.firstPhone == nil, let p = r.phoneTime {
                    c.firstPhone = p
                    c.countBeforeFirstPhone = c.count
                }
                c.count += 1
                c.last = host
                c.lastPhone = r.phoneTime
                s.stats.sensors[r.sensor] = c
                if s.wanted.contains(r.sensor) { samples.append(RawSample(sensor: r.sensor, timestamp: host, value: r.value)) }
            }
            for e in decoded.extras {
                let name = e.quantity.name
                var host = arrival
                if let p = e.phoneTime {
                    if let lp = s.lastExtraPhone[name], p <= lp { continue }
                    s.lastExtraPhone[name] = p
                    host = min(clock.hostTime(forPhoneTime: p) ?? arrival, arrival)
                }
                let count = (s.extras.latest[name]?.count ?? 0) + 1
                s.extras.latest[name] = PhoneExtras.Latest(count: count, value: e.quantity, timestamp: host)
                if reportsOwnAttitude {
                    switch e.quantity {
                    case .attitude(let q): s.attitudes.append(q, at: host)
                    case .gravity(let g): s.gravities.append(g, at: host)
                    case .pressure: break
                    }
                }
            }
            if !samples.isEmpty { s.interrupted = false }
            return (s.sink, problems)
        }
        for p in problems { log(p) }
        guard let sink else { return }
        for sample in samples { sink(.sample(sample)) }
    }

    /// Counts a message dropped for its size.
    func oversized(_ what: String) {
        let line = state.withLockedValue { s -> String? in
            s.stats.oversized += 1
            defer { s.problemsLogged += 1 }
            return Self.shouldLog(s.problemsLogged) ? "\(spec): \(what); dropped" : nil
        }
        if let line { log(line) }
    }

    /// Counts a malformed message that produced no decode result at all.
    func malformed(_ reason: String) {
        var d = PhoneDecoded()
        d.rejected = [reason]
        received(d, arrival: MonotonicClock.now())
    }

    /// Records the platform the messages reveal.
    func notePlatform(_ platform: String) {
        state.withLockedValue { $0.stats.platform = platform }
    }

    /// Counts a connection made or accepted.
    func connectionOpened(_ peer: String) {
        state.withLockedValue { s in
            s.stats.connections += 1
            s.stats.peer = peer
        }
    }

    private static func shouldLog(_ n: Int) -> Bool { n < 10 || n % 100 == 0 }

    private func checkSilence() {
        let now = MonotonicClock.now()
        let silent = state.withLockedValue { s -> Bool in
            guard s.monitor.tick(now: now) else { return false }
            s.stats.silences += 1
            return true
        }
        guard silent else { return }
        let what = spec.app.listens
            ? "the phone sent nothing for \(silence) s; check that \(spec.app.displayName) is still streaming to this machine"
            : "no data from the phone for \(silence) s; check that \(spec.app.displayName) is running and reachable at \(spec.host):\(spec.port)"
        interrupt(what)
    }

    /// The connection to the phone was lost after it had been up; the transport reconnects.
    func connectionLost(_ reason: String) {
        interrupt("lost the connection to \(spec.app.displayName) at \(spec.host):\(spec.port) (\(reason)); reconnecting")
    }

    /// Reports a non-fatal interruption once: repeats are held back until data flows again.
    private func interrupt(_ what: String) {
        let sink = state.withLockedValue { s -> (@Sendable (SourceEvent) -> Void)? in
            guard !s.interrupted, let sink = s.sink else { return nil }
            s.interrupted = true
            return sink
        }
        log("\(spec): \(what)")
        sink?(.interrupted(SourceError(.deviceRemoved, "\(spec): \(what)")))
    }
}

extension PhoneSource: OwnAttitudeProviding {
    /// The phone's attitude at or before `timestamp` (host time), with its gravity at or before the
    /// same time, from the last ``OwnAttitudeHistory/capacity`` of each (kept only under
    /// `motion=phone`); `nil` before the first and once the attitude is older than ``silence``.
    package func ownAttitude(at timestamp: Double) -> OwnAttitude? {
        state.withLockedValue { s -> OwnAttitude? in
            guard let a = s.attitudes.value(atOrBefore: timestamp), timestamp - a.timestamp <= silence else { return nil }
            let g = s.gravities.value(atOrBefore: timestamp).flatMap { timestamp - $0.timestamp <= silence ? $0.value : nil }
            return OwnAttitude(attitude: a.value, gravity: g, timestamp: a.timestamp, isTrueNorth: attitudeIsTrueNorth)
        }
    }
}

/// The last few timed values of one quantity, for lookups by time. Bounded: at most ``capacity``.
struct OwnAttitudeHistory<Value: Sendable>: Sendable {
    /// Values kept: 2 s at 256 Hz, more than any app's batch.
    static var capacity: Int { 512 }
    private var items = CircularBuffer<(timestamp: Double, value: Value)>(initialCapacity: 16)

    /// Adds a value; timestamps must not go backwards (a value older than the last is dropped).
    mutating func append(_ value: Value, at timestamp: Double) {
        if let last = items.last, timestamp < last.timestamp { return }
        if items.count >= Self.capacity { items.removeFirst() }
        items.append((timestamp, value))
    }

    /// The newest value at or before `timestamp` (0.5 ms of slack for rounding), searched from the end.
    func value(atOrBefore timestamp: Double) -> (timestamp: Double, value: Value)? {
        var i = items.endIndex
        while i != items.startIndex {
            i = items.index(before: i)
            if items[i].timestamp <= timestamp + 0.0005 { return items[i] }
        }
        return nil
    }

    mutating func removeAll() { items.removeAll(keepingCapacity: true) }
}

/// The network side of a phone source.
protocol PhoneTransport: AnyObject, Sendable {
    /// Binds (listening) or starts connecting; throws when a listening socket cannot be bound.
    func start() throws(SourceError)
    /// Closes everything, asynchronously.
    func stop()
    /// The bound address of a listening transport.
    var localAddress: (host: String, port: Int)? { get }
}

/// The addresses of this machine a phone on the network can reach, for a listener bound to `host`.
func reachableAddresses(forListeningHost host: String) -> [String] {
    guard host == "0.0.0.0" || host == "::" || host == "*" else { return [host] }
    var out: [String] = []
    if let devices = try? System.enumerateDevices() {
        for d in devices {
            guard let a = d.address, let ip = a.ipAddress else { continue }
            if case .v4 = a, !ip.hasPrefix("127.") { out.append(ip) }
        }
    }
    return out.isEmpty ? ["127.0.0.1"] : Array(Set(out)).sorted()
}

/// A `SourceError` for a listener that could not be bound.
func bindError(_ spec: PhoneSpec, _ error: any Error) -> SourceError {
    let text = String(describing: error)
    if let io = error as? IOError {
        if io.errnoCode == EADDRINUSE {
            return SourceError(.unavailable, "\(spec): port \(spec.port) is in use on \(spec.host); stop the other program or pick another port")
        }
        if io.errnoCode == EADDRNOTAVAIL {
            return SourceError(.unavailable, "\(spec): \(spec.host) is not an address of this machine; use one of \(reachableAddresses(forListeningHost: "0.0.0.0").joined(separator: ", ")) or 0.0.0.0")
        }
        if io.errnoCode == EACCES {
            return SourceError(.permissionDenied, "\(spec): no permission to listen on port \(spec.port); use a port above 1023")
        }
    }
    return SourceError(.unavailable, "\(spec): cannot listen: \(text)")
}

/// `ADDRESS:PORT` of a socket address, for messages.
func peerText(_ address: SocketAddress?) -> String {
    guard let address, let ip = address.ipAddress else { return "?" }
    let port = address.port.map(String.init) ?? "?"
    return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
}
