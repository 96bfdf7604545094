import NIOCore

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
