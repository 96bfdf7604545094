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

/// The heart of the dashboard: the shared state every page sees and controls, the batching of
/// samples per frame and the bounded per-page queues. It knows nothing of HTTP or WebSockets, so it
/// is tested by calling it directly.
///
/// ## Threading
/// Every method may be called from any thread. Feed events take a short lock; the feed's
/// ``DashboardFeed/apply(_:)`` is called outside that lock, one call at a time.
final class DashboardHub: Sendable {
    /// Version of the WebSocket protocol in `hello`; bumped on incompatible changes.
    static let protocolVersion = 1

    let feed: any DashboardFeed
    let source: DashboardSourceDescription
    /// How many messages may wait for one page before it is dropped.
    let outboxCapacity: Int
    /// How many samples may wait for the next frame before the oldest are discarded.
    let pendingCapacity: Int

    private struct State {
        var intervalMilliseconds = DashboardLimits.defaultIntervalMilliseconds
        var running: Set<DashboardSensor>
        var referenceFrame: String?
        var filter = DashboardFilter.off
        var lowPass: Vector3?
        var orientation: String?
        /// Source errors by stream name (`"source"` for the whole source).
        var errors: [String: String] = [:]
        var pending: [DashboardSensor: [DashboardSample]] = [:]
        var pendingCount = 0
        var discarded = 0
        var clients: [UInt64: DashboardConnection] = [:]
        var nextClientID: UInt64 = 1
        var sequence: UInt64 = 0

        var configuration: DashboardFeedConfiguration {
            DashboardFeedConfiguration(
                running: clients.isEmpty ? [] : running,
                interval: Double(intervalMilliseconds) / 1000,
                referenceFrame: referenceFrame)
        }
    }

    private let state: Locked<State>
    /// The configuration last given to the feed; its lock also serialises calls to the feed.
    private let applied = Locked<DashboardFeedConfiguration?>(nil)

    /// Creates a hub over `feed`. Every available stream starts running at 20 ms once a page connects,
    /// device motion in `xMagneticNorthZVertical` when the feed offers it.
    init(feed: any DashboardFeed, outboxCapacity: Int = 64, pendingCapacity: Int = 4096) {
        self.feed = feed
        self.source = feed.sourceDescription
        self.outboxCapacity = max(1, outboxCapacity)
        self.pendingCapacity = max(1, pendingCapacity)
        let available = Set(source.streams.keys)
        // Magnetic north when the source can (the page then shows a heading), else the first frame.
        let frame = source.referenceFrames.contains("xMagneticNorthZVertical") ? "xMagneticNorthZVertical" : source.referenceFrames.first
        state = Locked(State(running: available, referenceFrame: frame))
        feed.connect { [weak self] event in self?.ingest(event) }
    }

    // MARK: pages

    /// Registers a page and queues its `hello` and `state` messages.
    func connect() -> DashboardConnection {
        let connection = state.withLock { state in
            let connection = DashboardConnection(id: state.nextClientID, capacity: outboxCapacity)
            state.nextClientID += 1
            state.clients[connection.id] = connection
            connection.continuation.yield(.text(ByteBuffer(string: encodeHello(state))))
            let stateMessage = ByteBuffer(string: encodeState(state))
            // Every page learns the new client count; the new one learns everything.
            broadcast(.text(stateMessage), in: &state)
            return connection
        }
        reconcile()
        return connection
    }

    /// Forgets a page; the last page leaving stops the feed.
    func disconnect(_ connection: DashboardConnection) {
        state.withLock { state in
            if state.clients.removeValue(forKey: connection.id) != nil {
                broadcast(.text(ByteBuffer(string: encodeState(state))), in: &state)
            }
        }
        connection.continuation.finish()
        reconcile()
    }

    /// The number of pages connected.
    var clientCount: Int { state.withLock { $0.clients.count } }

    // MARK: control

