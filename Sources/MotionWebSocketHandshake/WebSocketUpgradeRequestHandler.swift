import NIOCore
import NIOHTTP1

/// The client side of a WebSocket opening handshake: sends the HTTP/1.1 upgrade request to `path`
/// when the connection becomes active, and treats any response that reaches it as a refusal.
///
/// It sits behind the HTTP client handlers that SwiftNIO's `NIOWebSocketClientUpgrader` configures,
/// which add the `Upgrade`, `Connection` and `Sec-WebSocket-Key` headers and consume a `101` answer;
/// a response that gets through to this handler is therefore not an upgrade. It is passed on as the
/// error `refused` makes of its head, and the connection is closed. The owner removes this handler once
/// the upgrade completes. Used by the MQTT client (MQTT over WebSocket) and the SensorServer phone source.
///
/// ## Threading
/// A channel handler: its methods run on the channel's event loop. Its state is immutable, so it may
/// be made on any thread.
package final class WebSocketUpgradeRequestHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    package typealias InboundIn = HTTPClientResponsePart
    package typealias OutboundOut = HTTPClientRequestPart

    /// The server's host and port, as sent in the `Host` header (`host:port`).
    package let host: String
    package let port: Int
    /// The request target, such as `/mqtt`.
    package let path: String
    /// Headers added to the request after `Host` (such as `Sec-WebSocket-Protocol`).
    package let extraHeaders: [(name: String, value: String)]
    /// Makes the error passed on when the server answers without upgrading.
    package let refused: @Sendable (HTTPResponseHead) -> any Error
    /// Whether an error reaching this handler (such as the upgrader's own) also closes the connection.
    package let closesOnError: Bool

    package init(host: String, port: Int, path: String, extraHeaders: [(name: String, value: String)] = [],
                 closesOnError: Bool = false, refused: @escaping @Sendable (HTTPResponseHead) -> any Error) {
        self.host = host
        self.port = port
        self.path = path
        self.extraHeaders = extraHeaders
        self.closesOnError = closesOnError
        self.refused = refused
    }

    package func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        for header in extraHeaders { headers.add(name: header.name, value: header.value) }
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let response) = unwrapInboundIn(data) {
            context.fireErrorCaught(refused(response))
        }
        context.close(promise: nil)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.fireErrorCaught(error)
        if closesOnError { context.close(promise: nil) }
    }
}
