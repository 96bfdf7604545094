import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import MotionSources

/// Why a dashboard could not start.
package enum DashboardServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process already listens on the port.
    case addressInUse(host: String, port: Int)
    /// The address could not be bound for another reason (unknown host, permission denied, …).
    case cannotBind(host: String, port: Int, reason: String)

    /// One line for the terminal.
    package var description: String {
        switch self {
        case .addressInUse(let host, let port):
            "port \(port) on \(host) is already in use; pick another with --port, or stop the other server"
        case .cannotBind(let host, let port, let reason):
            "cannot listen on \(host):\(port): \(reason)"
        }
    }
}

/// The live web dashboard: an HTTP server with a WebSocket that streams every sensor to a page of
/// scrolling graphs, and takes the page's controls (interval, start/stop, reference frame, filter).
///
/// ```swift
/// let server = DashboardServer(feed: MotionManagerFeed(source: device))
/// try await server.run { url in print("dashboard: \(url)") }
/// ```
///
/// The page and its assets are embedded in the binary. The protocol is in `PROTOCOL.md`.
///
/// Sensors run only while at least one page is connected; every page sees and controls the same
/// state. Samples are batched once per frame (default 1/60 s) and each page has a bounded queue
/// (default 64 messages): a page that falls behind is disconnected with a reason, never buffered
/// without limit.
///
/// ## Threading
/// All members may be used from any thread. ``run(onRunning:)`` runs until its task is cancelled.
package final class DashboardServer: Sendable {
    /// The host or address to listen on; `127.0.0.1` by default.
    package let host: String
    /// The TCP port to listen on; `0` picks a free one (see ``run(onRunning:)``).
    package let port: Int
    /// How often sample batches go out: one WebSocket message per page per frame at most.
    package let frameInterval: Duration

    let hub: DashboardHub
    private let clock: any Clock<Duration>
    private let logger: Logger
    private let _boundURL = Locked<URL?>(nil)

    /// Creates a dashboard over a feed.
    ///
    /// - Parameters:
    ///   - feed: where samples come from, usually a ``MotionManagerFeed``.
    ///   - host: the address to listen on, `127.0.0.1` by default. Anything but loopback exposes the
    ///     stream and its controls to whoever can reach the port (see ``exposureWarning``).
    ///   - port: the TCP port, 8080 by default; `0` picks a free port.
    ///   - frameInterval: the batching period, 1/60 s by default.
    ///   - outboxCapacity: how many messages may wait for one page before it is dropped, 64 by default.
    ///   - clock: the clock that paces frames; inject a test clock to step frames by hand.
    ///   - logger: where the server logs; a quiet logger at `warning` level by default.
    package init(
        feed: any DashboardFeed,
        host: String = "127.0.0.1",
        port: Int = 8080,
        frameInterval: Duration = .microseconds(16_667),
        outboxCapacity: Int = 64,
        clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger? = nil
    ) {
        self.host = host
        self.port = port
        self.frameInterval = frameInterval
        self.clock = clock
        self.hub = DashboardHub(feed: feed, outboxCapacity: outboxCapacity)
        self.logger =
            logger
            ?? {
                var l = Logger(label: "coremotion.dashboard")
                l.logLevel = .warning
                return l
            }()
    }

    /// `true` when ``host`` is a loopback address (`127.0.0.0/8`, `::1` or `localhost`).
    package var isLoopback: Bool { Self.isLoopback(host: host) }

    /// `true` when `host` is a loopback address (`127.0.0.0/8`, `::1` or `localhost`).
    package static func isLoopback(host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// A warning to print when ``host`` is not loopback, else `nil`.
    package var exposureWarning: String? {
        isLoopback
            ? nil
            : "warning: listening on \(host), not loopback: anyone who can reach this port can watch the sensors and control them"
    }

    /// The URL to open, from ``host`` and ``port`` as configured (with port 0, use the URL given to
    /// ``run(onRunning:)`` or ``boundURL`` instead).
    package var url: URL { Self.url(host: host, port: port) }

    /// The URL the server really listens on, once it runs; `nil` before.
    package var boundURL: URL? { _boundURL.withLock { $0 } }

    /// Runs the server until the calling task is cancelled.
    ///
    /// - Parameter onRunning: called once, when the port is bound, with the URL to open (its port
    ///   is the real one when ``port`` is 0).
    /// - Throws: ``DashboardServerError`` when the address cannot be bound; the server then never runs.
    package func run(onRunning: @escaping @Sendable (URL) -> Void = { _ in }) async throws {
        let router = DashboardApplication.makeRouter(hub: hub)
        let host = self.host
        let webSocketResponder = router.buildResponder()
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                // The Origin rule (403) applies before Hummingbird's upgrade, which answers 400.
                OriginCheckedChannel(inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(ws: .init(maxFrameSize: DashboardApplication.maximumInboundMessage))))
            },
            configuration: .init(address: .hostname(host, port: port), serverName: "coremotion-dashboard"),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? 0
                let url = Self.url(host: host, port: port)
                self._boundURL.withLock { $0 = url }
                onRunning(url)
            },
            logger: logger
        )
        let hub = self.hub
        let clock = self.clock
        let frame = frameInterval
        // Cancelling run() shuts the server down gracefully: pages get a WebSocket close ("going
        // away") and reconnect to the next server. The service group runs in its own task so that our
        // cancellation reaches it as a graceful shutdown, not as a cancellation of every connection.
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let server = Task { try await services.run() }
        let frames = Task { await hub.runFrames(clock: clock, frame: frame) }
        defer { frames.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await server.value
            } onCancel: {
                Task { await services.triggerGracefulShutdown() }
            }
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw DashboardServerError.addressInUse(host: host, port: port)
        } catch let error as IOError {
            throw DashboardServerError.cannotBind(host: host, port: port, reason: String(describing: error))
        } catch let error as SocketAddressError {
            throw DashboardServerError.cannotBind(host: host, port: port, reason: String(describing: error))
        }
    }

    static func url(host: String, port: Int) -> URL {
        let h = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return URL(string: "http://\(h):\(port)/")!
    }
}
