import NIOCore

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
