import MotionFusion
import NIOCore
import MotionSources

/// A message queued for one page.
enum DashboardOutgoing: Sendable {
    /// A JSON text message, encoded once and shared by every page.
    case text(ByteBuffer)

    /// The message as a `String` (tests).
    var string: String {
        switch self {
        case .text(let buffer): String(buffer: buffer)
        }
    }
}

/// One connected page, as the hub sees it: a bounded queue of outgoing messages.
///
/// The transport drains ``messages``; when it finishes, the page is gone or was dropped, and
/// ``dropReason`` says why if the hub dropped it.
final class DashboardConnection: Sendable {
    let id: UInt64
    /// The page's outgoing messages, in order. Finishes when the page is dropped or disconnected.
    let messages: AsyncStream<DashboardOutgoing>
    fileprivate let continuation: AsyncStream<DashboardOutgoing>.Continuation
    private let _dropReason = Locked<String?>(nil)

    fileprivate init(id: UInt64, capacity: Int) {
        self.id = id
        (messages, continuation) = AsyncStream.makeStream(of: DashboardOutgoing.self, bufferingPolicy: .bufferingOldest(capacity))
    }

    /// Why the hub dropped this page (it fell behind), or `nil`.
    var dropReason: String? { _dropReason.withLock { $0 } }

    fileprivate func drop(reason: String) {
        _dropReason.withLock { $0 = $0 ?? reason }
        continuation.finish()
    }
}

/// The dashboard's I/O around its state machine: the per-page bounded queues, the lock, the frame
/// ticker and the calls to the feed. What the state is and who is told what is decided by
/// ``DashboardHubStateMachine``; the messages are encoded from ``DashboardServerMessage``. It knows
/// nothing of HTTP or WebSockets, so it is tested by calling it directly.
///
/// ## Threading
/// Every method may be called from any thread. Inputs take a short lock; the feed's
/// ``DashboardFeed/apply(_:)`` is called outside that lock, one call at a time.
final class DashboardHub: Sendable {
    /// Version of the WebSocket protocol in `hello`; bumped on incompatible changes.
    static var protocolVersion: Int { DashboardHubStateMachine.protocolVersion }

    let feed: any DashboardFeed
    let source: DashboardSourceDescription
    /// How many messages may wait for one page before it is dropped.
    let outboxCapacity: Int
    /// How many samples may wait for the next frame before the oldest are discarded.
    let pendingCapacity: Int

    private struct Guarded {
        var machine: DashboardHubStateMachine
        var connections: [UInt64: DashboardConnection] = [:]
    }

    private let state: Locked<Guarded>
    /// The configuration last given to the feed; its lock also serialises calls to the feed.
    private let applied = Locked<DashboardFeedConfiguration?>(nil)

    /// Creates a hub over `feed` (see ``DashboardHubStateMachine/init(source:outboxCapacity:pendingCapacity:)``
    /// for the initial state).
    init(feed: any DashboardFeed, outboxCapacity: Int = 64, pendingCapacity: Int = 4096) {
        self.feed = feed
        self.source = feed.sourceDescription
        let machine = DashboardHubStateMachine(
            source: source, outboxCapacity: outboxCapacity, pendingCapacity: pendingCapacity)
        self.outboxCapacity = machine.outboxCapacity
        self.pendingCapacity = machine.pendingCapacity
        state = Locked(Guarded(machine: machine))
        feed.connect { [weak self] event in self?.ingest(event) }
    }

    // MARK: pages

    /// Registers a page and queues its `hello` and `state` messages.
    func connect() -> DashboardConnection {
        let connection = state.withLock { g in
            let (id, actions) = g.machine.connect()
            let connection = DashboardConnection(id: id, capacity: outboxCapacity)
            g.connections[id] = connection
            perform(actions, in: &g)
            return connection
        }
        reconcile()
        return connection
    }

    /// Forgets a page; the last page leaving stops the feed.
    func disconnect(_ connection: DashboardConnection) {
        state.withLock { g in
            g.connections[connection.id] = nil
            perform(g.machine.disconnect(connection.id), in: &g)
        }
        connection.continuation.finish()
        reconcile()
    }

