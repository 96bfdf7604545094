import Foundation

/// One live message of Sensor Logger's HTTP/MQTT push (its PUSHING.md), the schema phones and
/// `coremotion publish` share: `{messageId, sessionId, deviceId, userId?, payload:[{name, time, values, accuracy?}]}`.
///
/// Values are kept as the message carries them (m/s², rad/s, µT, epoch nanoseconds, the sender's
/// signs); ``SensorLoggerPushConverter`` turns them into Core Motion samples.
package struct SensorLoggerPushMessage: Sendable, Hashable {
    /// Counts up by one per message within a session (messages may arrive out of order).
    package var messageId: Int64
    /// The recording session (a UUID on phones), new at every Start.
    package var sessionId: String
    /// The device, stable across sessions.
    package var deviceId: String
    /// An optional user label.
    package var userId: String?
    /// The readings, in the order sent.
    package var payload: [SensorLoggerPushEntry]

    /// Creates a message.
    package init(messageId: Int64, sessionId: String, deviceId: String, userId: String? = nil, payload: [SensorLoggerPushEntry]) {
        self.messageId = messageId
        self.sessionId = sessionId
        self.deviceId = deviceId
        self.userId = userId
        self.payload = payload
    }
}

/// One reading of a push message.
package struct SensorLoggerPushEntry: Sendable, Hashable {
    /// The sensor name, lower case: `accelerometer` (user acceleration, no gravity), `gravity`,
    /// `totalacceleration`, `accelerometeruncalibrated`, `gyroscope`, `gyroscopeuncalibrated`,
    /// `magnetometer`, `magnetometeruncalibrated`, `orientation`, `barometer`, …
    package var name: String
    /// UTC epoch time in nanoseconds (an integer; above 2^53, kept exact).
    package var time: Int64
    /// The numeric values by key (`x`, `y`, `z`, `qw`, `pressure`, …). Non-numeric values are left out.
    package var values: [String: Double]
    /// Android's accuracy 0–3, when sent.
    package var accuracy: Int?

    /// Creates an entry.
    package init(name: String, time: Int64, values: [String: Double], accuracy: Int? = nil) {
        self.name = name
        self.time = time
        self.values = values
        self.accuracy = accuracy
    }
}

