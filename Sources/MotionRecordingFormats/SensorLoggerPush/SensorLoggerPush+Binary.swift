/// The compact binary push payload (`coremotion publish --binary`), about 17 bytes per sample
/// instead of about 110 in JSON. All integers little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `OCM1` |
/// | 4 | 8 | messageId, Int64 |
/// | 12 | 1 + n | sessionId: length n (UInt8) then UTF-8 |
/// | … | 1 + m | deviceId: length m (UInt8) then UTF-8 |
/// | … | 8 | base time, Int64 epoch ns |
/// | … | 4 | sample count c, UInt32 |
/// | … | 17 · c | per sample: sensor (UInt8: 1 `totalacceleration` m/s², 2 `gyroscopeuncalibrated` rad/s, 3 `magnetometeruncalibrated` µT), time offset from the base in µs (UInt32), x, y, z (Float32) |
///
/// The values and signs are those of the JSON form (Sensor Logger's "Standardise Units & Frames").
extension SensorLoggerPush {
    /// Binary sensor codes and the entry names they stand for.
    package static let binarySensorNames: [UInt8: String] = [1: "totalacceleration", 2: "gyroscopeuncalibrated", 3: "magnetometeruncalibrated"]

    /// Encodes a message whose entries are all x/y/z readings of the sensors in ``binarySensorNames``.
    /// - Throws: ``RecordingError`` for another sensor, a non-finite value, an id over 255 bytes, or a
    ///   sample more than 4,294 s after the first one.
    package static func encodeBinary(_ message: SensorLoggerPushMessage) throws(RecordingError) -> [UInt8] {
        var out = binaryMagic
        out.reserveCapacity(40 + message.payload.count * 17)
        append(UInt64(bitPattern: message.messageId), 8, &out)
        for id in [message.sessionId, message.deviceId] {
            let b = Array(id.utf8)
            guard b.count <= 255 else { throw RecordingError("id '\(id.prefix(20))…' is over 255 bytes") }
            out.append(UInt8(b.count))
            out += b
        }
        let base = message.payload.map(\.time).min() ?? 0
        append(UInt64(bitPattern: base), 8, &out)
        guard message.payload.count <= Int(UInt32.max) else { throw RecordingError("too many samples") }
        append(UInt64(message.payload.count), 4, &out)
        let codes = Dictionary(uniqueKeysWithValues: binarySensorNames.map { ($1, $0) })
        for e in message.payload {
            guard let code = codes[e.name] else { throw RecordingError("'\(e.name)' has no binary code") }
            let (delta, overflow) = e.time.subtractingReportingOverflow(base)
            guard !overflow, delta / 1000 <= Int64(UInt32.max) else { throw RecordingError("a binary message spans at most 4,294 s") }
            out.append(code)
            append(UInt64(delta / 1000), 4, &out)  // safe: 0 ≤ delta / 1000 ≤ UInt32.max, checked above
            for k in ["x", "y", "z"] {
                let v = e.values[k] ?? 0
                guard v.isFinite else { throw RecordingError("\(e.name).\(k) is \(v); a push message carries finite numbers only") }
                append(UInt64(Float(v).bitPattern), 4, &out)
            }
        }
        return out
    }

    private static func append(_ v: UInt64, _ bytes: Int, _ out: inout [UInt8]) {
        for i in 0..<bytes { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }  // safe: i is a loop index
    }

    /// Decodes the binary form; never traps (truncated input, unknown codes and bad UTF-8 throw).
    package static func decodeBinary(_ bytes: [UInt8]) throws(RecordingError) -> SensorLoggerPushMessage {
        var r = BinaryReader(bytes: bytes, offset: 4)
        guard bytes.starts(with: binaryMagic) else { throw RecordingError("binary push message without the OCM1 magic") }
        let messageId = Int64(bitPattern: try r.int(8))
        var ids: [String] = []
        for _ in 0..<2 {
            let n = Int(try r.int(1))
            guard let s = String(validating: try r.bytes(n), as: UTF8.self) else { throw RecordingError("binary push message: an id is not UTF-8") }
            ids.append(s)
        }
        let base = Int64(bitPattern: try r.int(8))
        let count = Int(try r.int(4))
        guard count <= (bytes.count - r.offset) / 17 else { throw RecordingError("binary push message announces \(count) samples but holds \((bytes.count - r.offset) / 17)") }
        var payload: [SensorLoggerPushEntry] = []
        payload.reserveCapacity(count)
        for i in 0..<count {
            let code = UInt8(try r.int(1))
            guard let name = binarySensorNames[code] else { throw RecordingError("binary push message: sample \(i) has unknown sensor code \(code)") }
            let offset = Int64(try r.int(4)) * 1000
            let (time, overflow) = base.addingReportingOverflow(offset)
            guard !overflow else { throw RecordingError("binary push message: sample \(i) time overflows") }
            var values: [String: Double] = [:]
            for k in ["x", "y", "z"] { values[k] = Double(Float(bitPattern: UInt32(try r.int(4)))) }
            payload.append(SensorLoggerPushEntry(name: name, time: time, values: values))
        }
        guard r.offset == bytes.count else { throw RecordingError("binary push message: \(bytes.count - r.offset) bytes after the last sample") }
        return SensorLoggerPushMessage(messageId: messageId, sessionId: ids[0], deviceId: ids[1], payload: payload)
    }
}

private struct BinaryReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func bytes(_ n: Int) throws(RecordingError) -> [UInt8] {
        guard n >= 0, n <= bytes.count - offset else { throw RecordingError("binary push message truncated at byte \(offset)") }
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    mutating func int(_ n: Int) throws(RecordingError) -> UInt64 {
        let b = try bytes(n)
        var v: UInt64 = 0
        for (i, byte) in b.enumerated() { v |= UInt64(byte) << (8 * UInt64(i)) }
        return v
    }
}
