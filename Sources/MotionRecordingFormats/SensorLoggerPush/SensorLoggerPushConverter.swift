import MotionFusion
import MotionSources

/// Which sign and unit convention Sensor Logger's acceleration uses (exports and push alike).
///
/// - ``standardised`` (what `coremotion publish` sends): Sensor Logger's "Standardise Units & Frames"
///   option and every Android phone: m/s², +9.81 on z lying face up.
/// - ``apple``: an iPhone with that option off: `accelerometer`/`gravity`/`totalacceleration` in m/s²
///   and `accelerometeruncalibrated` in g, all with Apple's sign (−1 g on z face up).
///
/// A push message does not say which platform sent it: unless the receiver is told (`convention=`),
/// ``SensorLoggerPushConverter`` infers it per device as the export reader does when the metadata is
/// silent (``inferred(rawMagnitudes:)``). The conversions themselves are in `SensorLoggerConversion.swift`.
package enum SensorLoggerConvention: String, Sendable, Hashable, CaseIterable {
    case standardised
    case apple
}

/// Converts between Core Motion samples and push entries, at the boundary, once.
///
/// Outgoing (``entry(for:epochOffsetNanoseconds:)``): acceleration (g, Core Motion's sign) becomes
/// `totalacceleration` = −9.80665 · a in m/s² (gravity included, Sensor Logger's standardised sign);
/// the raw gyroscope becomes `gyroscopeuncalibrated` (rad/s) and the raw magnetometer
/// `magnetometeruncalibrated` (µT): raw Core Motion sensors are uncalibrated, as those names say.
///
/// Incoming (``samples(from:)``): acceleration comes from the best the sender gives, in this order:
/// `totalacceleration`; `accelerometeruncalibrated`; `accelerometer` (user acceleration) + `gravity`
/// with the same `time`. Once a better kind has been seen from a device, worse kinds are ignored, so a
/// phone sending several is not read twice. Gyroscope: `gyroscopeuncalibrated`, else `gyroscope`;
/// magnetometer: `magnetometeruncalibrated`, else `magnetometer`. Other sensors are skipped.
/// Output is sorted by time; a reading not later than the last one delivered for its sensor is dropped
/// and counted in ``discardedLate``.
///
/// Convention: the one given, else inferred from the sender's readings, once: a `totalacceleration`
/// entry (Android only) means ``SensorLoggerConvention/standardised``; else the median magnitude of the
/// first `accelerometeruncalibrated` readings (``SensorLoggerConvention/inferred(rawMagnitudes:)``, the
/// export reader's rule); else an `accuracy` (sent by Android only) means standardised. Until then,
/// standardised. The values are converted by the functions the export reader uses, so the same
/// readings give the same samples on both paths.
///
/// Time: `time` (epoch ns) − `epochOffsetNanoseconds` gives seconds since boot on the receiver
/// (with an offset of 0, seconds since 1970 exactly as the export reader computes them).
package struct SensorLoggerPushConverter: Sendable {
    /// The sign convention of incoming acceleration as given; `nil` infers it from the readings.
    package var convention: SensorLoggerConvention?
    /// The convention in use: the given one, else the one inferred so far (standardised until then).
    package var effectiveConvention: SensorLoggerConvention { convention ?? inferred ?? .standardised }
    /// The convention inferred from the readings, `nil` until told.
    package private(set) var inferred: SensorLoggerConvention?
    private var rawMagnitudes: [Double] = []
    /// Epoch time of boot, in ns: `time − epochOffsetNanoseconds` is the time since boot.
    package var epochOffsetNanoseconds: Int64
    /// Readings dropped because they were not later than the last one of their sensor.
    package private(set) var discardedLate = 0

    private var accelerationLevel = 0
    private var gyroLevel = 0
    private var magLevel = 0
    private var pendingUser: [Int64: Vector3] = [:]
    private var pendingGravity: [Int64: Vector3] = [:]
    private var last: [SensorKind: Double] = [:]

    /// Creates a converter for one sender.
    package init(convention: SensorLoggerConvention? = nil, epochOffsetNanoseconds: Int64) {
        self.convention = convention
        self.epochOffsetNanoseconds = epochOffsetNanoseconds
    }

    /// The push entry for a Core Motion sample, or `nil` when a value is not finite or the time is out of range.
    package static func entry(for sample: RawSample, epochOffsetNanoseconds: Int64) -> SensorLoggerPushEntry? {
        let v = sample.value
        guard v.x.isFinite, v.y.isFinite, v.z.isFinite, sample.timestamp.isFinite, abs(sample.timestamp) < 9e9 else { return nil }
        let (time, overflow) = Int64((sample.timestamp * 1e9).rounded()).addingReportingOverflow(epochOffsetNanoseconds)  // safe: |timestamp| < 9e9 s, checked above
        guard !overflow else { return nil }
        switch sample.sensor {
        case .accelerometer:
            let k = -PhoneUnits.standardGravity
            return SensorLoggerPushEntry(name: "totalacceleration", time: time, values: ["x": v.x * k, "y": v.y * k, "z": v.z * k])
        case .gyro:
            return SensorLoggerPushEntry(name: "gyroscopeuncalibrated", time: time, values: ["x": v.x, "y": v.y, "z": v.z])
        case .magnetometer:
            return SensorLoggerPushEntry(name: "magnetometeruncalibrated", time: time, values: ["x": v.x, "y": v.y, "z": v.z])
        case .pressure:
            // Sensor Logger's barometer entry: pressure in hPa.
            return SensorLoggerPushEntry(name: "barometer", time: time, values: ["pressure": v.x * 10])
        }
    }

    /// The Core Motion samples a message carries (see the type's rules), sorted by time.
    package mutating func samples(from message: SensorLoggerPushMessage) -> [RawSample] {
        var out: [RawSample] = []
        out.reserveCapacity(message.payload.count)
        // Acceleration level present in this message decides which kinds count.
        for e in message.payload {
            switch e.name {
            case "totalacceleration": accelerationLevel = max(accelerationLevel, 3)
            case "accelerometeruncalibrated": accelerationLevel = max(accelerationLevel, 2)
            case "accelerometer", "gravity": accelerationLevel = max(accelerationLevel, 1)
            case "gyroscopeuncalibrated": gyroLevel = 2
            case "gyroscope": gyroLevel = max(gyroLevel, 1)
            case "magnetometeruncalibrated": magLevel = 2
            case "magnetometer": magLevel = max(magLevel, 1)
            default: break
            }
        }
        infer(from: message)
        let convention = effectiveConvention
        for e in message.payload {
            guard let x = e.values["x"], let y = e.values["y"], let z = e.values["z"] else { continue }
            let v = Vector3(x, y, z)
            switch e.name {
            case "totalacceleration" where accelerationLevel == 3:
                append(.accelerometer, e.time, convention.acceleration(metresPerSecondSquared: v), &out)
            case "accelerometeruncalibrated" where accelerationLevel == 2:
                append(.accelerometer, e.time, convention.rawAcceleration(v), &out)
            case "accelerometer" where accelerationLevel == 1:
                if let g = pendingGravity.removeValue(forKey: e.time) {
                    append(.accelerometer, e.time, convention.acceleration(metresPerSecondSquared: v + g), &out)
                } else { pendingUser[e.time] = v }
            case "gravity" where accelerationLevel == 1:
                if let u = pendingUser.removeValue(forKey: e.time) {
                    append(.accelerometer, e.time, convention.acceleration(metresPerSecondSquared: u + v), &out)
                } else { pendingGravity[e.time] = v }
            case "gyroscopeuncalibrated" where gyroLevel == 2, "gyroscope" where gyroLevel == 1:
                append(.gyro, e.time, v, &out)
            case "magnetometeruncalibrated" where magLevel == 2, "magnetometer" where magLevel == 1:
                append(.magnetometer, e.time, v, &out)
            default:
                break
            }
        }
        // An unmatched half waits for its partner in a later message, within bounds.
        if pendingUser.count > 512 { pendingUser.removeAll() }
        if pendingGravity.count > 512 { pendingGravity.removeAll() }
        out.sort { $0.timestamp < $1.timestamp }
        var kept: [RawSample] = []
        kept.reserveCapacity(out.count)
        for s in out {
            if let l = last[s.sensor], s.timestamp <= l { discardedLate += 1; continue }
            last[s.sensor] = s.timestamp
            kept.append(s)
        }
        return kept
    }

    /// Infers the convention from a message when none was given and none is inferred yet.
    private mutating func infer(from message: SensorLoggerPushMessage) {
        guard convention == nil, inferred == nil else { return }
        if message.payload.contains(where: { $0.name == "totalacceleration" }) {
            inferred = .standardised
            return
        }
        for e in message.payload where e.name == "accelerometeruncalibrated" && rawMagnitudes.count < SensorLoggerConvention.inferenceReadings {
            if let x = e.values["x"], let y = e.values["y"], let z = e.values["z"] { rawMagnitudes.append(Vector3(x, y, z).length) }
        }
        if let told = SensorLoggerConvention.inferred(rawMagnitudes: rawMagnitudes) {
            inferred = told
            rawMagnitudes = []
        } else if message.payload.contains(where: { $0.accuracy != nil }) {
            inferred = .standardised
        }
    }

    private func append(_ kind: SensorKind, _ time: Int64, _ v: Vector3, _ out: inout [RawSample]) {
        guard v.x.isFinite, v.y.isFinite, v.z.isFinite else { return }
        let (since, overflow) = time.subtractingReportingOverflow(epochOffsetNanoseconds)
        guard !overflow else { return }
        out.append(RawSample(sensor: kind, timestamp: epochSeconds(since), value: v))
    }
}

