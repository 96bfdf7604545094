import DequeModule
import NIOCore

/// What the protocol state machine asks its runner to do. The runner (``MQTTClient`` on a NIO
/// channel, or a test driving it by hand) performs the actions in order.
package enum MQTTAction: Sendable, Equatable {
    /// Write this packet to the transport.
    case send(MQTTPacket)
    /// An application message arrived (already acknowledged as its QoS requires).
    case deliver(MQTTMessage)
    /// CONNACK accepted; `sessionPresent` says whether the broker still had our session.
    case connected(sessionPresent: Bool)
    /// The broker accepted these subscriptions (granted QoS per filter; `nil` = refused).
    case subscribed([String: MQTTQoS?])
    /// A QoS 1 message was acknowledged by the broker (PUBACK): it is safe.
    case acknowledged(packetID: UInt16)
    /// The broker refused the connection; retrying will not help for codes 4 and 5.
    case refused(MQTTConnectReturnCode)
    /// Close the transport; `reason` says why when it is an error (keepalive timeout, protocol error).
    case close(reason: String?)
    /// Messages were dropped, oldest first: the outgoing queue was full, or QoS 0 while disconnected.
    case dropped([MQTTMessage])
}

/// MQTT 3.1.1 client protocol logic as a pure state machine: no I/O, no clock of its own.
///
/// Inputs are events (transport up or down, a packet received, a tick with the current time, an
/// application request); outputs are ``MQTTAction``s. The *session* part (packet identifiers, QoS 1
/// messages in flight, the queue, subscriptions) survives reconnects, which is what makes a
/// persistent session (clean session off) lose nothing at QoS 1: after a reconnect every unacknowledged
/// QoS 1 PUBLISH is sent again, in order, with DUP set (§4.4), before any new message.
///
/// ## Threading
/// A value type; the runner keeps it on one thread (``MQTTClient`` keeps it on its event loop).
package struct MQTTStateMachine: Sendable {
    /// The CONNECT sent on every connection.
    package var connect: MQTTConnect
    /// QoS 1 messages allowed in flight (sent, not yet PUBACKed); more wait in the queue. Default 64.
    package var maximumInFlight: Int
    /// Messages allowed to wait in the queue; beyond it the oldest are dropped (``MQTTAction/dropped(_:)``). Default 100,000.
    package var maximumQueued: Int
    /// Seconds to wait for CONNACK, and for PINGRESP after a PINGREQ, before closing. Default 10.
    package var responseTimeout: Double

    enum Connection: Sendable {
        case down
        case awaitingConnack(since: NIODeadline)
        case up(lastSent: NIODeadline, pingSent: NIODeadline?)
        case closing
    }

    private(set) var connection: Connection = .down
    private var nextID: UInt16 = 1
    /// Sent, unacknowledged QoS 1 messages, oldest first.
    private var inFlight: Deque<(UInt16, MQTTMessage)> = []
    private var queue: Deque<MQTTMessage> = []
    private var subscriptions: [(String, MQTTQoS)] = []
    private var subscriptionsAcked = false
    private var pendingSubscribe: UInt16?
    private var incomingQoS2: Set<UInt16> = []

    /// Creates a state machine for this CONNECT.
    package init(connect: MQTTConnect, maximumInFlight: Int = 64, maximumQueued: Int = 100_000, responseTimeout: Double = 10) {
        self.connect = connect
        self.maximumInFlight = max(1, min(maximumInFlight, 65_000))
        self.maximumQueued = max(1, maximumQueued)
        self.responseTimeout = responseTimeout.isFinite && responseTimeout > 0 ? responseTimeout : 10
    }

    /// Whether CONNACK has been accepted on the current transport.
    package var isConnected: Bool { if case .up = connection { return true } else { return false } }

    /// QoS 1 messages sent but not acknowledged, plus messages queued: 0 means everything is safe with the broker
    /// (QoS 0 ones written).
    package var outstanding: Int { inFlight.count + queue.count }

    /// The transport is connected: send CONNECT.
    package mutating func transportUp(now: NIODeadline) -> [MQTTAction] {
        connection = .awaitingConnack(since: now)
        pendingSubscribe = nil
        return [.send(.connect(connect))]
    }

    /// The transport closed (either side). The session is kept for the next connection.
    package mutating func transportDown() {
        connection = .down
        pendingSubscribe = nil
        incomingQoS2.removeAll()
    }

    /// Ask for a clean close: DISCONNECT then close. Queued messages stay queued.
    package mutating func disconnect() -> [MQTTAction] {
        guard isConnected else { connection = .closing; return [.close(reason: nil)] }
        connection = .closing
        return [.send(.disconnect), .close(reason: nil)]
    }

    /// Subscribes to `filters` now if connected, and again after any reconnect whose session is not present.
    package mutating func subscribe(_ filters: [(String, MQTTQoS)], now: NIODeadline) -> [MQTTAction] {
        subscriptions.append(contentsOf: filters)
        subscriptionsAcked = false
        guard isConnected else { return [] }
        return sendSubscribe(now: now)
    }

    private mutating func sendSubscribe(now: NIODeadline) -> [MQTTAction] {
        guard !subscriptions.isEmpty else { return [] }
        let id = takeID()
        pendingSubscribe = id
        touch(now)
        return [.send(.subscribe(packetID: id, filters: subscriptions))]
    }

    /// Publishes `message`: QoS 0 is written now if connected (dropped otherwise, as QoS 0 allows);
    /// QoS 1 gets a packet identifier and is sent when the in-flight window has room, kept until PUBACK.
    package mutating func publish(_ message: MQTTMessage, now: NIODeadline) -> [MQTTAction] {
        var actions: [MQTTAction] = []
        if message.qos == .atMostOnce {
            guard isConnected else { return [.dropped([message])] }
            touch(now)
            return [.send(.publish(message, packetID: nil, dup: false))]
        }
        var m = message
        if m.qos == .exactlyOnce { m.qos = .atLeastOnce }
        queue.append(m)
        if queue.count > maximumQueued {
            let excess = queue.count - maximumQueued
            actions.append(.dropped(Array(queue.prefix(excess))))
            queue.removeFirst(excess)
        }
        actions += drainQueue(now: now)
        return actions
    }

    private mutating func drainQueue(now: NIODeadline) -> [MQTTAction] {
        guard isConnected else { return [] }
        var actions: [MQTTAction] = []
        while inFlight.count < maximumInFlight, let m = queue.popFirst() {
            let id = takeID()
            inFlight.append((id, m))
            actions.append(.send(.publish(m, packetID: id, dup: false)))
        }
        if !actions.isEmpty { touch(now) }
        return actions
    }

    private mutating func takeID() -> UInt16 {
        // Skip identifiers still in use (65,535 is far above the in-flight window, so this ends).
        while true {
            let id = nextID
            nextID = nextID == UInt16.max ? 1 : nextID + 1
            if id != pendingSubscribe, !inFlight.contains(where: { $0.0 == id }) { return id }
        }
    }

    private mutating func touch(_ now: NIODeadline) {
        if case .up(_, let ping) = connection { connection = .up(lastSent: now, pingSent: ping) }
    }

    /// A packet arrived from the broker.
    package mutating func received(_ packet: MQTTPacket, now: NIODeadline) -> [MQTTAction] {
        switch (connection, packet) {
        case (.awaitingConnack, .connack(let sessionPresent, let code)):
            guard code == .accepted else {
                connection = .closing
                return [.refused(code), .close(reason: "the broker refused the connection: \(code.explanation)")]
            }
            connection = .up(lastSent: now, pingSent: nil)
            var actions: [MQTTAction] = [.connected(sessionPresent: sessionPresent)]
            if !sessionPresent || !subscriptionsAcked { actions += sendSubscribe(now: now) }
            // §4.4: resend unacknowledged PUBLISH packets, in order, with DUP, with their original identifiers.
            for (id, m) in inFlight { actions.append(.send(.publish(m, packetID: id, dup: true))) }
            actions += drainQueue(now: now)
            return actions
        case (.awaitingConnack, _):
            connection = .closing
            return [.close(reason: "the broker sent \(packet.name) before CONNACK")]
        case (.up, .publish(let m, let id, _)):
            switch m.qos {
            case .atMostOnce:
                return [.deliver(m)]
            case .atLeastOnce:
                guard let id else { return [.deliver(m)] }
                touch(now)
                return [.deliver(m), .send(.puback(packetID: id))]
            case .exactlyOnce:
                guard let id else { return [.deliver(m)] }
                touch(now)
                let fresh = incomingQoS2.insert(id).inserted
                return (fresh ? [.deliver(m)] : []) + [.send(.pubrec(packetID: id))]
            }
        case (.up, .pubrel(let id)):
            incomingQoS2.remove(id)
            touch(now)
            return [.send(.pubcomp(packetID: id))]
        case (.up, .puback(let id)):
            guard let i = inFlight.firstIndex(where: { $0.0 == id }) else { return [] }  // a late duplicate ack
            inFlight.remove(at: i)
            return [.acknowledged(packetID: id)] + drainQueue(now: now)
        case (.up, .suback(let id, let granted)):
            guard id == pendingSubscribe else { return [] }
            pendingSubscribe = nil
            subscriptionsAcked = true
            var result: [String: MQTTQoS?] = [:]
            for (i, (f, _)) in subscriptions.enumerated() { result[f] = i < granted.count ? granted[i] : nil }
            return [.subscribed(result)]
        case (.up(let lastSent, _), .pingresp):
            connection = .up(lastSent: lastSent, pingSent: nil)
            return []
        case (.up, .unsuback), (.up, .pubrec), (.up, .pubcomp):
            return []
        case (.down, _), (.closing, _):
            return []
        case (.up, _):
            connection = .closing
            return [.close(reason: "the broker sent an unexpected \(packet.name)")]
        }
    }

    /// Time passed: keepalive (PINGREQ after `keepAlive` seconds without sending) and timeouts
    /// (no CONNACK or PINGRESP within ``responseTimeout``). Call it at least every second.
    package mutating func tick(now: NIODeadline) -> [MQTTAction] {
        let timeout = TimeAmount.nanoseconds(Int64(responseTimeout * 1e9))  // safe: a configuration constant, not user input
        switch connection {
        case .awaitingConnack(let since) where now - since >= timeout:
            connection = .closing
            return [.close(reason: "no CONNACK within \(responseTimeout) s")]
        case .up(let lastSent, let ping):
            if let ping {
                if now - ping >= timeout {
                    connection = .closing
                    return [.close(reason: "keepalive timeout: no PINGRESP within \(responseTimeout) s")]
                }
                return []
            }
            guard connect.keepAlive > 0, now - lastSent >= .seconds(Int64(connect.keepAlive)) else { return [] }
            connection = .up(lastSent: now, pingSent: now)
            return [.send(.pingreq)]
        default:
            return []
        }
    }
}

extension MQTTPacket {
    /// The packet type's name, as the standard writes it (`PUBLISH`, `SUBACK`, …).
    package var name: String {
        switch self {
        case .connect: "CONNECT"
        case .connack: "CONNACK"
        case .publish: "PUBLISH"
        case .puback: "PUBACK"
        case .pubrec: "PUBREC"
        case .pubrel: "PUBREL"
        case .pubcomp: "PUBCOMP"
        case .subscribe: "SUBSCRIBE"
        case .suback: "SUBACK"
        case .unsubscribe: "UNSUBSCRIBE"
        case .unsuback: "UNSUBACK"
        case .pingreq: "PINGREQ"
        case .pingresp: "PINGRESP"
        case .disconnect: "DISCONNECT"
        }
    }
}
