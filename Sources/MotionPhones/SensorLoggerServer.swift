import Foundation
import MotionRecordingFormats
import MotionSources
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The HTTP side of Sensor Logger's push, as a pure state machine: request parts in, actions out.
///
/// `POST` (any path) with a JSON body up to ``maximumBody`` bytes is accepted (the body is handed over
/// with ``Action/deliver(_:)``, then answered); `GET` and `HEAD` get a short text saying what listens
/// here; other methods 405. With a token set, a request must carry `Authorization: Bearer TOKEN`,
/// `X-Token: TOKEN` or `token=TOKEN` in its query, else it gets 401. A body over the cap gets 413 and
/// the connection closes, so a flood costs at most ``maximumBody`` bytes per connection.
package struct SensorLoggerRequestMachine: Sendable {
    /// What the channel handler does.
    package enum Action: Sendable, Hashable {
        /// Decode this body; then call ``SensorLoggerRequestMachine/decoded(ok:)``.
        case deliver([UInt8])
        /// Answer with this status and text; close the connection after it when `close`.
        case respond(status: Int, text: String, close: Bool)
        /// Nothing yet.
        case none
    }

    private enum State: Sendable {
        case idle
        case receiving([UInt8])
        case answering(status: Int, text: String)
        case closed
    }

    /// The largest body accepted, in bytes.
    package var maximumBody: Int
    /// The shared token, or `nil` for none.
    package var token: String?
    private var state = State.idle
    private var keepAlive = true

    /// Creates a machine.
    package init(maximumBody: Int, token: String?) {
        self.maximumBody = maximumBody
        self.token = token
    }

    /// A request head arrived.
    package mutating func head(method: String, uri: String, headers: [(String, String)], keepAlive: Bool) -> Action {
        guard case .idle = state else { state = .closed; return .respond(status: 400, text: "request while another is in progress", close: true) }
        self.keepAlive = keepAlive
        if let token {
            let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first.map { $0.split(separator: "&") } ?? []
            let given = headers.first { $0.0.lowercased() == "authorization" }.map { $0.1 }
            let ok = given == "Bearer \(token)"
                || headers.contains { $0.0.lowercased() == "x-token" && $0.1 == token }
                || query.contains { $0 == "token=\(token)" }
            if !ok { state = .answering(status: 401, text: "missing or wrong token"); return .none }
        }
        switch method {
        case "POST", "PUT":
            if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }), length > maximumBody {
                state = .closed
                return .respond(status: 413, text: "body over \(maximumBody) bytes", close: true)
            }
            state = .receiving([])
        case "GET", "HEAD":
            state = .answering(status: 200, text: "OpenCoreMotion: Sensor Logger HTTP push receiver; POST the app's JSON here")
        default:
            state = .answering(status: 405, text: "POST the app's JSON here")
        }
        return .none
    }

    /// Body bytes arrived.
    package mutating func body(_ bytes: some Collection<UInt8>) -> Action {
        guard case .receiving(var buffer) = state else { return .none }
        if buffer.count + bytes.count > maximumBody {
            state = .closed
            return .respond(status: 413, text: "body over \(maximumBody) bytes", close: true)
        }
        state = .idle  // let the array be uniquely referenced while appending
        buffer.append(contentsOf: bytes)
        state = .receiving(buffer)
        return .none
    }

    /// The request ended.
    package mutating func end() -> Action {
        switch state {
        case .receiving(let buffer):
            state = .answering(status: 200, text: "")
            return .deliver(buffer)
        case .answering(let status, let text):
            state = .idle
            return .respond(status: status, text: text, close: !keepAlive)
        case .idle, .closed:
            return .none
        }
    }

    /// The delivered body decoded (`ok`) or not: the answer to send.
    package mutating func decoded(ok: Bool) -> Action {
        state = .idle
        return ok ? .respond(status: 200, text: "", close: !keepAlive) : .respond(status: 400, text: "not a Sensor Logger push message", close: !keepAlive)
    }
}

