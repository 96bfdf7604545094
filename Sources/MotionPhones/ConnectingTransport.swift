import Foundation
import MotionWebSocketHandshake
import MotionSources
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// Connects to the phone (SensorServer's WebSocket, SensorLog's TCP stream) and reconnects with
/// exponential backoff (``ReconnectMachine``) whenever the connection fails or closes.
///
/// ## Threading
/// Its mutable state is bound to the source's event loop (`NIOLoopBoundBox`), where its channels, their
/// handlers and its timers run; ``start()`` and ``stop()`` hop there.
final class ConnectingTransport: PhoneTransport {
    enum Kind { case sensorServer, sensorLog }

    private weak let source: PhoneSource?
    let spec: PhoneSpec
    let kind: Kind
    private let eventLoop: any EventLoop
    /// The largest WebSocket message or SensorLog record accepted, in bytes.
    static let maximumMessage = 64 * 1024
    let types: [String]
    /// What changes, on the event loop only.
    private struct LoopState {
        var machine: ReconnectMachine
        var channel: (any Channel)?
        var timer: Scheduled<Void>?
        var lastFailure: String?
    }
    private let loop: NIOLoopBoundBox<LoopState>

    init(source: PhoneSource, protocol kind: Kind) throws(SourceError) {
        self.source = source
        spec = source.spec
        self.kind = kind
        eventLoop = source.eventLoop
        let backoff = try spec.number("backoff", default: 5, in: 0.05...3600)
        loop = .makeBoxSendingValue(LoopState(machine: ReconnectMachine(initialDelay: min(0.25, backoff), maximumDelay: backoff)),
                                    eventLoop: source.eventLoop)
        if let t = spec.parameters["types"] {
            types = t.split(separator: ",").map { $0.contains(".") ? String($0) : "android.sensor." + $0 }
        } else {
            // `motion=phone` also asks for the phone's own attitude and gravity.
            types = SensorServerDecoder.defaultTypes
                + (source.reportsOwnAttitude ? ["android.sensor.rotation_vector", "android.sensor.gravity"] : [])
        }
    }

    var localAddress: (host: String, port: Int)? { nil }

    func start() throws(SourceError) {
        eventLoop.execute { self.perform(self.loop.value.machine.start()) }
    }

    func stop() {
        eventLoop.execute {
            self.loop.value.timer?.cancel()
            self.loop.value.timer = nil
            if case .close = self.loop.value.machine.stop() { self.loop.value.channel?.close(promise: nil) }
            self.loop.value.channel = nil
        }
    }

    /// The request target of SensorServer's multi-sensor endpoint, percent-encoded.
    var sensorServerPath: String {
        let list = "[" + types.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~,")
        return "/sensors/connect?types=" + (list.addingPercentEncoding(withAllowedCharacters: allowed) ?? list)
    }

    // MARK: Event loop

    private func perform(_ action: ReconnectMachine.Action) {
        switch action {
        case .connect: connect()
        case .wait(let delay):
            loop.value.timer = eventLoop.scheduleTask(in: .nanoseconds(Int64(delay * 1e9))) { [weak self] in  // safe: delay ≤ backoff ≤ 3600 s (validated spec)
                guard let self else { return }
                self.perform(self.loop.value.machine.timerFired())
            }
        case .close:
            loop.value.channel?.close(promise: nil)
            loop.value.channel = nil
        case .none:
            break
        }
    }