    /// The number of pages connected.
    var clientCount: Int { state.withLock { $0.machine.clients.count } }

    // MARK: control

    /// Handles one text message from a page: a reply (`ack` or `error`) goes to that page, and on a
    /// change a `state` message goes to every page.
    func receive(_ text: String, from connection: DashboardConnection) {
        let parsed = DashboardControlParser.parse(text)
        state.withLock { g in
            perform(g.machine.receive(parsed, from: connection.id), in: &g, sender: connection)
        }
        reconcile()
    }

    /// Answers a binary message: the protocol is text only.
    func receiveBinary(from connection: DashboardConnection) {
        let refused = DashboardControlError(code: .malformed, message: "binary messages are not supported; send JSON text")
        state.withLock { g in
            perform(g.machine.receive(.failure(refused), from: connection.id), in: &g, sender: connection)
        }
    }

    /// Gives the feed the configuration the state calls for, if it changed. Serialised, and always
    /// applies the latest state, so concurrent controls cannot leave an older configuration running.
    private func reconcile() {
        applied.withLock { applied in
            let wanted = state.withLock { $0.machine.configuration }
            if wanted != applied {
                feed.apply(wanted)
                applied = wanted
            }
        }
    }

    /// The configuration the feed was last given (tests).
    var appliedConfiguration: DashboardFeedConfiguration? { applied.withLock { $0 } }

    // MARK: feed events

    /// Takes one event from the feed.
    func ingest(_ event: DashboardFeedEvent) {
        state.withLock { g in
            perform(g.machine.ingest(event), in: &g)
        }
    }

    // MARK: frames

    /// Sends the samples gathered since the last frame to every page, as one `samples` message
    /// encoded once. Does nothing when no sample is waiting. Called once per frame by the ticker.
    /// - Returns: the number of samples sent.
    @discardableResult
    func flush() -> Int {
        state.withLock { g in
            let (count, actions) = g.machine.flush()
            perform(actions, in: &g)
            return count
        }
    }

    /// Runs the frame ticker: one ``flush()`` every `frame` of `clock`, until the task is cancelled.
    func runFrames<C: Clock>(clock: C, frame: Duration) async where C.Duration == Duration {
        var deadline = clock.now
        while !Task.isCancelled {
            deadline = deadline.advanced(by: frame)
            let now = clock.now
            if deadline < now { deadline = now }  // fell behind: don't burst to catch up
            do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
            flush()
        }
    }

    // MARK: actions

    /// Performs the machine's actions: each message is encoded once and queued for its recipients.
    /// `sender` is the page whose message caused them, reached even if it is no longer registered.
    private func perform(_ actions: [DashboardHubStateMachine.Action], in g: inout Guarded, sender: DashboardConnection? = nil) {
        for action in actions {
            switch action {
            case .send(let message, let recipients):
                let buffer = DashboardOutgoing.text(message.encoded())
                switch recipients {
                case .all:
                    for connection in g.connections.values {
                        enqueue(buffer, to: connection, in: &g)
                    }
                case .page(let id):
                    if let connection = g.connections[id] ?? (sender?.id == id ? sender : nil) {
                        enqueue(buffer, to: connection, in: &g)
                    }
                }
            }
        }
    }

    private func enqueue(_ message: DashboardOutgoing, to connection: DashboardConnection, in g: inout Guarded) {
        switch connection.continuation.yield(message) {
        case .enqueued:
            return
        case .dropped:
            forget(connection, in: &g)
            connection.drop(
                reason: "client too slow: more than \(outboxCapacity) messages waiting; reload to reconnect")
        case .terminated:
            forget(connection, in: &g)
        @unknown default:
            forget(connection, in: &g)
        }
    }

    private func forget(_ connection: DashboardConnection, in g: inout Guarded) {
        if g.connections.removeValue(forKey: connection.id) != nil {
            g.machine.dropped(connection.id)
        }
    }

    // MARK: messages for the HTTP API

    /// The `hello` message a new page receives.
    func helloMessage() -> String { state.withLock { DashboardServerMessage.hello($0.machine.hello).text } }

    /// The current `state` message.
    func stateMessage() -> String { state.withLock { DashboardServerMessage.state($0.machine.state).text } }
}
