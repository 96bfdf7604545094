import NIOCore

/// Quality of service of an MQTT 3.1.1 message (section 4.3 of the OASIS standard).
package enum MQTTQoS: UInt8, Sendable, Hashable, Comparable, CaseIterable {
    /// At most once: no acknowledgement, lost if the connection drops.
    case atMostOnce = 0
    /// At least once: kept until the peer's PUBACK, sent again with DUP after a reconnect.
    case atLeastOnce = 1
    /// Exactly once (PUBREC/PUBREL/PUBCOMP). Decoded, acknowledged as a receiver, never sent by this client.
    case exactlyOnce = 2

    package static func < (a: MQTTQoS, b: MQTTQoS) -> Bool { a.rawValue < b.rawValue }
}

/// The CONNACK return code (MQTT 3.1.1 §3.2.2.3).
package enum MQTTConnectReturnCode: UInt8, Sendable, Hashable {
    case accepted = 0
    case unacceptableProtocolVersion = 1
    case identifierRejected = 2
    case serverUnavailable = 3
    case badUsernameOrPassword = 4
    case notAuthorized = 5

    /// One line for a person: what the broker said.
    package var explanation: String {
        switch self {
        case .accepted: return "connection accepted"
        case .unacceptableProtocolVersion: return "the broker does not speak MQTT 3.1.1"
        case .identifierRejected: return "the broker rejected the client identifier"
        case .serverUnavailable: return "the broker is unavailable"
        case .badUsernameOrPassword: return "bad user name or password (CONNACK return code 4): check the user name and password"
        case .notAuthorized: return "not authorized (CONNACK return code 5): check the user name and password"
        }
    }
}

