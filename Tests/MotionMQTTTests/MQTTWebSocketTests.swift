import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
import Testing
@testable import MotionMQTT

/// MQTT over WebSocket at the frame level, on an `EmbeddedChannel` (no broker here offers a
/// websockets listener: Debian's Mosquitto 2.0.11 refuses to open one in this container).
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
        let channel = EmbeddedChannel(handler: MQTTWebSocketRequestHandler(host: "broker", port: 8000, path: "mqtt"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8000)).wait()
        guard case .head(let head)? = try channel.readOutbound(as: HTTPClientRequestPart.self) else { Issue.record("no request head"); return }
        #expect(head.method == .GET && head.uri == "/mqtt")
        #expect(head.headers["Sec-WebSocket-Protocol"] == ["mqtt"] && head.headers["Host"] == ["broker:8000"])
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
