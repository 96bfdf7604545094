import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources

/// One phyphox sensor input and the buffers its outputs fill, learned from `/config`.
package struct PhyphoxChannel: Sendable, Hashable {
    /// The phyphox sensor name (`accelerometer`, `gyroscope`, `magnetic_field`, …).
    package var source: String
    /// The buffer of the time output (seconds since the experiment started).
    package var time: String
    /// The buffers of the x, y and z outputs.
    package var x: String
    package var y: String
    package var z: String
    /// The buffer of the `abs` output where it is read: the quaternion's w for `attitude`.
    package var abs: String?

    /// Creates a channel. A one-value sensor (`pressure`) names its `x` buffer for `y` and `z` too.
    package init(source: String, time: String, x: String, y: String, z: String, abs: String? = nil) {
        self.source = source
        self.time = time
        self.x = x
        self.y = y
        self.z = z
        self.abs = abs
    }

    /// Whether this project reads the channel: a raw sensor, or `pressure`, `attitude`, `gravity`.
    package var isUsed: Bool { sensor != nil || ["pressure", "attitude", "gravity"].contains(source) }

    /// The buffers the channel reads, without repeats.
    var buffers: [String] {
        var out: [String] = []
        for b in [time, x, y, z] + (abs.map { [$0] } ?? []) where !out.contains(b) { out.append(b) }
        return out
    }

    /// The sensor this project reads from it, `nil` for one it does not use.
    package var sensor: SensorKind? {
        switch source {
        case "accelerometer": .accelerometer
        case "gyroscope": .gyro
        case "magnetic_field": .magnetometer
        default: nil
        }
    }

    /// The buffers of the stock experiments ("Acceleration with g", "Gyroscope", "Magnetometer"), used
    /// when `/config` lists no inputs.
    package static let stock: [PhyphoxChannel] = [
        PhyphoxChannel(source: "accelerometer", time: "acc_time", x: "accX", y: "accY", z: "accZ"),
        PhyphoxChannel(source: "gyroscope", time: "gyr_time", x: "gyrX", y: "gyrY", z: "gyrZ"),
        PhyphoxChannel(source: "magnetic_field", time: "mag_time", x: "magX", y: "magY", z: "magZ"),
    ]

    /// The channels of a `/config` document whose sensor this project reads: each input with a `t`
    /// output and `x`, `y`, `z` outputs. `outputs` may be a list of one-key objects (`[{"x":"accX"},…]`)
    /// or one object. Buffers that `/config` does not list in `buffers` are left out.
    /// - Returns: `nil` when the document is not a JSON object.
    package static func channels(config bytes: [UInt8]) -> [PhyphoxChannel]? {
        guard let object = parseJSON(bytes) as? [String: Any] else { return nil }
        let known: Set<String>? = (object["buffers"] as? [[String: Any]]).map { Set($0.compactMap { $0["name"] as? String }) }
        var out: [PhyphoxChannel] = []
        for input in object["inputs"] as? [[String: Any]] ?? [] {
            guard let source = input["source"] as? String else { continue }
            var outputs: [String: String] = [:]
            if let list = input["outputs"] as? [[String: Any]] {
                for entry in list { for (k, v) in entry { if let v = v as? String { outputs[k] = v } } }
            } else if let map = input["outputs"] as? [String: Any] {
                for (k, v) in map { if let v = v as? String { outputs[k] = v } }
            }
            guard let t = outputs["t"], let x = outputs["x"] else { continue }
            let channel: PhyphoxChannel
            if source == "pressure" {
                channel = PhyphoxChannel(source: source, time: t, x: x, y: x, z: x)
            } else {
                guard let y = outputs["y"], let z = outputs["z"] else { continue }
                if source == "attitude" {
                    guard let w = outputs["abs"] else { continue }
                    channel = PhyphoxChannel(source: source, time: t, x: x, y: y, z: z, abs: w)
                } else {
                    channel = PhyphoxChannel(source: source, time: t, x: x, y: y, z: z)
                }
            }
            if let known, !(channel.buffers.allSatisfy { known.contains($0) }) { continue }
            if channel.isUsed, !out.contains(where: { $0.source == source }) { out.append(channel) }
        }
        return out
    }
}