    private func connect() {
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(3))
            .channelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
            .channelInitializer { [weak self] channel in
                guard let self else { return channel.eventLoop.makeSucceededVoidFuture() }
                return self.configure(channel)
            }
        bootstrap.connect(host: spec.host, port: spec.port).hop(to: eventLoop).whenComplete { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let channel):
                if case .close = self.loop.value.machine.connected() { channel.close(promise: nil); return }
                self.loop.value.channel = channel
                self.source?.connectionOpened("\(self.spec.host):\(self.spec.port)")
                self.loop.value.lastFailure = nil
                self.source?.log("\(self.spec.app.displayName): connected to \(self.spec.host):\(self.spec.port)")
                channel.closeFuture.hop(to: self.eventLoop).whenComplete { [weak self] _ in
                    guard let self, self.loop.value.channel === channel else { return }
                    self.loop.value.channel = nil
                    self.source?.connectionLost("connection closed")
                    self.failed("connection closed")
                }
            case .failure(let error):
                self.failed("\(error)")
            }
        }
    }

    private func failed(_ reason: String) {
        let action = loop.value.machine.disconnected()
        if case .wait(let delay) = action, reason != loop.value.lastFailure || loop.value.machine.failures % 20 == 1 {
            source?.log("\(spec.app.displayName) at \(spec.host):\(spec.port): \(reason); retrying in \(String(format: "%.2f", delay)) s")
            loop.value.lastFailure = reason
        }
        perform(action)
    }

    /// Data came: the next loss retries quickly.
    func receivedData() { loop.value.machine.receivedData() }

    private func configure(_ channel: any Channel) -> EventLoopFuture<Void> {
        switch kind {
        case .sensorLog:
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(SensorLogStreamHandler(transport: self))
            }
        case .sensorServer:
            let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: Self.maximumMessage) { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SensorServerFrameHandler(transport: self))
                }
            }
            // A response that is not an upgrade: the server refused (wrong path, not SensorServer).
            let request = WebSocketUpgradeRequestHandler(host: spec.host, port: spec.port, path: sensorServerPath) { head in
                SourceError(.unavailable, "the phone answered HTTP \(head.status.code) instead of a WebSocket upgrade; is SensorServer running on this port?")
            }
            let config: NIOHTTPClientUpgradeSendableConfiguration = (upgraders: [upgrader], completionHandler: { context in
                context.pipeline.removeHandler(request, promise: nil)
            })
            return channel.pipeline.addHTTPClientHandlers(withClientUpgrade: config).flatMap {
                channel.pipeline.addHandler(request)
            }
        }
    }

    // Called by the handlers on the event loop.
    func deliver(_ decoded: PhoneDecoded, arrival: Double) {
        if !decoded.readings.isEmpty { loop.value.machine.receivedData() }
        source?.received(decoded, arrival: arrival, peer: "\(spec.host):\(spec.port)")
    }

    func oversized(_ what: String) { source?.oversized(what) }
    func note(_ text: String) { source?.log(text) }
}

/// Reads SensorServer's text frames after the upgrade.
///
/// Not Sendable: made on its channel's event loop and added there (`syncOperations`).
final class SensorServerFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    private let transport: ConnectingTransport
    private var fragments: [UInt8] = []
    private var fragmented = false
    private var discarding = false

    init(transport: ConnectingTransport) { self.transport = transport }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrival = MonotonicClock.now()
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            if frame.opcode != .continuation { fragments.removeAll(keepingCapacity: true); discarding = false }
            if !discarding {
                if fragments.count + frame.unmaskedData.readableBytes > ConnectingTransport.maximumMessage {
                    discarding = true
                    fragments.removeAll()
                    transport.oversized("WebSocket message over \(ConnectingTransport.maximumMessage) bytes")
                } else {
                    fragments.append(contentsOf: frame.unmaskedData.readableBytesView)
                }
            }
            if frame.fin {
                if !discarding { transport.deliver(SensorServerDecoder.decode(fragments), arrival: arrival) }
                fragments.removeAll(keepingCapacity: true)
                discarding = false
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readInteger(as: UInt16.self).map(String.init) ?? "none"
            let reason = data.readString(length: data.readableBytes) ?? ""
            transport.note("SensorServer closed the connection (code \(code)\(reason.isEmpty ? "" : ": " + reason))")
            let close = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: context.channel.allocator.buffer(capacity: 0))
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in channel.close(promise: nil) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        transport.note("SensorServer connection: \(error)")
        context.close(promise: nil)
    }
}

/// Reads SensorLog's TCP stream: JSON objects back to back, or CSV lines under a header; the first
/// non-blank byte decides which.
///
/// Not Sendable: made on its channel's event loop and added there (`syncOperations`).
final class SensorLogStreamHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let transport: ConnectingTransport
    private var mode: Bool?  // true: JSON
    private var objects = JSONObjectSplitter(maximumObjectSize: ConnectingTransport.maximumMessage)
    private var lines = LineSplitter(maximumLineLength: ConnectingTransport.maximumMessage, hashEnds: false)
    private var decoder = SensorLogDecoder()
    private var oversizedSeen = 0

    init(transport: ConnectingTransport) { self.transport = transport }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrival = MonotonicClock.now()
        let buffer = unwrapInboundIn(data)
        let bytes = buffer.readableBytesView
        if mode == nil, let first = bytes.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) {
            mode = first == UInt8(ascii: "{")
        }
        guard let json = mode else { return }
        if json {
            for object in objects.feed(bytes) { transport.deliver(decoder.decode(json: object), arrival: arrival) }
            while oversizedSeen < objects.oversized { oversizedSeen += 1; transport.oversized("SensorLog record over \(ConnectingTransport.maximumMessage) bytes") }
        } else {
            for line in lines.feed(bytes) { transport.deliver(decoder.decode(csvLine: line), arrival: arrival) }
            while oversizedSeen < lines.oversized { oversizedSeen += 1; transport.oversized("SensorLog line over \(ConnectingTransport.maximumMessage) bytes") }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        transport.note("SensorLog connection: \(error)")
        context.close(promise: nil)
    }
}
