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
/// check sits in the pipeline, right after the HTTP decoder: a foreign upgrade request loses its
/// upgrade headers there and reaches the router as a plain request, which it refuses with 403.
/// Other requests pass untouched.
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

/// Turns a WebSocket upgrade request whose `Origin` is not the server's own into a plain request:
/// without its `Upgrade` and `Connection: upgrade` headers it is not upgraded, and the router's
/// `/ws` route answers it with 403 like any other foreign request to `/ws`.
final class ForeignOriginRefuser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if Self.isForeignUpgrade(head) {
            head.headers.remove(name: "upgrade")
            head.headers.remove(name: "connection")
            context.fireChannelRead(wrapInboundOut(.head(head)))
            return
        }
        context.fireChannelRead(data)
        if Self.isUpgrade(head) {
            // An upgrade this handler lets through ends HTTP on the connection: once it completes,
            // the HTTP decoder is removed and hands on raw bytes, which are not this handler's
            // input. Leave the pipeline now, while the request's remaining parts are still HTTP.
            context.pipeline.syncOperations.removeHandler(context: context).whenFailure { _ in }
        }
    }

    /// A request asking for a protocol upgrade (`Upgrade: …`).
    static func isUpgrade(_ head: HTTPRequestHead) -> Bool {
        !head.headers["upgrade"].isEmpty
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