/// Decodes phyphox's `/get` responses and keeps the threshold of each channel's time buffer, so that
/// each poll asks only for what came since the last one.
///
/// A response is `{"buffer": {name: {"size", "updateMode", "buffer": [numbers or null]}}, "status":
/// {"session", "measuring", …}}`. The buffers of one channel can differ in length inside one response
/// (phyphox-ios#22): only the first `min` entries of all four are used, and the threshold moves to the
/// last time used, so the rest comes again with the next poll. An entry that is `null` (a value that
/// does not exist yet, on the first polls of a running experiment; NaN, ∞) is skipped and counted in
/// ``PhoneDecoded/empty``, not as malformed, and not reported. Acceleration (m/s², Android's sign on both platforms) is negated and divided by
/// ``PhyphoxPlatform/gravity``; rotation rate (rad/s) and magnetic field (µT) pass unchanged. Extras:
/// `pressure` (hPa → kPa), `gravity` (as acceleration), `attitude` (x, y, z and w in `abs`, in Android's
/// y-north frame on both platforms → Core Motion's, ``PhoneFrames``). Times are
/// seconds since the experiment started, on a clock named by the session (a new session restarts the
/// clock mapping and the thresholds).
package struct PhyphoxPoller: Sendable {
    /// The channels polled.
    package var channels: [PhyphoxChannel]
    /// The platform, for the acceleration factor.
    package var platform: PhyphoxPlatform
    /// The last time read per time buffer; `nil` until the first poll answered.
    package private(set) var thresholds: [String: Double] = [:]
    /// The session of the last response.
    package private(set) var session: String?
    /// Whether the last response said the experiment is measuring.
    package private(set) var measuring = false
    /// Polls answered with no new entry, in a row.
    package private(set) var emptyPolls = 0

    /// Creates a poller.
    package init(channels: [PhyphoxChannel], platform: PhyphoxPlatform) {
        self.channels = channels
        self.platform = platform
    }

    /// The request target of the next poll: per channel, the time buffer with its threshold and x, y, z
    /// with `threshold|time`; before the first answer, the last value of each (no threshold), so a long
    /// experiment's history is not fetched. Every 20th empty poll asks for the last values again, to
    /// notice an experiment that was cleared (its times start again below the threshold).
    package var path: String {
        var parts: [String] = []
        let probe = emptyPolls > 0 && emptyPolls % 20 == 0
        for c in channels {
            if !probe, let t = thresholds[c.time] {
                let v = Self.number(t)
                for b in c.buffers {
                    parts.append(b == c.time ? "\(Self.escape(b))=\(v)" : "\(Self.escape(b))=\(v)%7C\(Self.escape(c.time))")
                }
            } else {
                for b in c.buffers { parts.append(Self.escape(b)) }
            }
        }
        return "/get?" + parts.joined(separator: "&")
    }

    /// Decodes one `/get` answer into readings on the phone's clock.
    package mutating func decode(_ bytes: [UInt8]) -> PhoneDecoded {
        var out = PhoneDecoded()
        guard let object = parseJSON(bytes) as? [String: Any], let buffers = object["buffer"] as? [String: Any] else {
            out.rejected.append("phyphox /get: not a JSON object with a buffer")
            out.clock = "phyphox:" + (session ?? "")
            return out
        }
        let probe = emptyPolls > 0 && emptyPolls % 20 == 0
        let status = object["status"] as? [String: Any]
        let newSession = (status?["session"] as? String) ?? (status?["session"]).map { "\($0)" } ?? session ?? ""
        if newSession != session {
            if session != nil { thresholds.removeAll() }
            session = newSession
        }
        measuring = (status?["measuring"] as? Bool) ?? measuring
        out.clock = "phyphox:" + newSession
        func values(_ name: String) -> [Any]? { (buffers[name] as? [String: Any])?["buffer"] as? [Any] }
        var any = false
        for c in channels where c.isUsed {
            guard let t = values(c.time), let x = values(c.x), let y = values(c.y), let z = values(c.z) else {
                out.rejected.append("phyphox /get: buffers of \(c.source) missing")
                continue
            }
            let w = c.abs.flatMap { values($0) }
            if c.abs != nil, w == nil {
                out.rejected.append("phyphox /get: buffers of \(c.source) missing")
                continue
            }
            let n = min(t.count, x.count, y.count, z.count, w?.count ?? Int.max)
            guard n > 0 else { continue }
            var last = thresholds[c.time]
            if probe {
                // Only the last value of each came: a time below the threshold means the experiment was
                // cleared and restarted; take it as the new threshold, else keep the old one.
                if let v = jsonNumber(t[n - 1]), let old = last, v < old { thresholds[c.time] = v }
                continue
            }
            for i in 0..<n {
                // `null` is a value that does not exist yet (a buffer still filling) or NaN: normal traffic.
                guard let time = jsonNumber(t[i]) else { out.empty += 1; continue }
                if let l = last, time <= l { continue }
                last = time
                guard let vx = jsonNumber(x[i]), let vy = jsonNumber(y[i]), let vz = jsonNumber(z[i]) else {
                    out.empty += 1
                    continue
                }
                any = true
                if let sensor = c.sensor {
                    let value = PhyphoxPlatform.value(sensor, vx, vy, vz, platform: platform)
                    out.readings.append(PhoneReading(sensor: sensor, phoneTime: time, value: value))
                    continue
                }
                let quantity: PhoneQuantity?
                switch c.source {
                case "pressure": quantity = vx > 0 ? .pressure(vx / 10) : nil
                case "gravity": quantity = .gravity(PhoneUnits.androidAcceleration(vx, vy, vz, gravity: platform.gravity))
                case "attitude":
                    let q = w.flatMap { jsonNumber($0[i]) }.map { Quaternion(w: $0, x: vx, y: vy, z: vz) }
                    quantity = q.flatMap { PhoneFrames.coreMotionAttitude(fromAndroid: $0) }.map { .attitude($0) }
                default: quantity = nil
                }
                if let quantity { out.extras.append(PhoneExtraReading(phoneTime: time, quantity: quantity)) } else { out.rejected.append("\(c.source): not a valid reading") }
            }
            if let last { thresholds[c.time] = last }
        }
        emptyPolls = any ? 0 : emptyPolls + 1
        return out
    }

    /// A time as the query shows it: the shortest text that reads back as the same double.
    static func number(_ v: Double) -> String { "\(v)" }

    static func escape(_ name: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }
}

