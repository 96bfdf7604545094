import NIOPosix
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
import Testing
@testable import MotionMQTT

/// MQTT over WebSocket at the frame level, on an `EmbeddedChannel`.
@Suite struct MQTTWebSocketTests {
    @Test func mqttBytesTravelInMaskedBinaryFramesBothWays() throws {
        let channel = EmbeddedChannel(handler: MQTTWebSocketFrameHandler())
        let connect = try MQTTPacket.connect(MQTTConnect(clientID: "ws")).encoded()
        try channel.writeOutbound(ByteBuffer(bytes: connect))
        let frame = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(frame.opcode == .binary && frame.fin && frame.maskKey != nil)
        // An outgoing frame holds its data unmasked: NIO's encoder applies the key on the wire.
        #expect(Array(buffer: frame.data) == connect)
        // From the broker: a CONNACK split over a binary frame and a continuation frame.
        let connack = try MQTTPacket.connack(sessionPresent: true, returnCode: .accepted).encoded()
        try channel.writeInbound(WebSocketFrame(fin: false, opcode: .binary, data: ByteBuffer(bytes: connack.prefix(2))))
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .continuation, data: ByteBuffer(bytes: connack.dropFirst(2))))
        var bytes: [UInt8] = []
        while let b = try channel.readInbound(as: ByteBuffer.self) { bytes += Array(buffer: b) }
        #expect(try MQTTPacketDecoder.parseAll(bytes) == [.connack(sessionPresent: true, returnCode: .accepted)])
        // A ping is answered with a masked pong carrying the same data.
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(bytes: [1, 2, 3])))
        let pong = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(pong.opcode == .pong && pong.maskKey != nil && Array(buffer: pong.data) == [1, 2, 3])
        // A text frame is not MQTT: the connection closes.
        _ = try? channel.writeInbound(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "hi")))
        #expect(!channel.isActive)
    }

    @Test func theUpgradeRequestAsksForTheMQTTSubprotocol() throws {
        let channel = EmbeddedChannel(handler: MQTTWebSocketRequestHandler.make(host: "broker", port: 8000, path: "mqtt"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8000)).wait()
        guard case .head(let head)? = try channel.readOutbound(as: HTTPClientRequestPart.self) else { Issue.record("no request head"); return }
        #expect(head.method == .GET && head.uri == "/mqtt")
        #expect(head.headers["Sec-WebSocket-Protocol"] == ["mqtt"] && head.headers["Host"] == ["broker:8000"])
    }

    @Test func aRefusedUpgradeIsAnErrorAndClosesTheConnection() throws {
        let channel = EmbeddedChannel(handler: MQTTWebSocketRequestHandler.make(host: "broker", port: 8000, path: "/mqtt"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8000)).wait()
        #expect(throws: MQTTProtocolError.self) {
            try channel.writeInbound(HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .notFound)))
        }
        #expect(!channel.isActive)
    }

    @Test func webSocketURLsSelectTheTransport() throws {
        let u = try MQTTURL(parsing: "mqtt+ws://phone.local/sensor-logger?ws-path=/ws")
        #expect(u.webSocket && !u.useTLS && u.port == 8000 && u.topic == "sensor-logger")
        #expect(u.clientConfiguration(clientID: "c").webSocketPath == "/ws")
        let s = try MQTTURL(parsing: "mqtt+wss://h/t")
        #expect(s.useTLS && s.port == 8884 && s.clientConfiguration(clientID: "c").webSocketPath == "/mqtt")
        #expect(try MQTTURL(parsing: "mqtt://h/t").clientConfiguration(clientID: "c").webSocketPath == nil)
    }
}

/// End to end against Mosquitto's own `protocol websockets` listener (libwebsockets), with paho-mqtt's
/// websocket transport as the independent second client.
@Suite(.serialized, .enabled(if: Mosquitto.available, Comment(rawValue: Mosquitto.skipMessage)))
struct MosquittoWebSocketListenerTests {
    @Test func ourWebSocketClientsAndPahosMeetOnMosquittosWebSocketListener() async throws {
        let broker = try await Mosquitto.started(webSocket: true)
        let wsPort = try #require(broker.wsPort)
        let source = try MQTTSensorSource(url: MQTTURL(parsing: "mqtt+ws://127.0.0.1:\(wsPort)/ws/+"), log: { _ in })
        let collector = MosquittoTests.Collector()
        source.startDevices { collector.handle($0) }
        await collector.wait(until: { collector.subscribed.withLockedValue { $0 } }, timeout: 60)
        #expect(collector.subscribed.withLockedValue { $0 })
        let config = try MQTTURL(parsing: "mqtt+ws://127.0.0.1:\(wsPort)/ws/robot").clientConfiguration(clientID: "ws-pub")
        let pub = MQTTMotionPublisher(configuration: config, topic: "ws/robot", deviceID: "robot", batchPeriod: 0.05)
        for s in MosquittoTests.samples(200, start: ProcessInfo.processInfo.systemUptime - 5) { pub.add(s) }
        #expect(await pub.finish(timeout: 60))
        var pahoSent = false
        if MosquittoTests.pahoAvailable, let python = Run.python {
            // An Android phone (m/s², gravity +9.81 on z face up) over paho's websocket transport, QoS 1.
            let script = FileManager.default.temporaryDirectory.appendingPathComponent("ocm-paho-ws-\(UUID().uuidString).py").path
            try """
                import json, sys, time
                import paho.mqtt.client as mqtt
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="paho-ws-phone", transport="websockets")
                c.ws_set_options(path="/mqtt")
                c.connect("127.0.0.1", int(sys.argv[1]))
                c.loop_start()
                for mid in range(1, 6):
                    now = time.time_ns() - 2_000_000_000
                    payload = [{"name": "totalacceleration", "time": now + (mid * 10 + k) * 10_000_000,
                                "values": {"x": 0.0, "y": 0.0, "z": 9.80665}, "accuracy": 3} for k in range(10)]
                    msg = {"messageId": mid, "sessionId": "s-ws", "deviceId": "android-ws", "payload": payload}
                    c.publish("ws/android", json.dumps(msg), qos=1).wait_for_publish()
                c.disconnect()
                c.loop_stop()
                """.write(toFile: script, atomically: true, encoding: .utf8)
            let r = try await Run.commandAsync(python, [script, String(wsPort)])
            #expect(r.status == 0, "\(r.stderr)")
            pahoSent = r.status == 0
        }
        await collector.wait(until: { collector.total >= 200 + (pahoSent ? 50 : 0) }, timeout: 60)
        await source.stopDevices()
        let got = collector.samples.withLockedValue { $0 }
        #expect(got["robot"]?.count == 200 && got["robot"]?.allSatisfy { abs($0.value.z + 1) < 1e-9 } == true)
        if pahoSent {
            #expect(got["android-ws"]?.count == 50 && got["android-ws"]?.allSatisfy { abs($0.value.z + 1) < 1e-9 } == true)
        }
    }
}
