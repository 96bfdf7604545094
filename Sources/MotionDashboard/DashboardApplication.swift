import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The HTTP side of the dashboard: routes, assets and the WebSocket bridge to the hub.
enum DashboardApplication {
    /// The page's assets, embedded in the binary (no CDN, works offline).
    static let assets: [String: (contentType: String, body: ByteBuffer)] = [
        "/": ("text/html; charset=utf-8", ByteBuffer(bytes: PackageResources.index_html)),
        "/index.html": ("text/html; charset=utf-8", ByteBuffer(bytes: PackageResources.index_html)),
        "/dashboard.css": ("text/css; charset=utf-8", ByteBuffer(bytes: PackageResources.dashboard_css)),
        "/dashboard.js": ("text/javascript; charset=utf-8", ByteBuffer(bytes: PackageResources.dashboard_js)),
    ]

    /// The largest control message a page may send, in bytes.
    static let maximumInboundMessage = 16 * 1024

    /// Builds the router: the page, its assets, `/api/hello` and `/api/state`, and `/ws`.
    static func makeRouter(hub: DashboardHub) -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        for (path, asset) in assets {
            router.get(RouterPath(path)) { _, _ in
                var headers = HTTPFields()
                headers[.contentType] = asset.contentType
                headers[.cacheControl] = "no-cache"
                headers[.init("X-Content-Type-Options")!] = "nosniff"
                headers[.init("Content-Security-Policy")!] =
                    "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self'; script-src 'self'"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: asset.body))
            }
        }
        router.get("/api/hello") { _, _ in
            json(hub.helloMessage())
        }
        router.get("/api/state") { _, _ in
            json(hub.stateMessage())
        }
        router.get("/healthz") { _, _ in "ok\n" }
        router.ws("/ws") { request, _ in
            guard isSameOrigin(origin: request.headers[.origin], authority: request.head.authority) else {
                throw HTTPError(.forbidden, message: "WebSocket from another origin refused")
            }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            try await session(hub: hub, inbound: inbound, outbound: outbound)
        }
        return router
    }

    /// A page may only connect from a page this server served: a browser sends its page's origin
    /// (`http(s)://host:port`, or `null`), and it must name the same host and port as the request's
    /// authority. Tools that send no `Origin`, or a `ws(s)://` one as WebSocket libraries do, are let
    /// in: browsers never send those. Without the check, any web site open in the user's browser
    /// could watch and drive the sensors.
    static func isSameOrigin(origin: String?, authority host: String?) -> Bool {
        guard let origin else { return true }
        guard let url = URL(string: origin), let scheme = url.scheme?.lowercased() else { return false }
        if scheme == "ws" || scheme == "wss" { return true }
        guard scheme == "http" || scheme == "https", let host, let originHost = url.host else { return false }
        let port = url.port.map { ":\($0)" } ?? ""
        return (originHost + port).lowercased() == host.lowercased()
            || ("[" + originHost + "]" + port).lowercased() == host.lowercased()
    }

    private static func json(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Bridges one WebSocket to the hub: a writer task drains the page's bounded queue while this
    /// task reads control messages. When the hub drops the page, the socket closes with the reason.
    static func session(hub: DashboardHub, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let connection = hub.connect()
        defer { hub.disconnect(connection) }
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in connection.messages {
                    if connection.dropReason != nil { break }
                    switch message {
                    case .text(let buffer):
                        try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: buffer)))
                    }
                }
                if let reason = connection.dropReason {
                    try await outbound.close(.policyViolation, reason: reason)
                }
                throw CancellationError()  // stop the reader too
            }
            group.addTask {
                for try await message in inbound.messages(maxSize: maximumInboundMessage) {
                    switch message {
                    case .text(let text): hub.receive(text, from: connection)
                    case .binary: hub.receiveBinary(from: connection)
                    }
                }
            }
            // Whichever side ends first (page gone, or page dropped) ends the session.
            do {
                try await group.next()
            } catch is CancellationError {
            } catch {}
            group.cancelAll()
        }
    }
}