/// Puts one device's messages back in `messageId` order, drops duplicates (QoS 1 redeliveries, a
/// message seen twice) and waits a bounded number of messages for one that is missing.
///
/// Per session (a new `sessionId` starts afresh, releasing what the old one held): the first message
/// sets the expected id; a message with the expected id is released with every held one that follows
/// it; an early one is held; when more than ``window`` are held, the missing ones are given up
/// (counted in ``gaps``) and delivery continues. A message with an id already released is dropped and
/// counted in ``duplicates`` (or ``late`` when it was given up as a gap before), unless every reading
/// in it is newer than every reading released so far: then it is not one seen before but a sender that
/// began counting again in the same session (the app's streaming stopped and started again), and the
/// count starts afresh from it (``restarts``), releasing what was held.
package struct SensorLoggerPushReorderBuffer: Sendable {
    /// How many early messages may wait for a missing one (default 32).
    package var window: Int
    /// Duplicated messages dropped.
    package private(set) var duplicates = 0
    /// Messages that never came, skipped over.
    package private(set) var gaps = 0
    /// Messages that came after they had been skipped over (dropped).
    package private(set) var late = 0
    /// Times the sender's `messageId` began again within a session, with newer readings.
    package private(set) var restarts = 0

    private var session: String?
    private var expected: Int64?
    private var held: [Int64: SensorLoggerPushMessage] = [:]
    private var skipped: Set<Int64> = []
    /// The newest reading time (`time`, ns) of the messages released so far in this session.
    private var newestReleased: Int64?

    /// Creates a buffer holding at most `window` early messages.
    package init(window: Int = 32) { self.window = max(0, window) }

    /// Adds a message; returns those now ready, in order.
    package mutating func add(_ message: SensorLoggerPushMessage) -> [SensorLoggerPushMessage] {
        var ready: [SensorLoggerPushMessage] = []
        if message.sessionId != session {
            ready = flush()
            session = message.sessionId
            expected = message.messageId
            skipped.removeAll()
            newestReleased = nil
        }
        guard let exp = expected else { return ready }
        if message.messageId < exp, let newest = newestReleased, let oldest = message.payload.lazy.map(\.time).min(), oldest > newest {
            // Counting began again: what is held came before it.
            restarts += 1
            ready += flush()
            expected = message.messageId
            skipped.removeAll()
        } else if message.messageId < exp {
            if skipped.remove(message.messageId) != nil { late += 1 } else { duplicates += 1 }
            return ready
        }
        if held[message.messageId] != nil { duplicates += 1; return ready }
        held[message.messageId] = message
        release(into: &ready)
        while held.count > window, let next = held.keys.min() {
            var id = expected ?? next
            while id < next { skipped.insert(id); gaps += 1; id += 1 }
            if skipped.count > 4096 { skipped.removeAll() }
            expected = next
            release(into: &ready)
        }
        return ready
    }

    /// Releases every held message in order, giving up the missing ones (a sender gone silent).
    package mutating func flush() -> [SensorLoggerPushMessage] {
        var out: [SensorLoggerPushMessage] = []
        for id in held.keys.sorted() {
            if let m = held[id] {
                out.append(m)
                noteReleased(m)
            }
            if let e = expected, id > e { gaps += Int(clamping: id - e) }
            expected = id &+ 1
        }
        held.removeAll()
        return out
    }

    private mutating func noteReleased(_ message: SensorLoggerPushMessage) {
        if let t = message.payload.lazy.map(\.time).max() { newestReleased = max(newestReleased ?? t, t) }
    }

    private mutating func release(into ready: inout [SensorLoggerPushMessage]) {
        while let e = expected, let m = held.removeValue(forKey: e) {
            ready.append(m)
            noteReleased(m)
            expected = e &+ 1
        }
    }
}
