import NIOCore
import NIOPosix
import NIOSSL

/// What an ``MQTTClient`` reports to its owner.
package enum MQTTClientEvent: Sendable, Equatable {
    /// Connected and CONNACK accepted (`sessionPresent`: the broker kept our persistent session).
    case connected(sessionPresent: Bool)
    /// A subscription was granted (QoS per filter; `nil` = refused by the broker).
    case subscribed([String: MQTTQoS?])
    /// An application message arrived.
    case message(MQTTMessage)
    /// The connection is gone or could not be made; the client tries again after `retryIn` seconds.
    case disconnected(reason: String, retryIn: Double)
    /// The broker refused the connection with return code 4 or 5 (credentials): the client stopped.
    case refused(MQTTConnectReturnCode)
    /// Messages were dropped, oldest first: the outgoing queue (``MQTTClientConfiguration/maximumQueued``)
    /// was full, or a QoS 0 message was published while disconnected.
    case dropped([MQTTMessage])
}

/// Settings of an ``MQTTClient``.
package struct MQTTClientConfiguration: Sendable {
    /// Broker host name or address.
    package var host: String
    /// Broker port (1883 plain, 8883 TLS).
    package var port: Int
    /// Whether to speak TLS (mqtts), verifying the broker's certificate with the system's trust roots.
    package var useTLS: Bool
    /// The CONNECT fields: client id (keep it stable), clean session (default off), keepalive, credentials.
    package var connect: MQTTConnect
    /// First reconnection delay in seconds (default 0.1); it doubles after each failure.
    package var initialBackoff: Double
    /// Longest reconnection delay in seconds (default 5).
    package var maximumBackoff: Double
    /// Random extra delay as a fraction of the backoff (default 0.2) so a fleet does not reconnect in step.
    package var backoffJitter: Double
    /// QoS 1 messages in flight at once (default 64).
    package var maximumInFlight: Int
    /// Messages that may wait while disconnected or while the window is full (default 100,000).
    package var maximumQueued: Int
    /// Seconds to wait for CONNACK / PINGRESP (default 10).
    package var responseTimeout: Double
    /// Largest packet accepted from the broker in bytes (default 4 MiB).
    package var maximumPacketSize: Int
    /// The HTTP path for MQTT over WebSocket (`/mqtt` usually), or `nil` (the default) for plain TCP.
    package var webSocketPath: String?

    /// Creates a configuration with the defaults above.
    package init(host: String, port: Int = 1883, useTLS: Bool = false, connect: MQTTConnect,
                initialBackoff: Double = 0.1, maximumBackoff: Double = 5, backoffJitter: Double = 0.2,
                maximumInFlight: Int = 64, maximumQueued: Int = 100_000, responseTimeout: Double = 10,
                maximumPacketSize: Int = 4 << 20) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
        self.connect = connect
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.backoffJitter = backoffJitter
        self.maximumInFlight = maximumInFlight
        self.maximumQueued = maximumQueued
        self.responseTimeout = responseTimeout
        self.maximumPacketSize = maximumPacketSize
    }

    /// The reconnection delay in seconds after `failures` consecutive failures (1, 2, …), without jitter:
    /// `initialBackoff · 2^(failures−1)`, capped at `maximumBackoff`.
    package func backoff(afterFailures failures: Int) -> Double {
        let exponent = Double(min(max(failures - 1, 0), 30))
        let base = initialBackoff.isFinite && initialBackoff > 0 ? initialBackoff : 0.1
        let cap = maximumBackoff.isFinite && maximumBackoff > 0 ? maximumBackoff : 5
        return min(cap, base * (1 << Int(exponent)).asDouble)
    }
}

extension Int {
    fileprivate var asDouble: Double { Double(self) }
}

