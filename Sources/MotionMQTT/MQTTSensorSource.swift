import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources
import NIOConcurrencyHelpers
import NIOCore

/// Epoch time of this machine's boot in nanoseconds: `epoch ns − offset = ns since boot (CLOCK_MONOTONIC)`
/// (``MonotonicClock/unixTimeAtBoot()`` in the unit of Sensor Logger's timestamps); 0 if it does not fit.
package func mqttEpochOffsetNanoseconds() -> Int64 {
    let offset = MonotonicClock.unixTimeAtBoot() * 1e9
    return offset.isFinite && abs(offset) < 9e18 ? Int64(offset) : 0
}

/// A sample from one device of a broker.
package struct MQTTDeviceSample: Sendable, Hashable {
    /// The sender's `deviceId` (the topic when the message has none).
    package var device: String
    /// The reading, in Core Motion's units and signs, seconds since this machine's boot.
    package var sample: RawSample
}

/// What a broker source reports per device (``MQTTSensorSource/startDevices(_:handler:)``).
package enum MQTTDeviceEvent: Sendable, Hashable {
    /// A reading from a device.
    case sample(MQTTDeviceSample)
    /// A device was heard for the first time.
    case appeared(String)
    /// A device sent nothing for ``MQTTSensorSource/silence`` seconds.
    case silent(String)
    /// A message could not be decoded (topic, reason); it is skipped.
    case malformed(topic: String, reason: String)
    /// The broker connection is down and being retried, or was refused (`fatal`).
    case broker(String, fatal: Bool)
    /// The broker granted the subscription: from now on, messages published are delivered (QoS 1).
    case subscribed
}

