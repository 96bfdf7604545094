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
