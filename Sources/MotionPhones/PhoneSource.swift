import Foundation
import MotionFusion
import MotionSources
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

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
/// ``apply(_:sink:)`` may be called from any thread; with an empty demand it returns once no sink call
/// is in flight (from inside a sink call, at once), and the sink is not called again (``SinkGate``).
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

    /// What a started transport leaves to stop: the transport and its silence ticker.
    struct Running: Sendable {
        var transport: any PhoneTransport
        var ticker: RepeatedTask

        func stop() {
            ticker.cancel()
            transport.stop()
        }
    }

    /// Everything else, behind one lock; the actions it returns are performed outside the lock.
    let state: NIOLockedValueBox<PhoneSourceStateMachine<Running>>
    /// Calls the consumer's sink (the machine decides whether and what): serialised, silent once an
    /// empty demand has been applied.
    private let gate = SinkGate()

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
        case "phone", "own": reportsOwnAttitude = true
        case let other?:
            throw SourceError(.unavailable, "\(spec): motion=\(other); expected phone (or own: the phone's own attitude and gravity) or fused (the default)")
        }
        if reportsOwnAttitude && spec.app == .hyperIMU {
            throw SourceError(.unavailable, "\(spec): motion=phone: HyperIMU sends no attitude; leave the option out to fuse its raw sensors")
        }
        self.log = log ?? { FileHandle.standardError.write(Data(("coremotion: " + $0 + "\n").utf8)) }
        eventLoop = eventLoopGroup.next()
        state = NIOLockedValueBox(PhoneSourceStateMachine(
            silence: silence, keepsOwnAttitude: reportsOwnAttitude, listens: spec.app.listens,
            platform: spec.app == .sensorLogger ? nil : spec.app.platform))
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
        state.withLockedValue { $0.running }?.stop()
    }

    /// Creates a source from a spec string such as `sensorlogger://0.0.0.0:8000`.
    package convenience init(spec text: String) throws(SourceError) {
        try self.init(spec: PhoneSpec(parsing: text))
    }

    /// A snapshot of what was received so far.
    package var statistics: PhoneStatistics {
        state.withLockedValue { $0.statistics }
    }

    /// The local address a listening source is bound to (`HOST:PORT`, with the real port when the spec
    /// said 0), `nil` when not listening.
    package var boundAddress: (host: String, port: Int)? {
        state.withLockedValue { $0.running?.transport }?.localAddress
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
            state.withLockedValue { $0.clearDemand() }
            gate.close()
            stopIfUnused()
            return [:]
        }
        gate.open(sink)
        state.withLockedValue { $0.demand(Set(demand.rates.keys), sink: sink) }
        do {
            try startIfStopped()
        } catch {
            state.withLockedValue { $0.clearDemand() }
            gate.close()
            throw error
        }
        // The phone sends at its own rate, whatever is asked. Report the rate measured so far, else
        // the highest this source accepts, so the hub thins the stream for slower consumers by
        // timestamp instead of passing every sample on.
        let measured = state.withLockedValue { $0.measuredRates }
        let maximum = info.sensors[.accelerometer]?.maximumRate ?? 500
        return demand.rates.mapValues { _ in maximum }.merging(measured.filter { demand.rates[$0.key] != nil }) { _, m in min(m, maximum) }
    }

    /// Keeps the transport running without a sink (a ``PhoneBarometer`` reading the phone's pressure),
    /// until as many ``release()`` calls.
    /// - Throws: ``SourceError`` when the transport cannot start.
    package func hold() throws(SourceError) {
        state.withLockedValue { $0.hold() }
        do {
            try startIfStopped()
        } catch {
            state.withLockedValue { $0.release() }
            throw error
        }
    }

    /// Ends one ``hold()``; the transport stops when nothing else uses it.
    package func release() {
        state.withLockedValue { $0.release() }
        stopIfUnused()
    }

    /// The latest pressure, attitude and gravity the phone sent (host times).
    package var extras: PhoneExtras { state.withLockedValue { $0.extras } }

    /// Whether the phone's attitude refers to true north: Sensor Logger with `convention=apple` sends
    /// `CMAttitude` in `xTrueNorthZVertical`; every other app's attitude is magnetic.
    var attitudeIsTrueNorth: Bool { spec.app == .sensorLogger && spec.parameters["convention"] == "apple" }

    private func startIfStopped() throws(SourceError) {
        guard state.withLockedValue({ $0.needsStart() }) else { return }
        let transport = try makeTransport()
        try transport.start()
        let now = MonotonicClock.now()
        let ticker = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) { [weak self] _ in
            self?.checkSilence()
        }
        // Another caller started one meanwhile: keep theirs.
        state.withLockedValue { $0.started(Running(transport: transport, ticker: ticker), now: now) }?.stop()
    }

    private func stopIfUnused() {
        state.withLockedValue { $0.stopIfUnused() }?.stop()
    }

    // MARK: From the transports (on the event loop)

    /// Delivers what one message decoded to, stamped with its arrival time (s since boot).
    func received(_ decoded: PhoneDecoded, arrival: Double, peer: String? = nil) {
        let delivery = state.withLockedValue { $0.receive(decoded, arrival: arrival, peer: peer) }
        for reason in delivery.problems { log("\(spec): malformed message (\(reason)); skipped") }
        guard delivery.sink != nil else { return }
        gate.deliver(delivery.samples)
    }

    /// Counts a message dropped for its size.
    func oversized(_ what: String) {
        if state.withLockedValue({ $0.oversized() }) { log("\(spec): \(what); dropped") }
    }

    /// Counts a malformed message that produced no decode result at all.
    func malformed(_ reason: String) {
        var d = PhoneDecoded()
        d.rejected = [reason]
        received(d, arrival: MonotonicClock.now())
    }

    /// Records the platform the messages reveal.
    func notePlatform(_ platform: String) {
        state.withLockedValue { $0.notePlatform(platform) }
    }

    /// Counts a connection made or accepted.
    func connectionOpened(_ peer: String) {
        state.withLockedValue { $0.connectionOpened(peer) }
    }

    private func checkSilence() {
        let now = MonotonicClock.now()
        guard state.withLockedValue({ $0.tick(now: now) }) else { return }
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
        let tell = state.withLockedValue { $0.interrupt() } != nil
        log("\(spec): \(what)")
        if tell { gate.deliver(.interrupted(SourceError(.deviceRemoved, "\(spec): \(what)"))) }
    }
}

extension PhoneSource: OwnAttitudeProviding {
    /// The phone's attitude at or before `timestamp` (host time), with its gravity at or before the
    /// same time, from the last ``OwnAttitudeHistory/capacity`` of each (kept only under
    /// `motion=phone`); `nil` before the first and once the attitude is older than ``silence``.
    package func ownAttitude(at timestamp: Double) -> OwnAttitude? {
        state.withLockedValue { $0.ownAttitude(at: timestamp, isTrueNorth: attitudeIsTrueNorth) }
    }
}