/// An MQTT broker as a motion source: `mqtt://[USER:PASS@]HOST:PORT/TOPIC_FILTER[?device=ID&convention=apple&silence=S&client-id=ID]`.
///
/// It subscribes to the filter (`+` and `#` allowed) at QoS 1 in a persistent session (clean session
/// off, client id stable: `ocm-sub-` and a hash of the URL, or `client-id=`), and reads Sensor Logger
/// push messages, JSON or binary, from any number of devices (`deviceId`). Per device, messages are put
/// back in `messageId` order and duplicates dropped (``SensorLoggerPushReorderBuffer``), then converted to
/// Core Motion's units and signs (``SensorLoggerPushConverter``: the convention inferred per device from
/// its raw acceleration, as the export reader does, unless `convention=apple|standardised` says it).
///
/// As a ``SensorSource`` (one `CMMotionManager`) it delivers one device: the one named by `device=`,
/// else the first heard from. A device that sends nothing for `silence` seconds (default 5) interrupts
/// the source once with ``SourceError/Kind/deviceRemoved`` (`.interrupted`, `CMErrorNotAvailable` to
/// handlers), and a lost broker connection once with ``SourceError/Kind/io`` while it is retried: both
/// are non-fatal, and delivery resumes with the device's next sample. All devices at once, each
/// labelled, come through ``startDevices(_:handler:)``. Broker problems (unreachable, connection lost)
/// are retried with exponential backoff and reported through ``log``; refused credentials (CONNACK 4 or
/// 5) fail the source (`.failed`, final) with ``SourceError/Kind/permissionDenied``.
///
/// Rates: devices send at their own rate, whatever is asked. ``apply(_:sink:)`` reports, per sensor
/// asked for, the rate measured from the delivered device's own sample timestamps so far — readings
/// accepted minus one over the time between the first and the last (``rates(of:)``), once more than
/// ten have come — else ``SensorCapability/maximumRate`` (1000 Hz), so the hub thins the stream for a
/// slower consumer by timestamp.
///
/// ## Threading
/// Events are delivered on the MQTT client's event loop, one at a time. ``apply(_:sink:)`` may be
/// called from any thread; with an empty demand it returns once no sink call is in flight (from inside
/// a sink call, at once), and the sink is not called again (``SinkGate``).
package final class MQTTSensorSource: SensorSource {
    /// The broker URL.
    package let url: MQTTURL
    /// The device this source delivers as a ``SensorSource`` (`device=`), or `nil` for the first heard.
    package let boundDevice: String?
    /// Seconds without a message after which a device counts as gone (`silence=`, default 5).
    package let silence: Double
    /// The acceleration convention of incoming messages (`convention=`); `nil` (the default) infers
    /// it per device from its readings (``SensorLoggerPushConverter``).
    package let convention: SensorLoggerConvention?
    /// Where connection problems and the silence of the delivered device are reported (default: one line on standard error).
    package let log: @Sendable (String) -> Void

    package let info: SourceInfo

    private struct DeviceState {
        var reorder = SensorLoggerPushReorderBuffer()
        var converter: SensorLoggerPushConverter
        var lastHeard: Double
        var silent = false
        var rates: [SensorKind: RateCount] = [:]
        /// Whether the "user acceleration only" notice was given for this device.
        var toldUserAccelerationOnly = false
    }

    /// Readings of one sensor of one device: how many, and the sample times of the first and last.
    struct RateCount: Sendable, Hashable {
        var count = 0
        var first = 0.0
        var last = 0.0
        mutating func add(_ t: Double) {
            if count == 0 { first = t }
            count += 1
            last = t
        }
        /// (count − 1) / (last − first) in Hz, once more than ten readings spanning some time have come.
        var rate: Double? { count > 10 && last > first ? Double(count - 1) / (last - first) : nil }
    }

    private struct State {
        var client: MQTTClient?
        var ticker: RepeatedTask?
        var devices: [String: DeviceState] = [:]
        /// Whether a consumer applied a demand (its sink is then the gate's).
        var consuming = false
        var deviceHandler: (@Sendable (MQTTDeviceEvent) -> Void)?
        var demand = SensorDemand.none
        var pinned: String?
        var failed = false
        /// An `.interrupted` was sent to the sink and no sample has followed yet.
        var interrupted = false
        /// The broker granted the subscription on the current connection (so a device handler installed
        /// later is told at once: it would otherwise wait for a `.subscribed` already gone by).
        var subscribed = false
    }

    private let state = NIOLockedValueBox(State())
    /// Calls the consumer's sink: serialised, silent once an empty demand has been applied, one `.failed`.
    private let gate = SinkGate()
    private let clientID: String

    /// The longest wait between two connection attempts of a broker source, 0.25 s: one subscriber
    /// trying a down broker four times a second costs nothing, and being back before the publishers
    /// keeps the broker's per-client queue short after a restart.
    package static let subscriberMaximumBackoff = 0.25

    /// Creates a source from a URL (see the type's documentation for the parameters).
    package init(url: MQTTURL, log: (@Sendable (String) -> Void)? = nil) throws(SourceError) {
        guard !url.topic.isEmpty else { throw SourceError(.unavailable, "\(url): no topic filter; for example mqtt://localhost:1883/fleet/#") }
        self.url = url
        boundDevice = url.parameter("device").flatMap { $0.isEmpty ? nil : $0 }
        if let s = url.parameter("silence") {
            guard let v = Double(s), v.isFinite, v > 0, v <= 86_400 else { throw SourceError(.unavailable, "\(url): silence=\(s) must be a number of seconds from 0 to 86400") }
            silence = v
        } else {
            silence = 5
        }
        if let c = url.parameter("convention") {
            guard let v = SensorLoggerConvention(rawValue: c) else { throw SourceError(.unavailable, "\(url): convention=\(c); expected standardised or apple") }
            convention = v
        } else {
            convention = nil
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in "\(url)|\(boundDevice ?? "")".utf8 { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        clientID = url.parameter("client-id") ?? "ocm-sub-\(String(hash, radix: 16))"
        self.log = log ?? { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
        let cap = SensorCapability(minimumRate: 1, maximumRate: 1000)
        info = SourceInfo(identifier: url.description + (boundDevice.map { "?device=\($0)" } ?? ""),
                          name: "MQTT broker \(url.host):\(url.port), topic \(url.topic)",
                          sensors: [.accelerometer: cap, .gyro: cap, .magnetometer: cap],
                          details: [("broker", "\(url.host):\(url.port)"), ("topic filter", url.topic), ("device", boundDevice ?? "first heard"),
                                    ("silence", "\(silence) s"), ("convention", convention?.rawValue ?? "inferred per device"), ("client id", clientID)])
    }

    /// Creates a source from its spec string.
    package convenience init(spec: String) throws(SourceError) {
        let url: MQTTURL
        do { url = try MQTTURL(parsing: spec) } catch { throw SourceError(.unavailable, error.message) }
        try self.init(url: url)
    }

    @discardableResult
    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        let detached: (MQTTClient?, RepeatedTask?) = state.withLockedValue { s in
            s.demand = demand
            if demand.isEmpty {
                s.consuming = false
                return s.deviceHandler == nil ? Self.detach(&s) : (nil, nil)
            }
            s.consuming = true
            s.failed = false
            s.interrupted = false
            return (nil, nil)
        }
        if demand.isEmpty {
            gate.close()
            Self.stop(detached)
            return [:]
        }
        gate.open(sink)
        startClient()
        // Devices send at their own rate: report the rate measured so far for the device delivered,
        // else the highest this source accepts, so the hub thins by timestamp for slower consumers.
        let measured = state.withLockedValue { s in (s.pinned ?? boundDevice).flatMap { s.devices[$0] }?.rates.compactMapValues(\.rate) ?? [:] }
        let maximum = info.sensors[.accelerometer]?.maximumRate ?? 1000
        return demand.rates.mapValues { _ in maximum }.merging(measured.filter { demand.rates[$0.key] != nil }) { _, m in min(m, maximum) }
    }

    /// The rates measured so far for one device, per sensor, in Hz: readings minus one over the span of
    /// their sample timestamps (the device's own clock, mapped to this machine's), once a sensor has
    /// more than ten readings. Empty for a device not heard from.
    package func rates(of device: String) -> [SensorKind: Double] {
        state.withLockedValue { s in s.devices[device]?.rates.compactMapValues(\.rate) ?? [:] }
    }

    /// Starts delivering every device's samples, labelled, to `handler` (`demand` says which sensors).
    /// When the broker has already granted the subscription (the source was running), `handler` hears
    /// `.subscribed` at once. Call ``stopDevices()`` to end.
    package func startDevices(_ demand: SensorDemand = SensorDemand(rates: [.accelerometer: 100, .gyro: 100, .magnetometer: 100]),
                             handler: @escaping @Sendable (MQTTDeviceEvent) -> Void) {
        let alreadySubscribed = state.withLockedValue { s -> Bool in
            s.deviceHandler = handler
            if !s.consuming { s.demand = demand }
            return s.subscribed
        }
        if alreadySubscribed { handler(.subscribed) }
        startClient()
    }

    /// Stops ``startDevices(_:handler:)``; disconnects once no consumer is left, and returns when it has.
    package func stopDevices() async {
        let (client, ticker): (MQTTClient?, RepeatedTask?) = state.withLockedValue { s in
            s.deviceHandler = nil
            return !s.consuming ? Self.detach(&s) : (nil, nil)
        }
        ticker?.cancel()
        await client?.stop()
    }

    /// Takes the client out of the state (under the lock), so a new one can start at once.
    private static func detach(_ s: inout State) -> (MQTTClient?, RepeatedTask?) {
        defer { s.client = nil; s.ticker = nil; s.devices = [:]; s.pinned = nil; s.subscribed = false }
        return (s.client, s.ticker)
    }

    private static func stop(_ detached: (MQTTClient?, RepeatedTask?)) {
        detached.1?.cancel()
        guard let client = detached.0 else { return }
        Task { await client.stop() }
    }

    private func startClient() {
        let client: MQTTClient? = state.withLockedValue { s in
            guard s.client == nil else { return nil }
            var config = url.clientConfiguration(clientID: clientID)
            // One subscriber per source: retry at least every 0.25 s, so that after a broker restart it is
            // normally back before the publishers (0.1 s doubling to 5 s) resend their backlog, and the
            // broker's queue for it (Mosquitto keeps 1000 messages by default) does not overflow.
            config.maximumBackoff = Self.subscriberMaximumBackoff
            let c = MQTTClient(configuration: config) { [weak self] event in self?.handle(event) }
            s.client = c
            s.ticker = c.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(250), delay: .milliseconds(250)) { [weak self] _ in self?.checkSilence() }
            return c
        }
        guard let client else { return }
        client.subscribe([(url.topic, .atLeastOnce)])
        client.start()
    }

    private func handle(_ event: MQTTClientEvent) {
        switch event {
        case .message(let m): received(m)
        case .disconnected(let reason, let retry):
            let text = "\(url): \(reason); retrying in \(String(format: "%.1f", retry)) s"
            state.withLockedValue { $0.subscribed = false }
            log(text)
            emitDevice(.broker(text, fatal: false))
            interrupt(SourceError(.io, text))
        case .refused(let code):
            let text = "\(url): \(code.explanation)"
            emitDevice(.broker(text, fatal: true))
            fail(SourceError(.permissionDenied, text))
        case .subscribed:
            // One locked step with the handler read, so a handler installed meanwhile hears it exactly once.
            let handler = state.withLockedValue { s in
                s.subscribed = true
                return s.deviceHandler
            }
            handler?(.subscribed)
        case .connected, .dropped:
            break
        }
    }

    private func emitDevice(_ e: MQTTDeviceEvent) {
        state.withLockedValue { $0.deviceHandler }?(e)
    }

    /// Tells the sink once, until its next sample, that delivery has paused (non-fatal).
    private func interrupt(_ error: SourceError) {
        let tell = state.withLockedValue { s -> Bool in
            guard !s.failed, !s.interrupted, s.consuming else { return false }
            s.interrupted = true
            return true
        }
        if tell { gate.deliver(.interrupted(error)) }
    }

    private func fail(_ error: SourceError) {
        let tell = state.withLockedValue { s -> Bool in
            guard !s.failed, s.consuming else { return false }
            s.failed = true
            return true
        }
        if tell { gate.end(.failed(error)) }
    }

    private func received(_ m: MQTTMessage) {
        let message: SensorLoggerPushMessage
        do {
            message = try SensorLoggerPush.decode(m.payload)
        } catch {
            emitDevice(.malformed(topic: m.topic, reason: error.message))
            return
        }
        let device = message.deviceId.isEmpty ? m.topic : message.deviceId
        let now = ProcessInfo.processInfo.systemUptime
        let convention = self.convention
        var notice: String?
        let (samples, appeared, toSink, handler, wanted): ([RawSample], Bool, Bool, (@Sendable (MQTTDeviceEvent) -> Void)?, Set<SensorKind>) = state.withLockedValue { s in
            var appeared = false
            var d = s.devices[device] ?? {
                appeared = true
                return DeviceState(converter: SensorLoggerPushConverter(convention: convention, epochOffsetNanoseconds: mqttEpochOffsetNanoseconds()), lastHeard: now)
            }()
            d.lastHeard = now
            d.silent = false
            if !d.toldUserAccelerationOnly, Self.hasUserAccelerationOnly(message) {
                d.toldUserAccelerationOnly = true
                notice = "\(url): device \(device) sends accelerometer (user acceleration, without gravity) but no gravity, totalacceleration or accelerometeruncalibrated in the same message, so its acceleration cannot be delivered; in Sensor Logger enable Gravity (or Total Acceleration)"
            }
            var out: [RawSample] = []
            for ready in d.reorder.add(message) { out += d.converter.samples(from: ready) }
            for sample in out { d.rates[sample.sensor, default: RateCount()].add(sample.timestamp) }
            s.devices[device] = d
            if s.pinned == nil, s.consuming { s.pinned = boundDevice ?? device }
            let toSink = s.pinned == device && !s.failed && s.consuming
            if toSink, !out.isEmpty { s.interrupted = false }
            return (out, appeared, toSink, s.deviceHandler, Set(s.demand.rates.keys))
        }
        if appeared { handler?(.appeared(device)) }
        if let notice { log(notice) }
        for sample in samples where wanted.contains(sample.sensor) {
            handler?(.sample(MQTTDeviceSample(device: device, sample: sample)))
            if toSink { gate.deliver(.sample(sample)) }
        }
    }

    /// `accelerometer` entries (Sensor Logger's user acceleration) with nothing to rebuild the raw
    /// acceleration from.
    static func hasUserAccelerationOnly(_ message: SensorLoggerPushMessage) -> Bool {
        var user = false
        for e in message.payload {
            switch e.name.lowercased() {
            case "accelerometer": user = true
            case "gravity", "totalacceleration", "accelerometeruncalibrated": return false
            default: break
            }
        }
        return user
    }

    private func checkSilence() {
        let now = ProcessInfo.processInfo.systemUptime
        let limit = silence
        // A device gone silent may leave messages held behind one that never came (its publisher
        // dropped it, e.g. past `--buffer-seconds`): they are released now, in order, not kept forever.
        let (gone, pinned, released, toSink, handler, wanted): ([String], String?, [String: [RawSample]], Bool,
                                                             (@Sendable (MQTTDeviceEvent) -> Void)?, Set<SensorKind>) = state.withLockedValue { s in
            var gone: [String] = []
            var released: [String: [RawSample]] = [:]
            for (id, d) in s.devices where !d.silent && now - d.lastHeard > limit {
                guard var d = s.devices[id] else { continue }
                d.silent = true
                var out: [RawSample] = []
                for ready in d.reorder.flush() { out += d.converter.samples(from: ready) }
                for sample in out { d.rates[sample.sensor, default: RateCount()].add(sample.timestamp) }
                if !out.isEmpty { released[id] = out }
                s.devices[id] = d
                gone.append(id)
            }
            let toSink = s.pinned.map { released[$0] != nil } == true && !s.failed && s.consuming
            return (gone.sorted(), s.pinned, released, toSink, s.deviceHandler, Set(s.demand.rates.keys))
        }
        for id in gone {
            for sample in released[id] ?? [] where wanted.contains(sample.sensor) {
                handler?(.sample(MQTTDeviceSample(device: id, sample: sample)))
                if id == pinned, toSink { gate.deliver(.sample(sample)) }
            }
            emitDevice(.silent(id))
            if id == pinned {
                let text = "\(url): device \(id) sent nothing for \(limit) s"
                log(text + "; waiting for it")
                interrupt(SourceError(.deviceRemoved, text))
            }
        }
    }
}

extension SourceProvider {
    /// MQTT brokers carrying Sensor Logger push messages: `mqtt://`, `mqtts://`, `mqtt+ws://`,
    /// `mqtt+wss://` (``MQTTSensorSource/init(spec:)``). No barometer; finds nothing by itself.
    package static let mqtt = SourceProvider(
        schemes: SourceSchemes.mqtt,
        usage: "mqtt://HOST:PORT/TOPIC",
        makeSource: { spec, _ throws(SourceError) in try MQTTSensorSource(spec: spec) }
    )
}