/// Listens for Sensor Logger's HTTP push on the spec's HOST:PORT.
///
/// ## Threading
/// Its connections' handlers call it from their event loops; what it keeps across connections is
/// behind a lock, released before it calls the source.
final class SensorLoggerServer: PhoneTransport {
    private weak let source: PhoneSource?
    private let spec: PhoneSpec
    private let eventLoop: any EventLoop
    let maximumBody: Int
    let token: String?
    /// The convention given by `convention=`; `nil` infers it per phone.
    let convention: SensorLoggerConvention?
    /// Connections open at most at once; more are closed at once.
    static let maximumConnections = 16
    /// What the connections share.
    private struct Shared {
        var decoders: [String: SensorLoggerDecoder] = [:]
        var device: String?
        var openConnections = 0
        var ignoredDevices: Set<String> = []
    }
    private let shared = NIOLockedValueBox(Shared())
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)
    private let pinned: String?

    init(source: PhoneSource) throws(SourceError) {
        self.source = source
        spec = source.spec
        eventLoop = source.eventLoop
        maximumBody = Int(try spec.number("max-body", default: 4 * 1024 * 1024, in: 1024...256 * 1024 * 1024))
        token = spec.parameters["token"].flatMap { $0.isEmpty ? nil : $0 }
        if let c = spec.parameters["convention"] {
            guard let v = SensorLoggerConvention(rawValue: c) else {
                throw SourceError(.unavailable, "\(spec): convention=\(c); expected standardised (Android, or iOS with Standardise Units & Frames on) or apple")
            }
            convention = v
        } else {
            convention = nil
        }
        pinned = spec.parameters["device"]
    }

    var localAddress: (host: String, port: Int)? {
        channel.withLockedValue { $0?.localAddress }.flatMap { a in a.ipAddress.map { ($0, a.port ?? 0) } }
    }

    func start() throws(SourceError) {
        let bootstrap = ServerBootstrap(group: eventLoop)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(ChannelOptions.backlog, value: 32)
            .childChannelInitializer { [weak self] channel in
                guard let self else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(SensorLoggerHTTPHandler(server: self))
                }
            }
        let bound: any Channel
        do {
            bound = try bootstrap.bind(host: spec.host, port: spec.port).wait()
        } catch {
            throw bindError(spec, error)
        }
        channel.withLockedValue { $0 = bound }
        let port = bound.localAddress?.port ?? spec.port
        let urls = reachableAddresses(forListeningHost: spec.host).map { "http://\($0):\(port)/" }
        source?.log("Sensor Logger: listening on \(spec.host):\(port). In the app: Settings → Data Streaming → enable HTTP Push, push URL \(urls.joined(separator: " or "))\(token == nil ? "" : " (add the header Authorization: Bearer <token>, or ?token=<token> to the URL)")")
    }

    func stop() {
        channel.withLockedValue { c in
            c?.close(promise: nil)
            c = nil
        }
    }

    // MARK: On the event loop

    func opened(_ peer: String) -> Bool {
        let admitted = shared.withLockedValue { s -> Bool in
            guard s.openConnections < Self.maximumConnections else { return false }
            s.openConnections += 1
            return true
        }
        guard admitted else {
            source?.oversized("connection from \(peer) over the limit of \(Self.maximumConnections)")
            return false
        }
        source?.connectionOpened(peer)
        return true
    }

    func closed() { shared.withLockedValue { $0.openConnections -= 1 } }

    /// Decodes a body and delivers it; `false` when it is not a push message.
    func deliver(_ body: [UInt8], arrival: Double, peer: String) -> Bool {
        guard let source else { return false }
        let message: SensorLoggerPushMessage
        do {
            message = try SensorLoggerPush.decode(body)
        } catch {
            var d = PhoneDecoded()
            d.rejected = [error.message]
            source.received(d, arrival: arrival, peer: peer)
            return false
        }
        let deviceID = message.deviceId
        enum Outcome { case ignored(newly: Bool, reading: String), decoded(PhoneDecoded, first: Bool) }
        let outcome = shared.withLockedValue { s -> Outcome in
            if s.device == nil { s.device = pinned ?? deviceID }
            guard deviceID == s.device else {
                return .ignored(newly: s.ignoredDevices.insert(deviceID).inserted, reading: s.device ?? "")
            }
            let first = s.decoders[deviceID] == nil
            var decoder = s.decoders[deviceID] ?? SensorLoggerDecoder(convention: convention)
            s.decoders[deviceID] = nil
            let decoded = decoder.decode(message: message)
            s.decoders[deviceID] = decoder
            return .decoded(decoded, first: first)
        }
        let first: Bool
        var decoded: PhoneDecoded
        switch outcome {
        case .ignored(let newly, let reading):
            if newly {
                source.log("\(spec): messages from a second device \(deviceID) are ignored (this source reads \(reading); pick one with ?device=ID)")
            }
            return true
        case .decoded(let d, let f):
            decoded = d
            first = f
        }
        if first {
            let android = message.payload.contains { $0.accuracy != nil }
            source.notePlatform(android ? "Android (entries carry accuracy)" : "iOS (entries carry no accuracy)")
        }
        decoded.clock = deviceID
        source.received(decoded, arrival: arrival, peer: "\(peer) device \(deviceID)")
        return true
    }

    var tooLarge: Int { maximumBody }
}