    /// Handles one text message from a page: a reply (`ack` or `error`) goes to that page, and on a
    /// change a `state` message goes to every page.
    func receive(_ text: String, from connection: DashboardConnection) {
        switch DashboardControlParser.parse(text) {
        case .failure(let error):
            send(encodeError(error), to: connection)
        case .success(let request):
            if let error = apply(request) {
                send(encodeError(error), to: connection)
            } else {
                var j = JSONText(capacity: 64)
                j.raw(#"{"type":"ack","request":"#)
                j.string(request.control.requestType)
                if let id = request.id { j.raw(#","id":"#); j.raw(id) }
                j.raw("}")
                send(j.text, to: connection)
                if request.control == .state {
                    send(state.withLock { encodeState($0) }, to: connection)
                }
            }
        }
    }

    /// Answers a binary message: the protocol is text only.
    func receiveBinary(from connection: DashboardConnection) {
        send(
            encodeError(DashboardControlError(code: .malformed, message: "binary messages are not supported; send JSON text")),
            to: connection)
    }

    /// Applies a control to the shared state; `nil` on success.
    private func apply(_ request: DashboardRequest) -> DashboardControlError? {
        let type = request.control.requestType
        let error: DashboardControlError? = state.withLock { state in
            switch request.control {
            case .interval(let ms):
                state.intervalMilliseconds = ms
            case .start(let sensor):
                guard source.streams[sensor] != nil else {
                    return DashboardControlError(
                        code: .unavailable, message: "\(sensor.rawValue) is not available on this source",
                        request: type, id: request.id)
                }
                state.running.insert(sensor)
                state.errors[sensor.rawValue] = nil
            case .stop(let sensor):
                state.running.remove(sensor)
                state.pendingCount -= state.pending.removeValue(forKey: sensor)?.count ?? 0
            case .referenceFrame(let frame):
                guard source.referenceFrames.contains(frame) else {
                    let known = source.referenceFrames.isEmpty ? "none" : source.referenceFrames.joined(separator: ", ")
                    return DashboardControlError(
                        code: .unavailable, message: "reference frame \"\(frame)\" is not available; available: \(known)",
                        request: type, id: request.id)
                }
                state.referenceFrame = frame
            case .filter(let filter):
                if filter.mode != state.filter.mode { state.lowPass = nil }
                state.filter = filter
            case .state:
                return nil
            }
            broadcast(.text(ByteBuffer(string: encodeState(state))), in: &state)
            return nil
        }
        if error == nil { reconcile() }
        return error
    }

    /// Gives the feed the configuration the state calls for, if it changed. Serialised, and always
    /// applies the latest state, so concurrent controls cannot leave an older configuration running.
    private func reconcile() {
        applied.withLock { applied in
            let wanted = state.withLock { $0.configuration }
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
        state.withLock { state in
            switch event {
            case .sample(var sample):
                guard state.running.contains(sample.sensor), !state.clients.isEmpty else { return }
                if sample.sensor == .accelerometer, state.filter.mode != .off, case .vector(let v) = sample.value {
                    let f = state.filter.factor
                    let low = state.lowPass.map { v * f + $0 * (1 - f) } ?? v
                    state.lowPass = low
                    sample.value = .vector(state.filter.mode == .lowPass ? low : v - low)
                }
                if state.pendingCount >= pendingCapacity {
                    // No frame has gone out for a long while (no ticker): keep the newest.
                    if let oldest = state.pending.max(by: { $0.value.count < $1.value.count })?.key {
                        state.pending[oldest]!.removeFirst()
                        state.pendingCount -= 1
                        state.discarded += 1
                    }
                }
                state.pending[sample.sensor, default: []].append(sample)
                state.pendingCount += 1
            case .error(let sensor, let message):
                state.errors[sensor?.rawValue ?? "source"] = message
                var j = JSONText(capacity: 128)
                j.raw(#"{"type":"sourceError","sensor":"#)
                if let sensor { j.string(sensor.rawValue) } else { j.null() }
                j.raw(#","message":"#)
                j.string(message)
                j.raw("}")
                broadcast(.text(ByteBuffer(string: j.text)), in: &state)
                broadcast(.text(ByteBuffer(string: encodeState(state))), in: &state)
            case .orientation(let orientation):
                guard orientation != state.orientation else { return }
                state.orientation = orientation
                broadcast(.text(ByteBuffer(string: encodeState(state))), in: &state)
            }
        }
    }

    // MARK: frames

    /// Sends the samples gathered since the last frame to every page, as one `samples` message
    /// encoded once. Does nothing when no sample is waiting. Called once per frame by the ticker.
    /// - Returns: the number of samples sent.
    @discardableResult
    func flush() -> Int {
        state.withLock { state in
            guard state.pendingCount > 0 else { return 0 }
            let count = state.pendingCount
            state.sequence += 1
            let message = encodeSamples(state.pending, sequence: state.sequence, count: count)
            state.pending.removeAll(keepingCapacity: true)
            state.pendingCount = 0
            broadcast(.text(ByteBuffer(string: message)), in: &state)
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

    // MARK: queues

    private func send(_ text: String, to connection: DashboardConnection) {
        state.withLock { state in
            enqueue(.text(ByteBuffer(string: text)), to: connection, in: &state)
        }
    }

    private func broadcast(_ message: DashboardOutgoing, in state: inout State) {
        for connection in state.clients.values {
            enqueue(message, to: connection, in: &state)
        }
    }

    private func enqueue(_ message: DashboardOutgoing, to connection: DashboardConnection, in state: inout State) {
        switch connection.continuation.yield(message) {
        case .enqueued:
            return
        case .dropped:
            state.clients.removeValue(forKey: connection.id)
            connection.drop(
                reason: "client too slow: more than \(outboxCapacity) messages waiting; reload to reconnect")
        case .terminated:
            state.clients.removeValue(forKey: connection.id)
        @unknown default:
            state.clients.removeValue(forKey: connection.id)
        }
    }

    // MARK: encoding

    /// The `hello` message a new page receives.
    func helloMessage() -> String { state.withLock { encodeHello($0) } }

    /// The current `state` message.
    func stateMessage() -> String { state.withLock { encodeState($0) } }

    private func encodeHello(_ state: State) -> String {
        var j = JSONText(capacity: 1024)
        j.raw(#"{"type":"hello","protocol":"#)
        j.number(Self.protocolVersion)
        j.raw(#","source":{"identifier":"#)
        j.string(source.identifier)
        j.raw(#","name":"#)
        j.string(source.name)
        j.raw(#","streams":{"#)
        for (i, sensor) in source.streams.keys.sorted().enumerated() {
            let s = source.streams[sensor]!
            if i > 0 { j.raw(",") }
            j.string(sensor.rawValue)
            j.raw(#":{"minimumRateHz":"#)
            if let v = s.minimumRate { j.number(v) } else { j.null() }
            j.raw(#","maximumRateHz":"#)
            if let v = s.maximumRate { j.number(v) } else { j.null() }
            j.raw(#","range":"#)
            if let v = s.range { j.number(v) } else { j.null() }
            j.raw("}")
        }
        j.raw(#"},"details":["#)
        for (i, (key, value)) in source.details.enumerated() {
            if i > 0 { j.raw(",") }
            j.raw("[")
            j.string(key)
            j.raw(",")
            j.string(value)
            j.raw("]")
        }
        j.raw(#"]},"referenceFrames":["#)
        for (i, frame) in source.referenceFrames.enumerated() {
            if i > 0 { j.raw(",") }
            j.string(frame)
        }
        j.raw(#"],"columns":{"accelerometer":["t","x","y","z"],"gyro":["t","x","y","z"],"#)
        j.raw(#""magnetometer":["t","x","y","z"],"deviceMotion":["t","roll","pitch","yaw","qx","qy","qz","qw","#)
        j.raw(#""gravityX","gravityY","gravityZ","userX","userY","userZ","rateX","rateY","rateZ","#)
        j.raw(#""fieldX","fieldY","fieldZ","fieldAccuracy","heading"]},"#)
        j.raw(#""units":{"accelerometer":"g","gyro":"rad/s","magnetometer":"µT","attitude":"rad","heading":"°"},"#)
        j.raw(#""limits":{"intervalMs":{"min":"#)
        j.number(DashboardLimits.minimumIntervalMilliseconds)
        j.raw(#","max":"#)
        j.number(DashboardLimits.maximumIntervalMilliseconds)
        j.raw(#","step":"#)
        j.number(DashboardLimits.intervalStepMilliseconds)
        j.raw(#"},"filterFactor":{"min":"#)
        j.number(DashboardLimits.minimumFilterFactor)
        j.raw(#","max":"#)
        j.number(DashboardLimits.maximumFilterFactor)
        j.raw(#","default":"#)
        j.number(DashboardLimits.defaultFilterFactor)
        j.raw(#"}},"outboxCapacity":"#)
        j.number(outboxCapacity)
        j.raw("}")
        return j.text
    }

    private func encodeState(_ state: State) -> String {
        var j = JSONText(capacity: 512)
        j.raw(#"{"type":"state","intervalMs":"#)
        j.number(state.intervalMilliseconds)
        j.raw(#","sensors":{"#)
        for (i, sensor) in DashboardSensor.allCases.enumerated() {
            if i > 0 { j.raw(",") }
            j.string(sensor.rawValue)
            j.raw(#":{"available":"#)
            j.bool(source.streams[sensor] != nil)
            j.raw(#","running":"#)
            j.bool(state.running.contains(sensor))
            j.raw(#","error":"#)
            if let e = state.errors[sensor.rawValue] { j.string(e) } else { j.null() }
            j.raw("}")
        }
        j.raw(#"},"sourceError":"#)
        if let e = state.errors["source"] { j.string(e) } else { j.null() }
        j.raw(#","referenceFrame":"#)
        if let f = state.referenceFrame { j.string(f) } else { j.null() }
        j.raw(#","filter":{"mode":"#)
        j.string(state.filter.mode.rawValue)
        j.raw(#","factor":"#)
        j.number(state.filter.factor)
        j.raw(#"},"orientation":"#)
        if let o = state.orientation { j.string(o) } else { j.null() }
        j.raw(#","clients":"#)
        j.number(state.clients.count)
        j.raw("}")
        return j.text
    }

    private func encodeError(_ error: DashboardControlError) -> String {
        var j = JSONText(capacity: 160)
        j.raw(#"{"type":"error","code":"#)
        j.string(error.code.rawValue)
        j.raw(#","message":"#)
        j.string(error.message)
        j.raw(#","request":"#)
        if let r = error.request { j.string(r) } else { j.null() }
        if let id = error.id { j.raw(#","id":"#); j.raw(id) }
        j.raw("}")
        return j.text
    }

    private func encodeSamples(_ pending: [DashboardSensor: [DashboardSample]], sequence: UInt64, count: Int) -> String {
        var j = JSONText(capacity: 64 + count * 80)
        j.raw(#"{"type":"samples","seq":"#)
        j.raw(String(sequence))
        for sensor in DashboardSensor.allCases {
            guard let samples = pending[sensor], !samples.isEmpty else { continue }
            j.raw(",")
            j.string(sensor.rawValue)
            j.raw(":[")
            for (i, sample) in samples.enumerated() {
                j.raw(i == 0 ? "[" : ",[")
                j.number(sample.timestamp, decimals: 6)
                switch sample.value {
                case .vector(let v):
                    Self.append(v, to: &j)
                case .deviceMotion(let m):
                    j.raw(",")
                    j.number(m.roll, decimals: 6)
                    j.raw(",")
                    j.number(m.pitch, decimals: 6)
                    j.raw(",")
                    j.number(m.yaw, decimals: 6)
                    for q in [m.quaternion.x, m.quaternion.y, m.quaternion.z, m.quaternion.w] {
                        j.raw(",")
                        j.number(q, decimals: 6)
                    }
                    Self.append(m.gravity, to: &j)
                    Self.append(m.userAcceleration, to: &j)
                    Self.append(m.rotationRate, to: &j)
                    Self.append(m.magneticField, to: &j)
                    j.raw(",")
                    j.number(m.magneticFieldAccuracy)
                    j.raw(",")
                    j.number(m.heading, decimals: 3)
                }
                j.raw("]")
            }
            j.raw("]")
        }
        j.raw("}")
        return j.text
    }

    private static func append(_ v: Vector3, to j: inout JSONText) {
        j.raw(",")
        j.number(v.x, decimals: 6)
        j.raw(",")
        j.number(v.y, decimals: 6)
        j.raw(",")
        j.number(v.z, decimals: 6)
    }
}
