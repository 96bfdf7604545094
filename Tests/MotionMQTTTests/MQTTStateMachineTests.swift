import NIOCore
import NIOEmbedded
import NIOConcurrencyHelpers
import Testing
@testable import MotionMQTT

@Suite struct MQTTStateMachineTests {
    let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
    func at(_ s: Double) -> NIODeadline { t0 + .nanoseconds(Int64(s * 1e9)) }
    func sent(_ actions: [MQTTAction]) -> [MQTTPacket] { actions.compactMap { if case .send(let p) = $0 { return p } else { return nil } } }
    func message(_ i: Int) -> MQTTMessage { MQTTMessage(topic: "t", payload: [UInt8(i)], qos: .atLeastOnce) }

    @Test func connectSendsCredentialsWithCleanSessionOffAndQoS1WaitsForConnack() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c", keepAlive: 10, username: "u", password: [1]))
        #expect(sent(m.publish(message(1), now: at(0))).isEmpty)  // queued while down
        let up = sent(m.transportUp(now: at(0)))
        guard case .connect(let c) = up.first else { Issue.record("no CONNECT"); return }
        #expect(c.cleanSession == false && c.username == "u" && c.password == [1])
        let a = m.received(.connack(sessionPresent: false, returnCode: .accepted), now: at(0.1))
        #expect(a.first == .connected(sessionPresent: false))
        #expect(sent(a) == [.publish(message(1), packetID: 1, dup: false)])
        #expect(m.outstanding == 1)
        #expect(m.received(.puback(packetID: 1), now: at(0.2)) == [.acknowledged(packetID: 1)])
        #expect(m.outstanding == 0)
    }

    @Test func refusedCredentialsAreReportedAndClose() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c"))
        _ = m.transportUp(now: at(0))
        let a = m.received(.connack(sessionPresent: false, returnCode: .badUsernameOrPassword), now: at(0))
        #expect(a.first == .refused(.badUsernameOrPassword))
        guard case .close(let reason?) = a.last else { Issue.record("no close"); return }
        #expect(reason.contains("bad user name or password"))
    }

    @Test func unacknowledgedMessagesAreResentWithDUPInOrderAfterReconnect() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c"), maximumInFlight: 2)
        _ = m.transportUp(now: at(0))
        _ = m.received(.connack(sessionPresent: false, returnCode: .accepted), now: at(0))
        var ids: [UInt16] = []
        for i in 1...4 {
            for case .publish(_, let id?, false) in sent(m.publish(message(i), now: at(0))) { ids.append(id) }
        }
        #expect(ids == [1, 2])  // window of 2; 3 and 4 wait
        _ = m.received(.puback(packetID: 1), now: at(0.1))  // lets message 3 go as id 3
        m.transportDown()
        _ = m.transportUp(now: at(1))
        let resent = sent(m.received(.connack(sessionPresent: true, returnCode: .accepted), now: at(1)))
        #expect(resent == [.publish(message(2), packetID: 2, dup: true), .publish(message(3), packetID: 3, dup: true)])
        #expect(m.outstanding == 3)
    }

    @Test func subscriptionsAreRenewedWhenTheBrokerLostTheSession() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c"))
        #expect(m.subscribe([("fleet/#", .atLeastOnce)], now: at(0)).isEmpty)
        _ = m.transportUp(now: at(0))
        let first = sent(m.received(.connack(sessionPresent: false, returnCode: .accepted), now: at(0)))
        guard case .subscribe(let id, let filters)? = first.first else { Issue.record("no SUBSCRIBE"); return }
        #expect(filters.map(\.0) == ["fleet/#"])
        #expect(m.received(.suback(packetID: id, granted: [.atLeastOnce]), now: at(0)) == [.subscribed(["fleet/#": .atLeastOnce])])
        m.transportDown()
        _ = m.transportUp(now: at(1))
        #expect(sent(m.received(.connack(sessionPresent: true, returnCode: .accepted), now: at(1))).isEmpty)
        m.transportDown()
        _ = m.transportUp(now: at(2))
        #expect(sent(m.received(.connack(sessionPresent: false, returnCode: .accepted), now: at(2))).count == 1)
    }

    @Test func incomingQoS1IsDeliveredAndAcknowledged() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c"))
        _ = m.transportUp(now: at(0))
        _ = m.received(.connack(sessionPresent: false, returnCode: .accepted), now: at(0))
        let a = m.received(.publish(message(5), packetID: 77, dup: false), now: at(1))
        #expect(a == [.deliver(message(5)), .send(.puback(packetID: 77))])
    }

    @Test func keepaliveSendsPingreqWhenIdleAndClosesWithoutPingresp() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c", keepAlive: 5), responseTimeout: 2)
        _ = m.transportUp(now: at(0))
        _ = m.received(.connack(sessionPresent: false, returnCode: .accepted), now: at(0))
        #expect(m.tick(now: at(4.9)).isEmpty)
        #expect(sent(m.tick(now: at(5))) == [.pingreq])
        _ = m.received(.pingresp, now: at(5.5))
        #expect(m.tick(now: at(9.9)).isEmpty)
        #expect(sent(m.tick(now: at(10.5))) == [.pingreq])
        #expect(m.tick(now: at(12.4)).isEmpty)
        guard case .close(let reason?)? = m.tick(now: at(12.6)).first else { Issue.record("no close"); return }
        #expect(reason.contains("keepalive timeout"))
    }

    @Test func noConnackWithinTheTimeoutCloses() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c"), responseTimeout: 3)
        _ = m.transportUp(now: at(0))
        #expect(m.tick(now: at(2.9)).isEmpty)
        #expect(m.tick(now: at(3.1)).count == 1)
    }

    @Test func aFullQueueDropsTheOldestAndSaysSo() {
        var m = MQTTStateMachine(connect: MQTTConnect(clientID: "c"), maximumQueued: 2)
        _ = m.publish(message(1), now: at(0))
        _ = m.publish(message(2), now: at(0))
        #expect(m.publish(message(3), now: at(0)) == [.dropped([message(1)])])
        _ = m.transportUp(now: at(0))
        #expect(sent(m.received(.connack(sessionPresent: false, returnCode: .accepted), now: at(0))).count == 2)
    }

    @Test func backoffDoublesUpToItsCap() {
        let c = MQTTClientConfiguration(host: "h", connect: MQTTConnect(clientID: "c"), initialBackoff: 0.1, maximumBackoff: 1)
        #expect([1, 2, 3, 4, 5, 1000].map { c.backoff(afterFailures: $0) } == [0.1, 0.2, 0.4, 0.8, 1, 1])
    }
}