/// An application message: a topic, a payload and how it is delivered.
package struct MQTTMessage: Sendable, Hashable {
    /// The topic name (UTF-8, no wildcards), at most 65,535 bytes.
    package var topic: String
    /// The payload bytes, at most 268,435,455 minus the header.
    package var payload: [UInt8]
    /// The quality of service.
    package var qos: MQTTQoS
    /// Whether the broker keeps it as the topic's retained message.
    package var retain: Bool

    /// Creates a message.
    package init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// The CONNECT packet's fields (MQTT 3.1.1 §3.1).
package struct MQTTConnect: Sendable, Hashable {
    /// The client identifier; stable across reconnects so that a persistent session is found again.
    package var clientID: String
    /// `false` (the default here) keeps the session (subscriptions, QoS 1 messages) across connections.
    package var cleanSession: Bool
    /// Seconds; the broker closes the connection after 1.5 times this without a packet. 0 disables.
    package var keepAlive: UInt16
    /// The user name, if any.
    package var username: String?
    /// The password bytes, if any (only sent with a user name).
    package var password: [UInt8]?
    /// The will message, if any.
    package var will: MQTTMessage?

    /// Creates the fields of a CONNECT.
    package init(clientID: String, cleanSession: Bool = false, keepAlive: UInt16 = 30, username: String? = nil, password: [UInt8]? = nil, will: MQTTMessage? = nil) {
        self.clientID = clientID
        self.cleanSession = cleanSession
        self.keepAlive = keepAlive
        self.username = username
        self.password = password
        self.will = will
    }
}

/// One MQTT 3.1.1 control packet.
package enum MQTTPacket: Sendable, Hashable {
    case connect(MQTTConnect)
    case connack(sessionPresent: Bool, returnCode: MQTTConnectReturnCode)
    /// A PUBLISH; `packetID` is present exactly when `message.qos` is above 0.
    case publish(MQTTMessage, packetID: UInt16?, dup: Bool)
    case puback(packetID: UInt16)
    case pubrec(packetID: UInt16)
    case pubrel(packetID: UInt16)
    case pubcomp(packetID: UInt16)
    /// Topic filters with the maximum QoS asked for each.
    case subscribe(packetID: UInt16, filters: [(String, MQTTQoS)])
    /// One return code per filter: the QoS granted, or `nil` for failure (0x80).
    case suback(packetID: UInt16, granted: [MQTTQoS?])
    case unsubscribe(packetID: UInt16, filters: [String])
    case unsuback(packetID: UInt16)
    case pingreq
    case pingresp
    case disconnect

    package static func == (a: MQTTPacket, b: MQTTPacket) -> Bool {
        switch (a, b) {
        case let (.subscribe(i, f), .subscribe(j, g)):
            return i == j && f.map(\.0) == g.map(\.0) && f.map(\.1) == g.map(\.1)
        case let (.connect(x), .connect(y)): return x == y
        case let (.connack(s, r), .connack(t, q)): return s == t && r == q
        case let (.publish(m, i, d), .publish(n, j, e)): return m == n && i == j && d == e
        case let (.puback(i), .puback(j)), let (.pubrec(i), .pubrec(j)), let (.pubrel(i), .pubrel(j)),
             let (.pubcomp(i), .pubcomp(j)), let (.unsuback(i), .unsuback(j)):
            return i == j
        case let (.suback(i, g), .suback(j, h)): return i == j && g == h
        case let (.unsubscribe(i, f), .unsubscribe(j, g)): return i == j && f == g
        case (.pingreq, .pingreq), (.pingresp, .pingresp), (.disconnect, .disconnect): return true
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(String(describing: self))
    }
}

/// Why bytes are not a valid MQTT 3.1.1 packet. Decoding never traps: every malformed input ends here.
package struct MQTTProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in one line.
    package var message: String
    /// Creates an error.
    package init(_ message: String) { self.message = message }
    package var description: String { "MQTT protocol error: \(message)" }
}

/// The largest remaining length MQTT can encode (4 length bytes), 268,435,455 bytes.
package let mqttMaximumRemainingLength = 268_435_455

// MARK: - Encoding

extension MQTTPacket {
    /// Appends the packet's bytes to `buffer`.
    /// - Throws: ``MQTTProtocolError`` when a field does not fit (a string over 65,535 bytes, a
    ///   packet over ``mqttMaximumRemainingLength``), leaving `buffer` unchanged.
    package func encode(into buffer: inout ByteBuffer) throws(MQTTProtocolError) {
        var body = ByteBuffer()
        let header: UInt8
        switch self {
        case .connect(let c):
            header = 0x10
            try body.writeMQTTString("MQTT")
            body.writeInteger(UInt8(4))
            var flags: UInt8 = 0
            if c.cleanSession { flags |= 0x02 }
            if let will = c.will {
                flags |= 0x04 | (will.qos.rawValue << 3)
                if will.retain { flags |= 0x20 }
            }
            if c.username != nil {
                flags |= 0x80
                if c.password != nil { flags |= 0x40 }
            }
            body.writeInteger(flags)
            body.writeInteger(c.keepAlive)
            try body.writeMQTTString(c.clientID)
            if let will = c.will {
                try body.writeMQTTString(will.topic)
                try body.writeMQTTBytes(will.payload)
            }
            if let user = c.username {
                try body.writeMQTTString(user)
                if let pass = c.password { try body.writeMQTTBytes(pass) }
            }
        case .connack(let sessionPresent, let code):
            header = 0x20
            body.writeInteger(UInt8(sessionPresent ? 1 : 0))
            body.writeInteger(code.rawValue)
        case .publish(let m, let packetID, let dup):
            var h: UInt8 = 0x30 | (m.qos.rawValue << 1)
            if dup { h |= 0x08 }
            if m.retain { h |= 0x01 }
            header = h
            try body.writeMQTTString(m.topic)
            if m.qos != .atMostOnce {
                guard let packetID, packetID != 0 else { throw MQTTProtocolError("a QoS \(m.qos.rawValue) PUBLISH needs a non-zero packet identifier") }
                body.writeInteger(packetID)
            }
            body.writeBytes(m.payload)
        case .puback(let id): header = 0x40; body.writeInteger(id)
        case .pubrec(let id): header = 0x50; body.writeInteger(id)
        case .pubrel(let id): header = 0x62; body.writeInteger(id)
        case .pubcomp(let id): header = 0x70; body.writeInteger(id)
        case .subscribe(let id, let filters):
            header = 0x82
            body.writeInteger(id)
            guard !filters.isEmpty else { throw MQTTProtocolError("SUBSCRIBE needs at least one topic filter") }
            for (f, q) in filters {
                try body.writeMQTTString(f)
                body.writeInteger(q.rawValue)
            }
        case .suback(let id, let granted):
            header = 0x90
            body.writeInteger(id)
            for g in granted { body.writeInteger(g?.rawValue ?? 0x80) }
        case .unsubscribe(let id, let filters):
            header = 0xA2
            body.writeInteger(id)
            for f in filters { try body.writeMQTTString(f) }
        case .unsuback(let id): header = 0xB0; body.writeInteger(id)
        case .pingreq: header = 0xC0
        case .pingresp: header = 0xD0
        case .disconnect: header = 0xE0
        }
        var length = body.readableBytes
        guard length <= mqttMaximumRemainingLength else {
            throw MQTTProtocolError("packet of \(length) bytes is over MQTT's limit of \(mqttMaximumRemainingLength)")
        }
        buffer.writeInteger(header)
        repeat {
            var byte = UInt8(length & 0x7F)
            length >>= 7
            if length > 0 { byte |= 0x80 }
            buffer.writeInteger(byte)
        } while length > 0
        buffer.writeBuffer(&body)
    }

    /// The packet's bytes.
    package func encoded() throws(MQTTProtocolError) -> [UInt8] {
        var b = ByteBuffer()
        try encode(into: &b)
        return b.readBytes(length: b.readableBytes) ?? []
    }
}

extension ByteBuffer {
    mutating func writeMQTTString(_ s: String) throws(MQTTProtocolError) {
        let bytes = Array(s.utf8)
        guard bytes.count <= 65_535 else { throw MQTTProtocolError("string of \(bytes.count) bytes is over MQTT's limit of 65,535") }
        guard !bytes.contains(0) else { throw MQTTProtocolError("MQTT strings may not contain U+0000") }
        writeInteger(UInt16(bytes.count))
        writeBytes(bytes)
    }

    mutating func writeMQTTBytes(_ bytes: [UInt8]) throws(MQTTProtocolError) {
        guard bytes.count <= 65_535 else { throw MQTTProtocolError("field of \(bytes.count) bytes is over MQTT's limit of 65,535") }
        writeInteger(UInt16(bytes.count))
        writeBytes(bytes)
    }
}

// MARK: - Decoding

/// Decodes MQTT 3.1.1 packets from bytes as they arrive; never traps on any input.
///
/// Feed bytes with ``append(_:)`` (or decode straight from a `ByteBuffer` with
/// ``decode(from:maximumPacketSize:)``), then call ``next()`` until it returns `nil` (more bytes needed).
/// Malformed input (a reserved packet type, wrong fixed-header flags, a remaining length over four
/// bytes or over the limit, a string that is not UTF-8 or holds U+0000, a field running past its packet)
/// throws ``MQTTProtocolError``; the connection must then be closed (§4.8). This is the entry point for
/// fuzzing: ``parseAll(_:maximumPacketSize:)`` takes raw bytes.
package struct MQTTPacketDecoder: Sendable {
    /// The largest packet accepted, header included; larger ones throw before their body is buffered.
    package var maximumPacketSize: Int
    private var buffer = ByteBuffer()

    /// Creates a decoder. `maximumPacketSize` defaults to 1 MiB and is capped by MQTT's own limit.
    package init(maximumPacketSize: Int = 1 << 20) {
        self.maximumPacketSize = max(2, min(maximumPacketSize, mqttMaximumRemainingLength + 5))
    }

    /// Adds received bytes.
    package mutating func append(_ bytes: some Sequence<UInt8>) { buffer.writeBytes(Array(bytes)) }

    /// Adds received bytes.
    package mutating func append(_ bytes: ByteBuffer) { var b = bytes; buffer.writeBuffer(&b) }

    /// The next complete packet, or `nil` when more bytes are needed.
    package mutating func next() throws(MQTTProtocolError) -> MQTTPacket? {
        let packet = try Self.decode(from: &buffer, maximumPacketSize: maximumPacketSize)
        if buffer.readerIndex > 1 << 16 { buffer.discardReadBytes() }
        return packet
    }

    /// Every complete packet in `bytes`, in order; throws at the first malformed one, and when bytes are
    /// left that do not make a whole packet (`truncated`). For fuzzing and tests.
    package static func parseAll(_ bytes: [UInt8], maximumPacketSize: Int = 1 << 20) throws(MQTTProtocolError) -> [MQTTPacket] {
        var d = MQTTPacketDecoder(maximumPacketSize: maximumPacketSize)
        d.append(bytes)
        var out: [MQTTPacket] = []
        while let p = try d.next() { out.append(p) }
        if d.buffer.readableBytes > 0 { throw MQTTProtocolError("truncated packet: \(d.buffer.readableBytes) bytes left over") }
        return out
    }

    /// Decodes one packet from the front of `buffer`, moving its reader index past it; returns `nil`
    /// (and leaves the buffer as it was) when the packet is not complete yet.
    package static func decode(from buffer: inout ByteBuffer, maximumPacketSize: Int = 1 << 20) throws(MQTTProtocolError) -> MQTTPacket? {
        let start = buffer.readerIndex
        guard let first: UInt8 = buffer.getInteger(at: start) else { return nil }
        var length = 0
        var multiplier = 1
        var offset = 1
        while true {
            guard let byte: UInt8 = buffer.getInteger(at: start + offset) else { return nil }
            offset += 1
            length += Int(byte & 0x7F) * multiplier
            if byte & 0x80 == 0 { break }
            guard offset < 5 else { throw MQTTProtocolError("remaining length longer than four bytes") }
            multiplier *= 128
        }
        guard length + offset <= maximumPacketSize else {
            throw MQTTProtocolError("packet of \(length + offset) bytes is over the limit of \(maximumPacketSize)")
        }
        guard buffer.readableBytes >= offset + length, var body = buffer.getSlice(at: start + offset, length: length) else { return nil }
        let packet = try decodeBody(type: first >> 4, flags: first & 0x0F, body: &body)
        guard body.readableBytes == 0 else {
            throw MQTTProtocolError("\(body.readableBytes) unexpected bytes at the end of a packet of type \(first >> 4)")
        }
        buffer.moveReaderIndex(forwardBy: offset + length)
        return packet
    }

    private static func decodeBody(type: UInt8, flags: UInt8, body: inout ByteBuffer) throws(MQTTProtocolError) -> MQTTPacket {
        func expectFlags(_ f: UInt8, _ name: String) throws(MQTTProtocolError) {
            guard flags == f else { throw MQTTProtocolError("\(name) with reserved flags \(flags) (expected \(f))") }
        }
        func id(_ name: String) throws(MQTTProtocolError) -> UInt16 {
            guard let v: UInt16 = body.readInteger() else { throw MQTTProtocolError("\(name) too short for its packet identifier") }
            return v
        }
        switch type {
        case 1:
            try expectFlags(0, "CONNECT")
            let name = try body.readMQTTString("CONNECT protocol name")
            guard let level: UInt8 = body.readInteger(), let cf: UInt8 = body.readInteger(), let keepAlive: UInt16 = body.readInteger() else {
                throw MQTTProtocolError("CONNECT variable header truncated")
            }
            guard name == "MQTT", level == 4 else { throw MQTTProtocolError("CONNECT for protocol \(name) level \(level); only MQTT 3.1.1 (level 4) is spoken") }
            guard cf & 0x01 == 0 else { throw MQTTProtocolError("CONNECT with the reserved flag set") }
            let clientID = try body.readMQTTString("client identifier")
            var will: MQTTMessage?
            if cf & 0x04 != 0 {
                guard let q = MQTTQoS(rawValue: (cf >> 3) & 0x03) else { throw MQTTProtocolError("CONNECT with will QoS 3") }
                let topic = try body.readMQTTString("will topic")
                let payload = try body.readMQTTBytes("will message")
                will = MQTTMessage(topic: topic, payload: payload, qos: q, retain: cf & 0x20 != 0)
            } else if cf & 0x38 != 0 {
                throw MQTTProtocolError("CONNECT with will QoS or retain but no will")
            }
            var user: String?
            var pass: [UInt8]?
            if cf & 0x80 != 0 { user = try body.readMQTTString("user name") }
            if cf & 0x40 != 0 {
                guard user != nil else { throw MQTTProtocolError("CONNECT with a password but no user name") }
                pass = try body.readMQTTBytes("password")
            }
            return .connect(MQTTConnect(clientID: clientID, cleanSession: cf & 0x02 != 0, keepAlive: keepAlive, username: user, password: pass, will: will))
        case 2:
            try expectFlags(0, "CONNACK")
            guard let ack: UInt8 = body.readInteger(), let code: UInt8 = body.readInteger() else { throw MQTTProtocolError("CONNACK truncated") }
            guard ack & 0xFE == 0 else { throw MQTTProtocolError("CONNACK with reserved acknowledge flags \(ack)") }
            guard let rc = MQTTConnectReturnCode(rawValue: code) else { throw MQTTProtocolError("CONNACK with unknown return code \(code)") }
            return .connack(sessionPresent: ack & 1 == 1, returnCode: rc)
        case 3:
            guard let qos = MQTTQoS(rawValue: (flags >> 1) & 0x03) else { throw MQTTProtocolError("PUBLISH with QoS 3") }
            let dup = flags & 0x08 != 0
            if qos == .atMostOnce && dup { throw MQTTProtocolError("QoS 0 PUBLISH with DUP set") }
            let topic = try body.readMQTTString("topic name")
            guard !topic.contains("+"), !topic.contains("#") else { throw MQTTProtocolError("PUBLISH topic '\(topic)' holds a wildcard") }
            var packetID: UInt16?
            if qos != .atMostOnce {
                let v = try id("PUBLISH")
                guard v != 0 else { throw MQTTProtocolError("PUBLISH with packet identifier 0") }
                packetID = v
            }
            let payload = body.readBytes(length: body.readableBytes) ?? []
            return .publish(MQTTMessage(topic: topic, payload: payload, qos: qos, retain: flags & 1 != 0), packetID: packetID, dup: dup)
        case 4: try expectFlags(0, "PUBACK"); return .puback(packetID: try id("PUBACK"))
        case 5: try expectFlags(0, "PUBREC"); return .pubrec(packetID: try id("PUBREC"))
        case 6: try expectFlags(2, "PUBREL"); return .pubrel(packetID: try id("PUBREL"))
        case 7: try expectFlags(0, "PUBCOMP"); return .pubcomp(packetID: try id("PUBCOMP"))
        case 8:
            try expectFlags(2, "SUBSCRIBE")
            let pid = try id("SUBSCRIBE")
            var filters: [(String, MQTTQoS)] = []
            while body.readableBytes > 0 {
                let f = try body.readMQTTString("topic filter")
                guard let q: UInt8 = body.readInteger(), let qos = MQTTQoS(rawValue: q) else { throw MQTTProtocolError("SUBSCRIBE with a bad requested QoS") }
                filters.append((f, qos))
            }
            guard !filters.isEmpty else { throw MQTTProtocolError("SUBSCRIBE without a topic filter") }
            return .subscribe(packetID: pid, filters: filters)
        case 9:
            try expectFlags(0, "SUBACK")
            let pid = try id("SUBACK")
            var granted: [MQTTQoS?] = []
            while let code: UInt8 = body.readInteger() {
                if code == 0x80 { granted.append(nil); continue }
                guard let q = MQTTQoS(rawValue: code) else { throw MQTTProtocolError("SUBACK with return code \(code)") }
                granted.append(q)
            }
            return .suback(packetID: pid, granted: granted)
        case 10:
            try expectFlags(2, "UNSUBSCRIBE")
            let pid = try id("UNSUBSCRIBE")
            var filters: [String] = []
            while body.readableBytes > 0 { filters.append(try body.readMQTTString("topic filter")) }
            guard !filters.isEmpty else { throw MQTTProtocolError("UNSUBSCRIBE without a topic filter") }
            return .unsubscribe(packetID: pid, filters: filters)
        case 11: try expectFlags(0, "UNSUBACK"); return .unsuback(packetID: try id("UNSUBACK"))
        case 12: try expectFlags(0, "PINGREQ"); return .pingreq
        case 13: try expectFlags(0, "PINGRESP"); return .pingresp
        case 14: try expectFlags(0, "DISCONNECT"); return .disconnect
        default: throw MQTTProtocolError("reserved packet type \(type)")
        }
    }
}

extension ByteBuffer {
    mutating func readMQTTBytes(_ what: String) throws(MQTTProtocolError) -> [UInt8] {
        guard let n: UInt16 = readInteger() else { throw MQTTProtocolError("\(what): length truncated") }
        guard let bytes = readBytes(length: Int(n)) else { throw MQTTProtocolError("\(what): \(n) bytes announced, \(readableBytes) present") }
        return bytes
    }

    mutating func readMQTTString(_ what: String) throws(MQTTProtocolError) -> String {
        let bytes = try readMQTTBytes(what)
        guard let s = String(validating: bytes, as: UTF8.self) else { throw MQTTProtocolError("\(what) is not valid UTF-8") }
        guard !bytes.contains(0) else { throw MQTTProtocolError("\(what) contains U+0000") }
        return s
    }
}

/// Topic filter matching (MQTT 3.1.1 §4.7): `+` matches one level, `#` (last) any number of levels
/// including none; filters starting with a wildcard do not match topics starting with `$`.
package func mqttTopic(_ topic: String, matches filter: String) -> Bool {
    let t = topic.split(separator: "/", omittingEmptySubsequences: false)
    let f = filter.split(separator: "/", omittingEmptySubsequences: false)
    if topic.hasPrefix("$"), let first = f.first, first == "+" || first == "#" { return false }
    var i = 0
    while i < f.count {
        if f[i] == "#" { return i == f.count - 1 }
        guard i < t.count else { return false }
        if f[i] != "+" && f[i] != t[i] { return false }
        i += 1
    }
    return i == t.count
}