/// Opens a transport to the broker and installs `initializer`'s handlers on it. The default uses
/// `ClientBootstrap` (TCP, with TLS when configured); tests pass one that returns an `EmbeddedChannel`.
package typealias MQTTConnector = @Sendable (_ eventLoop: any EventLoop, _ initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<any Channel>

/// An MQTT 3.1.1 client on SwiftNIO: one connection at a time, reconnecting with exponential backoff,
/// keeping its persistent session (QoS 1 messages in flight, subscriptions) across connections.
///
/// The protocol logic is ``MQTTStateMachine``; this class runs it on one event loop: it opens the
/// transport, feeds received packets and a 0.25 s tick into the machine and performs its actions.
/// A refused CONNACK with code 4 or 5 (credentials) stops the client with ``MQTTClientEvent/refused(_:)``;
/// every other failure (broker unreachable, connection lost, keepalive timeout) is retried after
/// ``MQTTClientConfiguration/backoff(afterFailures:)`` seconds and reported as ``MQTTClientEvent/disconnected(reason:retryIn:)``.
///
/// ## Threading
/// Every method may be called from any thread. Events reach `onEvent` on the client's event loop, one
/// at a time, in order; the handler must not block.
package final class MQTTClient: Sendable {
    /// The configuration the client was made with.
    package let configuration: MQTTClientConfiguration
    /// The event loop that owns the client's state.
    package let eventLoop: any EventLoop
    private let core: NIOLoopBoundBox<Core>
    private let connector: MQTTConnector

    final class Core {
        var machine: MQTTStateMachine
        var channel: (any Channel)?
        var failures = 0
        var started = false
        var stopped = false
        var ticker: RepeatedTask?
        var retry: Scheduled<Void>?
        var onEvent: @Sendable (MQTTClientEvent) -> Void
        var idleWaiters: [EventLoopPromise<Void>] = []
        var lastReason: String?

        init(machine: MQTTStateMachine, onEvent: @escaping @Sendable (MQTTClientEvent) -> Void) {
            self.machine = machine
            self.onEvent = onEvent
        }
    }

    /// Creates a client; nothing happens until ``start()``.
    /// - Parameters:
    ///   - eventLoop: the loop that runs the client (default: one of NIO's singleton loops).
    ///   - connector: how the transport is opened (default TCP/TLS through `ClientBootstrap`).
    ///   - onEvent: receives every event, on `eventLoop`.
    package init(configuration: MQTTClientConfiguration, eventLoop: (any EventLoop)? = nil, connector: MQTTConnector? = nil,
                onEvent: @escaping @Sendable (MQTTClientEvent) -> Void) {
        self.configuration = configuration
        let loop = eventLoop ?? MultiThreadedEventLoopGroup.singleton.next()
        self.eventLoop = loop
        self.connector = connector ?? configuration.webSocketPath.map { MQTTClient.webSocketConnector(configuration, path: $0) }
            ?? MQTTClient.tcpConnector(configuration)
        let machine = MQTTStateMachine(connect: configuration.connect, maximumInFlight: configuration.maximumInFlight,
                                       maximumQueued: configuration.maximumQueued, responseTimeout: configuration.responseTimeout)
        if loop.inEventLoop {
            core = NIOLoopBoundBox(Core(machine: machine, onEvent: onEvent), eventLoop: loop)
        } else {
            core = NIOLoopBoundBox.makeBoxSendingValue(Core(machine: machine, onEvent: onEvent), eventLoop: loop)
        }
    }

    /// The default transport: TCP, with TLS (SNI = host) when `useTLS`.
    package static func tcpConnector(_ configuration: MQTTClientConfiguration) -> MQTTConnector {
        let host = configuration.host
        let port = configuration.port
        let tls = configuration.useTLS
        return { loop, initializer in
            ClientBootstrap(group: loop)
                .connectTimeout(.seconds(5))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    guard tls else { return initializer(channel) }
                    return channel.eventLoop.makeCompletedFuture {
                        let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                        let handler = try NIOSSLClientHandler(context: context, serverHostname: host)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }.flatMap { initializer(channel) }
                }
                .connect(host: host, port: port)
        }
    }

    private func onLoop(_ body: @escaping @Sendable (MQTTClient) -> Void) {
        if eventLoop.inEventLoop { body(self) } else { eventLoop.execute { body(self) } }
    }

    /// Connects (and keeps reconnecting until ``stop()``).
    package func start() {
        onLoop { client in
            let core = client.core.value
            guard !core.started else { return }
            core.started = true
            client.connect()
        }
    }

    /// Subscribes to topic filters (`+`, `#` allowed), now and after every reconnect that lost the session.
    package func subscribe(_ filters: [(String, MQTTQoS)]) {
        onLoop { client in
            let actions = client.core.value.machine.subscribe(filters, now: client.eventLoop.now)
            client.perform(actions)
        }
    }

    /// Publishes a message (see ``MQTTStateMachine/publish(_:now:)`` for what each QoS guarantees).
    package func publish(_ message: MQTTMessage) {
        onLoop { client in
            let actions = client.core.value.machine.publish(message, now: client.eventLoop.now)
            client.perform(actions)
        }
    }

    /// Completes when no message is queued or unacknowledged, or after `timeout` seconds (then `false`).
    package func waitUntilIdle(timeout: Double) async -> Bool {
        let promise = eventLoop.makePromise(of: Void.self)
        onLoop { client in
            let core = client.core.value
            if core.machine.outstanding == 0 { promise.succeed(()) } else { core.idleWaiters.append(promise) }
        }
        let ns = Int64(max(0, min(timeout.isFinite ? timeout : 3600, 86_400)) * 1e9)
        let timer = eventLoop.scheduleTask(in: .nanoseconds(ns)) { promise.fail(MQTTProtocolError("timeout")) }
        do {
            try await promise.futureResult.get()
            timer.cancel()
            return true
        } catch {
            return false
        }
    }

    /// Messages queued or awaiting PUBACK.
    package func outstanding() async -> Int {
        (try? await eventLoop.submit { self.core.value.machine.outstanding }.get()) ?? 0
    }

    /// Sends DISCONNECT, closes and stops reconnecting. Unacknowledged QoS 1 messages stay in the broker's
    /// session only if they reached it; the rest are lost with this client.
    package func stop() async {
        let promise = eventLoop.makePromise(of: Void.self)
        onLoop { client in
            let core = client.core.value
            core.stopped = true
            core.retry?.cancel()
            core.ticker?.cancel()
            let actions = core.machine.disconnect()
            client.perform(actions)
            if let channel = core.channel {
                channel.closeFuture.cascade(to: promise)
            } else {
                promise.succeed(())
            }
        }
        try? await promise.futureResult.get()
    }

    // MARK: running on the loop

    private func connect() {
        let core = self.core.value
        guard !core.stopped else { return }
        let maxPacket = configuration.maximumPacketSize
        let future = connector(eventLoop) { [self] channel in
            channel.eventLoop.makeCompletedFuture {
                let handler = MQTTChannelHandler(client: self, maximumPacketSize: maxPacket)
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }
        future.whenComplete { [self] result in
            let core = self.core.value
            switch result {
            case .success(let channel):
                if core.stopped { channel.close(promise: nil); return }
                self.adopt(channel)
            case .failure(let error):
                self.scheduleRetry(reason: "broker \(configuration.host):\(configuration.port) unreachable: \(Self.describe(error))")
            }
        }
    }

    /// A short reason for a failed connection (`connection refused`, `connect timeout`, a DNS failure).
    static func describe(_ error: any Error) -> String {
        if let e = error as? NIOConnectionError {
            if let first = e.connectionErrors.first { return describe(first.error) }
            if let dns = e.dnsAAAAError ?? e.dnsAError { return "cannot resolve \(e.host): \(dns)" }
            return "no address for \(e.host)"
        }
        if let e = error as? IOError { return String(cString: strerror(e.errnoCode)).lowercased() }
        if let e = error as? ChannelError, case .connectTimeout = e { return "connect timeout" }
        return String(describing: error)
    }

    private func scheduleRetry(reason: String) {
        let core = self.core.value
        guard !core.stopped else { return }
        core.failures += 1
        var delay = configuration.backoff(afterFailures: core.failures)
        let jitter = configuration.backoffJitter
        if jitter.isFinite, jitter > 0 { delay += delay * Double.random(in: 0...min(jitter, 1)) }
        core.onEvent(.disconnected(reason: reason, retryIn: delay))
        core.retry = eventLoop.scheduleTask(in: .nanoseconds(Int64(delay * 1e9))) { [self] in self.connect() }  // safe: the backoff is bounded by the client configuration
    }

    /// Makes `channel` the current transport (once), whichever of connect completion and channelActive comes first.
    private func adopt(_ channel: any Channel) {
        let core = self.core.value
        guard core.channel !== channel else { return }
        core.channel = channel
        channel.closeFuture.whenComplete { [self] _ in self.channelClosed(channel) }
    }

    fileprivate func channelActive(_ channel: any Channel) {
        let core = self.core.value
        if core.stopped { channel.close(promise: nil); return }
        adopt(channel)
        perform(core.machine.transportUp(now: eventLoop.now))
        core.ticker?.cancel()
        core.ticker = channel.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(250), delay: .milliseconds(250)) { [self] _ in
            self.perform(self.core.value.machine.tick(now: eventLoop.now))
        }
    }

    fileprivate func received(_ packet: MQTTPacket) {
        perform(core.value.machine.received(packet, now: eventLoop.now))
    }

    fileprivate func protocolError(_ error: any Error) {
        core.value.lastReason = String(describing: error)
        core.value.channel?.close(promise: nil)
    }

    private func channelClosed(_ channel: any Channel) {
        let core = self.core.value
        guard core.channel === channel else { return }
        core.channel = nil
        core.ticker?.cancel()
        core.ticker = nil
        let wasUp = core.machine.isConnected
        core.machine.transportDown()
        if wasUp { core.failures = 0 }
        let reason = core.lastReason ?? "connection to \(configuration.host):\(configuration.port) closed"
        core.lastReason = nil
        scheduleRetry(reason: reason)
    }

    private func perform(_ actions: [MQTTAction]) {
        let core = self.core.value
        var wrote = false
        for action in actions {
            switch action {
            case .send(let packet):
                guard let channel = core.channel else { continue }
                var buffer = channel.allocator.buffer(capacity: 64)
                do {
                    try packet.encode(into: &buffer)
                    channel.write(buffer, promise: nil)
                    wrote = true
                } catch {
                    core.lastReason = String(describing: error)
                }
            case .deliver(let m): core.onEvent(.message(m))
            case .connected(let present):
                core.failures = 0
                core.onEvent(.connected(sessionPresent: present))
            case .subscribed(let granted): core.onEvent(.subscribed(granted))
            case .acknowledged: break
            case .refused(let code):
                if code == .badUsernameOrPassword || code == .notAuthorized {
                    core.stopped = true
                    core.retry?.cancel()
                }
                core.onEvent(.refused(code))
            case .close(let reason):
                if let reason { core.lastReason = reason }
                if wrote { core.channel?.flush(); wrote = false }
                core.channel?.close(promise: nil)
            case .dropped(let messages): core.onEvent(.dropped(messages))
            }
        }
        if wrote { core.channel?.flush() }
        if core.machine.outstanding == 0, !core.idleWaiters.isEmpty {
            let waiters = core.idleWaiters
            core.idleWaiters = []
            for w in waiters { w.succeed(()) }
        }
    }

}

/// The channel handler that frames bytes into MQTT packets for an ``MQTTClient``.
final class MQTTChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let client: MQTTClient
    private var decoder: MQTTPacketDecoder

    init(client: MQTTClient, maximumPacketSize: Int) {
        self.client = client
        self.decoder = MQTTPacketDecoder(maximumPacketSize: maximumPacketSize)
    }

    func channelActive(context: ChannelHandlerContext) {
        client.channelActive(context.channel)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { client.channelActive(context.channel) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        decoder.append(unwrapInboundIn(data))
        do {
            while let packet = try decoder.next() { client.received(packet) }
        } catch {
            client.protocolError(error)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        client.protocolError(error)
    }
}