/// The conversation with a phyphox phone, as a pure state machine: `/config` to learn the buffers,
/// `/meta` for the platform, `/control?cmd=start`, then `/get` every ``interval`` seconds. Each event
/// returns the action the caller performs; a failed request waits (exponential backoff, as
/// ``ReconnectMachine``) and starts again from `/config`, since the phone may have loaded another
/// experiment.
package struct PhyphoxMachine: Sendable {
    /// What the caller does next.
    package enum Action: Sendable, Hashable {
        /// Send `GET path` to the phone.
        case get(String)
        /// Call ``timerFired()`` after this many seconds.
        case wait(Double)
        /// Nothing.
        case none
    }

    /// The phases of the conversation.
    package enum Phase: Sendable, Hashable { case idle, config, meta, starting, polling, waiting, stopped }

    /// Seconds between polls.
    package var interval: Double
    /// The current phase.
    package private(set) var phase: Phase = .idle
    /// The poller, once `/config` answered.
    package private(set) var poller: PhyphoxPoller?
    /// Whether a poll has succeeded since the last (re)start: a failure then is a lost connection.
    package private(set) var wasPolling = false
    private var backoff: ReconnectMachine
    private var channels: [PhyphoxChannel] = []
    /// Set while waiting for the next poll rather than for a retry.
    private var pollWait = false

    /// Creates a machine polling every `interval` seconds, retrying after at most `maximumBackoff`.
    package init(interval: Double = 0.05, maximumBackoff: Double = 5) {
        self.interval = interval
        backoff = ReconnectMachine(initialDelay: min(0.25, maximumBackoff), maximumDelay: maximumBackoff)
    }

    /// Starts the conversation.
    package mutating func start() -> Action {
        guard phase == .idle else { return .none }
        _ = backoff.start()
        phase = .config
        return .get("/config")
    }

    /// Stops for good.
    package mutating func stop() {
        phase = .stopped
        _ = backoff.stop()
    }

    /// An answer came (HTTP status and body). Returns the next action and the readings it carried.
    package mutating func received(status: Int, body: [UInt8]) -> (Action, PhoneDecoded?) {
        switch phase {
        case .config:
            guard status == 200, let found = PhyphoxChannel.channels(config: body) else {
                return (failed(), nil)
            }
            channels = found.isEmpty ? PhyphoxChannel.stock : found
            phase = .meta
            return (.get("/meta"), nil)
        case .meta:
            let platform = status == 200 ? PhyphoxPlatform.from(meta: body) : .android
            poller = PhyphoxPoller(channels: channels, platform: platform)
            phase = .starting
            return (.get("/control?cmd=start"), nil)
        case .starting:
            guard status == 200 else { return (failed(), nil) }
            phase = .polling
            return (.get(poller?.path ?? "/get"), nil)
        case .polling:
            guard status == 200, poller != nil else { return (failed(), nil) }
            let decoded = poller!.decode(body)
            if !decoded.readings.isEmpty || decoded.rejected.isEmpty {
                wasPolling = true
                _ = backoff.connected()
                backoff.receivedData()
            }
            pollWait = true
            phase = .waiting
            return (.wait(interval), decoded)
        case .idle, .waiting, .stopped:
            return (.none, nil)
        }
    }

    /// The request failed (no connection, timeout, a closed socket).
    package mutating func failed() -> Action {
        guard phase != .stopped, phase != .idle, phase != .waiting else { return .none }
        _ = backoff.connected()
        guard case .wait(let delay) = backoff.disconnected() else { return .none }
        pollWait = false
        phase = .waiting
        return .wait(delay)
    }

    /// The wait is over.
    package mutating func timerFired() -> Action {
        guard phase == .waiting else { return .none }
        if pollWait, let poller {
            pollWait = false
            phase = .polling
            return .get(poller.path)
        }
        _ = backoff.timerFired()
        wasPolling = false
        phase = .config
        return .get("/config")
    }
}