/// The in-memory twin: the real client and channel handler on `EmbeddedChannel`s with a virtual clock.
@Suite struct MQTTClientTwinTests {
    final class Harness: @unchecked Sendable {
        let loop = EmbeddedEventLoop()
        let channels = NIOLockedValueBox<[EmbeddedChannel]>([])
        let events = NIOLockedValueBox<[MQTTClientEvent]>([])
        let connectFails = NIOLockedValueBox(0)
        var client: MQTTClient!

        init(keepAlive: UInt16 = 5) {
            var config = MQTTClientConfiguration(host: "broker", connect: MQTTConnect(clientID: "twin", keepAlive: keepAlive),
                                                 initialBackoff: 1, maximumBackoff: 4, backoffJitter: 0, responseTimeout: 2)
            config.maximumInFlight = 8
            client = MQTTClient(configuration: config, eventLoop: loop, connector: { [channels, connectFails] loop, initializer in
                if connectFails.withLockedValue({ n in defer { n = max(0, n - 1) }; return n > 0 }) {
                    return loop.makeFailedFuture(MQTTProtocolError("connection refused"))
                }
                let channel = EmbeddedChannel(loop: loop as! EmbeddedEventLoop)
                channels.withLockedValue { $0.append(channel) }
                return initializer(channel).flatMap {
                    channel.connect(to: try! SocketAddress(ipAddress: "127.0.0.1", port: 1883))
                }.map { channel as any Channel }
            }, onEvent: { [events] e in events.withLockedValue { $0.append(e) } })
        }

        var channel: EmbeddedChannel? { channels.withLockedValue { $0.last } }

        func outbound() throws -> [MQTTPacket] {
            guard let channel else { return [] }
            var out: [MQTTPacket] = []
            while var b = try channel.readOutbound(as: ByteBuffer.self) {
                while let p = try MQTTPacketDecoder.decode(from: &b) { out.append(p) }
            }
            return out
        }

