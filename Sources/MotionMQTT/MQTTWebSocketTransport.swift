import MotionWebSocketHandshake
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

extension MQTTClient {
    /// MQTT over WebSocket (the transport Sensor Logger offers, Mosquitto's `protocol websockets`):
    /// an HTTP/1.1 upgrade to `path` asking for the `mqtt` subprotocol, then every MQTT packet in binary
    /// frames (masked, as a client must). TLS first when `useTLS` (wss).
    package static func webSocketConnector(_ configuration: MQTTClientConfiguration, path: String) -> MQTTConnector {
        let host = configuration.host
        let port = configuration.port
        let tls = configuration.useTLS
        let maxFrame = max(1 << 14, min(configuration.maximumPacketSize, 1 << 26))
        return { loop, initializer in
            ClientBootstrap(group: loop)
                .connectTimeout(.seconds(5))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: maxFrame) { channel, _ in
                        // The request handler must go: the frame decoder is added after it.
                        channel.pipeline.removeHandler(name: MQTTWebSocketRequestHandler.name).flatMap {
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(MQTTWebSocketFrameHandler())
                            }
                        }.flatMap { initializer(channel) }
                    }
                    return channel.eventLoop.makeCompletedFuture {
                        if tls {
                            let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                            try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: host))
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers(
                            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                        )
                        try channel.pipeline.syncOperations.addHandler(MQTTWebSocketRequestHandler.make(host: host, port: port, path: path),
                                                                       name: MQTTWebSocketRequestHandler.name)
                    }
                }
                .connect(host: host, port: port)
        }
    }
}

/// MQTT's WebSocket upgrade request: asks for the `mqtt` subprotocol; a reply that is not an upgrade,
/// or any error before it, closes the connection (so the client retries).
enum MQTTWebSocketRequestHandler {
    static let name = "mqtt-websocket-request"

    /// The request handler for `path` (a leading `/` is added when missing) on `host:port`.
    static func make(host: String, port: Int, path: String) -> WebSocketUpgradeRequestHandler {
        WebSocketUpgradeRequestHandler(
            host: host, port: port, path: path.hasPrefix("/") ? path : "/" + path,
            extraHeaders: [("Sec-WebSocket-Protocol", "mqtt")], closesOnError: true
        ) { response in
            MQTTProtocolError("WebSocket upgrade refused: HTTP \(response.status.code) \(response.status.reasonPhrase)")
        }
    }
}

/// Carries MQTT bytes in WebSocket binary frames: unwraps incoming frames, answers pings, wraps writes.
final class MQTTWebSocketFrameHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary, .continuation:
            context.fireChannelRead(wrapInboundOut(frame.unmaskedData))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        case .pong:
            break
        default:
            context.fireErrorCaught(MQTTProtocolError("WebSocket frame with opcode \(frame.opcode): MQTT travels in binary frames"))
            context.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: unwrapOutboundIn(data))
        context.write(wrapOutboundOut(frame), promise: promise)
    }
}
