import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The dashboard's HTTP/1 + WebSocket channel with the `Origin` rule of `PROTOCOL.md` applied
/// before the WebSocket upgrade: a WebSocket request from a foreign origin gets **403 Forbidden**.
///
/// Hummingbird answers every refused upgrade with 400, whatever the router's handler threw, so the
/// check sits in the pipeline, right after the HTTP decoder: it sees each request head, answers a
/// foreign upgrade itself and closes the connection. Other requests pass untouched.
struct OriginCheckedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(ForeignOriginRefuser(), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Answers a WebSocket upgrade request whose `Origin` is not the server's own with 403 and closes.
final class ForeignOriginRefuser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Set once a request has been refused: its body and anything after it are dropped.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        let part = unwrapInboundIn(data)
        if case .head(let head) = part, Self.isForeignUpgrade(head) {
            refused = true
            let body = "{\"error\":{\"message\":\"WebSocket from another origin refused\"}}"
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            headers.add(name: "Content-Length", value: String(body.utf8.count))
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .forbidden, headers: headers))),
                          promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
            let closed = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: closed)
            let channel = context.channel
            closed.futureResult.whenComplete { _ in channel.close(promise: nil) }
            return
        }
        context.fireChannelRead(data)
    }

    /// An upgrade to WebSocket (`Upgrade: websocket`) from an origin other than the request's host.
    static func isForeignUpgrade(_ head: HTTPRequestHead) -> Bool {
        guard head.headers["upgrade"].contains(where: { $0.lowercased() == "websocket" }) else { return false }
        let origins = head.headers["origin"]
        guard !origins.isEmpty else { return false }
        let host = head.headers["host"].first
        return origins.contains { !DashboardApplication.isSameOrigin(origin: $0, authority: host) }
    }
}