/// Encoding and decoding of push messages: Sensor Logger's JSON, and this project's compact binary form.
package enum SensorLoggerPush {
    /// The first four bytes of a binary message, `OCM1`.
    package static let binaryMagic: [UInt8] = Array("OCM1".utf8)

    /// The message as Sensor Logger's JSON: integers written exactly, doubles in their shortest
    /// round-tripping form, keys in a fixed order.
    /// - Throws: ``RecordingError`` when a value is NaN or infinite (JSON cannot carry it).
    package static func encodeJSON(_ message: SensorLoggerPushMessage) throws(RecordingError) -> [UInt8] {
        var out = "{\"messageId\":\(message.messageId),\"sessionId\":"
        appendJSONString(message.sessionId, to: &out)
        out += ",\"deviceId\":"
        appendJSONString(message.deviceId, to: &out)
        if let user = message.userId {
            out += ",\"userId\":"
            appendJSONString(user, to: &out)
        }
        out += ",\"payload\":["
        for (i, entry) in message.payload.enumerated() {
            if i > 0 { out += "," }
            out += "{\"name\":"
            appendJSONString(entry.name, to: &out)
            out += ",\"time\":\(entry.time),\"values\":{"
            for (j, key) in entry.values.keys.sorted(by: valueKeyOrder).enumerated() {
                let v = entry.values[key] ?? 0
                guard v.isFinite else { throw RecordingError("\(entry.name).\(key) is \(v); a push message carries finite numbers only") }
                if j > 0 { out += "," }
                appendJSONString(key, to: &out)
                out += ":"
                out += v.description
            }
            out += "}"
            if let a = entry.accuracy { out += ",\"accuracy\":\(a)" }
            out += "}"
        }
        out += "]}"
        return Array(out.utf8)
    }

    private static func valueKeyOrder(_ a: String, _ b: String) -> Bool {
        let order = ["x": 0, "y": 1, "z": 2]
        switch (order[a], order[b]) {
        case let (x?, y?): return x < y
        case (_?, nil): return true
        case (nil, _?): return false
        default: return a < b
        }
    }

    private static func appendJSONString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Decodes a message, JSON or binary (told apart by ``binaryMagic``).
    /// - Throws: ``RecordingError`` saying what is malformed; never traps on any bytes.
    package static func decode(_ bytes: [UInt8]) throws(RecordingError) -> SensorLoggerPushMessage {
        if bytes.starts(with: binaryMagic) { return try decodeBinary(bytes) }
        return try decodeJSON(bytes)
    }

    /// Decodes Sensor Logger's JSON. `time` may be a JSON integer above 2^53 (kept exact), a decimal
    /// or exponent number (rounded to the nanosecond), or a string of digits; `messageId` likewise.
    /// Entries whose `values` hold no number (annotation, camera) keep empty `values`.
    package static func decodeJSON(_ bytes: [UInt8]) throws(RecordingError) -> SensorLoggerPushMessage {
        let raw: PushJSON
        do {
            raw = try JSONDecoder().decode(PushJSON.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw RecordingError("not a Sensor Logger push message: \(Self.describe(error))")
        } catch {
            throw RecordingError("not a Sensor Logger push message: \(error)")
        }
        guard let messageId = raw.messageId.int64 else { throw RecordingError("messageId is not an integer") }
        var payload: [SensorLoggerPushEntry] = []
        payload.reserveCapacity(raw.payload.count)
        for (i, e) in raw.payload.enumerated() {
            guard let time = e.time.int64 else { throw RecordingError("payload[\(i)] (\(e.name)): time is not an epoch time in nanoseconds") }
            var values: [String: Double] = [:]
            for (k, v) in e.values ?? [:] { if let d = v.double { values[k] = d } }
            payload.append(SensorLoggerPushEntry(name: e.name.lowercased(), time: time, values: values, accuracy: e.accuracy.flatMap { $0.int64.flatMap { Int(exactly: $0) } }))
        }
        return SensorLoggerPushMessage(messageId: messageId, sessionId: raw.sessionId.string ?? "", deviceId: raw.deviceId.string ?? "",
                                       userId: raw.userId?.string, payload: payload)
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let ctx): return "missing '\(key.stringValue)'\(path(ctx))"
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx): return "wrong type\(path(ctx))"
        case .dataCorrupted(let ctx): return "malformed JSON\(path(ctx))"
        @unknown default: return "malformed"
        }
    }

    private static func path(_ ctx: DecodingError.Context) -> String {
        let p = ctx.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return p.isEmpty ? "" : " at \(p)"
    }
}

/// A JSON scalar read leniently: a number kept as text so integers above 2^53 stay exact.
struct PushScalar: Decodable, Sendable {
    var text: String?
    var number: Double?
    var isString = false

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { return }
        if let i = try? c.decode(Int64.self) {
            text = String(i)
            number = Double(i)
        } else if let d = try? c.decode(Double.self) {
            number = d
            text = nil
        } else if let s = try? c.decode(String.self) {
            text = s
            isString = true
            number = Double(s)
        } else if let b = try? c.decode(Bool.self) {
            number = b ? 1 : 0
        }
        // Objects and arrays are ignored (nested values a motion reader does not use).
    }

    var string: String? { text ?? number.map { $0.description } }

    /// An exact Int64: from integer text, or a finite double in range rounded to the nearest integer.
    var int64: Int64? {
        if let t = text, let i = Int64(t.trimmingCharacters(in: .whitespaces)) { return i }
        guard let d = number, d.isFinite, d >= -9.2e18, d <= 9.2e18 else { return nil }
        return Int64(d.rounded())
    }

    var double: Double? {
        guard let n = number, n.isFinite else { return nil }
        return n
    }
}

struct PushJSON: Decodable {
    struct Entry: Decodable {
        var name: String
        var time: PushScalar
        var values: [String: PushScalar]?
        var accuracy: PushScalar?
    }
    var messageId: PushScalar
    var sessionId: PushScalar
    var deviceId: PushScalar
    var userId: PushScalar?
    var payload: [Entry]
}
