import Foundation
import MotionSources
import NIOCore
import NIOHTTP1
import NIOPosix

/// Polls a phyphox phone's remote-access REST interface (``PhyphoxMachine``): one HTTP/1.1 request per
/// connection (`Connection: close`), a 3 s timeout, answers capped at ``maximumAnswer`` bytes.
///
/// ## Threading
/// Its mutable state is bound to the source's event loop (`NIOLoopBoundBox`), where its requests and
/// timers complete; ``start()`` and ``stop()`` hop there.
final class PhyphoxTransport: PhoneTransport {
    private weak let source: PhoneSource?
    let spec: PhoneSpec
    private let eventLoop: any EventLoop
    /// The largest answer accepted, in bytes.
    static let maximumAnswer = 8 * 1024 * 1024
    /// What changes, on the event loop only.
    private struct LoopState {
        var machine: PhyphoxMachine
        var timer: Scheduled<Void>?
        var channel: (any Channel)?
        var generation = 0
        var lastFailure: String?
        var connected = false
    }
    private let loop: NIOLoopBoundBox<LoopState>

    init(source: PhoneSource) throws(SourceError) {
        self.source = source
        spec = source.spec
        eventLoop = source.eventLoop
        let interval = try spec.number("interval", default: 0.05, in: 0.005...10)
        let backoff = try spec.number("backoff", default: 5, in: 0.05...3600)
        loop = .makeBoxSendingValue(LoopState(machine: PhyphoxMachine(interval: interval, maximumBackoff: backoff)),
                                    eventLoop: source.eventLoop)
    }

    var localAddress: (host: String, port: Int)? { nil }

    func start() throws(SourceError) {
        eventLoop.execute { self.perform(self.loop.value.machine.start(), decoded: nil, arrival: 0) }
    }

    func stop() {
        eventLoop.execute {
            self.loop.value.machine.stop()
            self.loop.value.generation += 1
            self.loop.value.timer?.cancel()
            self.loop.value.timer = nil
            self.loop.value.channel?.close(promise: nil)
            self.loop.value.channel = nil
        }
    }

    // MARK: Event loop

    private func perform(_ action: PhyphoxMachine.Action, decoded: PhoneDecoded?, arrival: Double) {
        if let decoded { source?.received(decoded, arrival: arrival, peer: "\(spec.host):\(spec.port)") }
        switch action {
        case .get(let path): request(path)
        case .wait(let delay):
            loop.value.timer = eventLoop.scheduleTask(in: .nanoseconds(Int64(delay * 1e9))) { [weak self] in  // safe: delay ≤ backoff ≤ 3600 s or interval ≤ 10 s (validated spec)
                guard let self else { return }
                self.perform(self.loop.value.machine.timerFired(), decoded: nil, arrival: 0)
            }
        case .none:
            break
        }
    }

    private func request(_ path: String) {
        loop.value.generation += 1
        let mine = loop.value.generation
        let host = spec.host
        let port = spec.port
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(3))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(PhyphoxAnswerHandler(maximum: Self.maximumAnswer))
                }
            }
            .connect(host: host, port: port)
            .hop(to: eventLoop)
            .whenComplete { [weak self] result in
                guard let self, mine == self.loop.value.generation else {
                    if case .success(let c) = result { c.close(promise: nil) }
                    return
                }
                switch result {
                case .failure(let error): self.failed("\(error)")
                case .success(let channel):
                    self.loop.value.channel = channel
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
                    headers.add(name: "Connection", value: "close")
                    channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)), promise: nil)
                    channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                    // On the event loop, which is the channel's (the bootstrap's group).
                    guard let answer = try? channel.pipeline.syncOperations.handler(type: PhyphoxAnswerHandler.self).future else {
                        self.failed("no HTTP pipeline"); return
                    }
                    let timeout = self.eventLoop.scheduleTask(in: .seconds(3)) { channel.close(promise: nil) }
                    answer.hop(to: self.eventLoop).whenComplete { [weak self] result in
                        timeout.cancel()
                        channel.close(promise: nil)
                        guard let self, mine == self.loop.value.generation else { return }
                        self.loop.value.channel = nil
                        switch result {
                        case .success(let (status, body)):
                            if !self.loop.value.connected {
                                self.loop.value.connected = true
                                self.source?.connectionOpened("\(host):\(port)")
                                self.source?.log("phyphox: connected to \(host):\(port)")
                            }
                            self.loop.value.lastFailure = nil
                            if status == 413 || body == nil {
                                self.source?.oversized("phyphox answer over \(Self.maximumAnswer) bytes")
                            }
                            if status != 200, status != 413 {
                                self.source?.log("phyphox at \(host):\(port): \(path) answered HTTP \(status)")
                            }
                            let arrival = MonotonicClock.now()
                            let hadPoller = self.loop.value.machine.poller != nil
                            let (action, decoded) = self.loop.value.machine.received(status: status, body: body ?? [])
                            if !hadPoller, let platform = self.loop.value.machine.poller?.platform {
                                self.source?.notePlatform(platform == .iOS ? "iOS" : "Android")
                            }
                            self.perform(action, decoded: decoded, arrival: arrival)
                        case .failure(let error):
                            self.failed("\(error)")
                        }
                    }
                }
            }
    }

    private func failed(_ reason: String) {
        let wasPolling = loop.value.machine.wasPolling
        let action = loop.value.machine.failed()
        if wasPolling { source?.connectionLost(reason) }
        loop.value.connected = false
        if case .wait(let delay) = action, reason != loop.value.lastFailure {
            source?.log("phyphox at \(spec.host):\(spec.port): \(reason); retrying in \(String(format: "%.2f", delay)) s")
            loop.value.lastFailure = reason
        }
        perform(action, decoded: nil, arrival: 0)
    }
}

/// Collects one HTTP answer: its status and body (`nil` body when over the cap).
///
/// Not Sendable: made on its channel's event loop and added there (`syncOperations`); its ``future``
/// is read there too.
final class PhyphoxAnswerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private let maximum: Int
    private var status = 0
    private var body: [UInt8] = []
    private var tooLarge = false
    private var done = false
    private var promise: EventLoopPromise<(Int, [UInt8]?)>?
    /// Completed with the answer, or failed when the connection ends first; set once the handler is
    /// in a pipeline.
    private(set) var future: EventLoopFuture<(Int, [UInt8]?)>?

    init(maximum: Int) { self.maximum = maximum }

    func handlerAdded(context: ChannelHandlerContext) {
        let p = context.eventLoop.makePromise(of: (Int, [UInt8]?).self)
        promise = p
        future = p.futureResult
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.ioOnClosedChannel))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(let buffer):
            guard !tooLarge else { return }
            if body.count + buffer.readableBytes > maximum {
                tooLarge = true
                body = []
                context.close(promise: nil)
            } else {
                body.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            finish(.success((status, tooLarge ? nil : body)))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if tooLarge { finish(.success((status, nil))) } else { finish(.failure(ChannelError.eof)) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    private func finish(_ result: Result<(Int, [UInt8]?), any Error>) {
        guard !done else { return }
        done = true
        promise?.completeWith(result)
    }
}