        func inbound(_ p: MQTTPacket) throws {
            var b = ByteBuffer()
            try p.encode(into: &b)
            try channel?.writeInbound(b)
        }

        func advance(_ s: Double) { loop.advanceTime(by: .nanoseconds(Int64(s * 1e9))) }
    }

    @Test func connectPublishAndPingOnAVirtualClock() throws {
        let h = Harness()
        h.client.start()
        h.loop.run()
        guard case .connect(let c)? = try h.outbound().first else { Issue.record("no CONNECT"); return }
        #expect(c.clientID == "twin" && !c.cleanSession)
        try h.inbound(.connack(sessionPresent: false, returnCode: .accepted))
        #expect(h.events.withLockedValue { $0 } == [.connected(sessionPresent: false)])
        h.client.publish(MQTTMessage(topic: "t", payload: [1], qos: .atLeastOnce))
        h.loop.run()
        #expect(try h.outbound() == [.publish(MQTTMessage(topic: "t", payload: [1], qos: .atLeastOnce), packetID: 1, dup: false)])
        h.advance(5.1)
        #expect(try h.outbound() == [.pingreq])
        try h.inbound(.pingresp)
        // Bytes of an incoming PUBLISH split across reads are reassembled and acknowledged.
        let bytes = try MQTTPacket.publish(MQTTMessage(topic: "in", payload: [9, 9], qos: .atLeastOnce), packetID: 42, dup: false).encoded()
        try h.channel?.writeInbound(ByteBuffer(bytes: bytes.prefix(3)))
        try h.channel?.writeInbound(ByteBuffer(bytes: bytes.dropFirst(3)))
        #expect(try h.outbound() == [.puback(packetID: 42)])
        #expect(h.events.withLockedValue { $0.last } == .message(MQTTMessage(topic: "in", payload: [9, 9], qos: .atLeastOnce)))
    }

    @Test func aLostConnectionIsRetriedWithBackoffAndResendsWithDUP() throws {
        let h = Harness()
        h.client.start()
        h.loop.run()
        _ = try h.outbound()
        try h.inbound(.connack(sessionPresent: false, returnCode: .accepted))
        h.client.publish(MQTTMessage(topic: "t", payload: [1], qos: .atLeastOnce))
        h.loop.run()
        _ = try h.outbound()
        h.connectFails.withLockedValue { $0 = 2 }
        try h.channel?.close().wait()
        h.loop.run()
        // 1 s, then 2 s (two failed attempts), then 4 s: the third attempt connects.
        let retries = h.events.withLockedValue { $0.compactMap { if case .disconnected(_, let r) = $0 { return r } else { return nil } } }
        #expect(retries == [1])
        h.advance(1)
        h.advance(2)
        #expect(h.events.withLockedValue { $0.compactMap { if case .disconnected(_, let r) = $0 { return r } else { return nil } } } == [1, 2, 4])
        #expect(h.channels.withLockedValue { $0.count } == 1)
        h.advance(4)
        #expect(h.channels.withLockedValue { $0.count } == 2)
        guard case .connect? = try h.outbound().first else { Issue.record("no reconnect"); return }
        try h.inbound(.connack(sessionPresent: true, returnCode: .accepted))
        #expect(try h.outbound() == [.publish(MQTTMessage(topic: "t", payload: [1], qos: .atLeastOnce), packetID: 1, dup: true)])
    }

    @Test func refusedCredentialsStopTheClient() throws {
        let h = Harness()
        h.client.start()
        h.loop.run()
        _ = try h.outbound()
        try h.inbound(.connack(sessionPresent: false, returnCode: .notAuthorized))
        h.advance(30)
        #expect(h.events.withLockedValue { $0 }.contains(.refused(.notAuthorized)))
        #expect(h.channels.withLockedValue { $0.count } == 1)
    }

    @Test func garbageFromTheBrokerClosesTheConnectionAndRetries() throws {
        let h = Harness()
        h.client.start()
        h.loop.run()
        _ = try h.outbound()
        try h.channel?.writeInbound(ByteBuffer(bytes: [0xF0, 0x00]))
        h.loop.run()
        let reasons = h.events.withLockedValue { $0.compactMap { if case .disconnected(let r, _) = $0 { return r } else { return nil } } }
        #expect(reasons.first?.contains("reserved packet type 15") == true)
    }
}