/// One HTTP connection from the phone.
///
/// Not Sendable: made on its channel's event loop and added there (`syncOperations`).
final class SensorLoggerHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: SensorLoggerServer
    private var machine: SensorLoggerRequestMachine
    private var arrival = 0.0
    private var counted = false
    private var peer = "?"

    init(server: SensorLoggerServer) {
        self.server = server
        machine = SensorLoggerRequestMachine(maximumBody: server.maximumBody, token: server.token)
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = peerText(context.remoteAddress)
        if server.opened(peer) { counted = true } else { context.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if counted { server.closed(); counted = false }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let action: SensorLoggerRequestMachine.Action
        switch unwrapInboundIn(data) {
        case .head(let head):
            action = machine.head(method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, keepAlive: head.isKeepAlive)
        case .body(let buffer):
            action = machine.body(buffer.readableBytesView)
        case .end:
            arrival = MonotonicClock.now()
            action = machine.end()
        }
        perform(action, context: context)
    }

    private func perform(_ action: SensorLoggerRequestMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .deliver(let body):
            let ok = server.deliver(body, arrival: arrival, peer: peer)
            perform(machine.decoded(ok: ok), context: context)
        case .respond(let status, let text, let close):
            if status == 413 { server.deliverOversized(peer: peer) }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            headers.add(name: "Content-Length", value: String(text.utf8.count))
            if close { headers.add(name: "Connection", value: "close") }
            let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if !text.isEmpty {
                var buffer = context.channel.allocator.buffer(capacity: text.utf8.count)
                buffer.writeString(text)
                context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            }
            let done = context.writeAndFlushPromise(wrapOutboundOut(.end(nil)))
            if close {
                let channel = context.channel
                done.futureResult.whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        server.deliverMalformed("HTTP: \(error)")
        context.close(promise: nil)
    }
}

extension ChannelHandlerContext {
    fileprivate func writeAndFlushPromise(_ data: NIOAny) -> EventLoopPromise<Void> {
        let p = eventLoop.makePromise(of: Void.self)
        writeAndFlush(data, promise: p)
        return p
    }
}

extension SensorLoggerServer {
    func deliverOversized(peer: String) { source?.oversized("request from \(peer) over \(maximumBody) bytes (max-body=)") }
    func deliverMalformed(_ reason: String) { source?.malformed(reason) }
}
