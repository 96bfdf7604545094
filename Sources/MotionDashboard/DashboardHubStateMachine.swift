import DequeModule
import MotionFusion

/// The dashboard's shared state and routing as a state machine: every input (a page connects or
/// leaves, a control arrives, the feed reports, a frame is due) changes the state and returns the
/// messages to send and to whom. It does no I/O and takes no lock; ``DashboardHub`` owns one, performs
/// its actions and gives the feed ``configuration``. This is the shape of swift-nio's state machines:
/// the logic is tested by feeding inputs and reading actions.
struct DashboardHubStateMachine: Sendable {
    /// Who a message goes to.
    enum Recipients: Equatable, Sendable {
        /// Every page connected.
        case all
        /// One page, by its id.
        case page(UInt64)
    }

    /// What the owner must do after an input, in order.
    enum Action: Sendable {
        /// Encode the message once and queue it for the recipients.
        case send(DashboardServerMessage, to: Recipients)
    }

    /// Version of the WebSocket protocol in `hello`; bumped on incompatible changes.
    static let protocolVersion = 1

    let source: DashboardSourceDescription
    /// How many messages may wait for one page before it is dropped (sent in `hello`).
    let outboxCapacity: Int
    /// How many samples may wait for the next frame before the oldest are discarded.
    let pendingCapacity: Int

    private(set) var intervalMilliseconds = DashboardLimits.defaultIntervalMilliseconds
    private(set) var running: Set<DashboardSensor>
    private(set) var referenceFrame: String?
    private(set) var filter = DashboardFilter.off
    private var lowPass: Vector3?
    private(set) var orientation: String?
    /// Source errors by stream name (`"source"` for the whole source).
    private var errors: [String: String] = [:]
    /// Samples waiting for the next frame, per sensor. A deque: with no ticker flushing, each new sample
    /// drops the oldest, which an array did by moving every other one (quadratic exactly when starved).
    private var pending: [DashboardSensor: Deque<DashboardSample>] = [:]
    private(set) var pendingCount = 0
    /// Samples discarded because no frame went out for too long.
    private(set) var discarded = 0
    private(set) var clients: Set<UInt64> = []
    /// The devices of a multi-device source, as the feed last reported them.
    private(set) var devices: [DashboardDevice] = []
    /// The device shown, as the feed reports it or a page picked it.
    private(set) var device: String?
    /// The device a page picked; `nil` leaves the choice to the feed.
    private(set) var requestedDevice: String?
    private var nextClientID: UInt64 = 1
    private var sequence: UInt64 = 0

    /// Every available stream runs at 20 ms once a page connects, device motion in
    /// `xMagneticNorthZVertical` when the source offers it (the page then shows a heading), else in
    /// the first frame offered.
    init(source: DashboardSourceDescription, outboxCapacity: Int, pendingCapacity: Int) {
        self.source = source
        self.outboxCapacity = max(1, outboxCapacity)
        self.pendingCapacity = max(1, pendingCapacity)
        running = Set(source.streams.keys)
        referenceFrame = source.referenceFrames.contains("xMagneticNorthZVertical")
            ? "xMagneticNorthZVertical" : source.referenceFrames.first
    }

    /// What the feed should run: nothing while no page is connected.
    var configuration: DashboardFeedConfiguration {
        DashboardFeedConfiguration(
            running: clients.isEmpty ? [] : running,
            interval: Double(intervalMilliseconds) / 1000,
            referenceFrame: referenceFrame,
            device: requestedDevice)
    }

    // MARK: pages

    /// A page connects: it gets `hello`, and every page (it included) the new `state`.
    mutating func connect() -> (id: UInt64, actions: [Action]) {
        let id = nextClientID
        nextClientID += 1
        clients.insert(id)
        return (id, [.send(.hello(hello), to: .page(id)), .send(.state(state), to: .all)])
    }

    /// A page left: the others learn the new client count.
    mutating func disconnect(_ id: UInt64) -> [Action] {
        guard clients.remove(id) != nil else { return [] }
        return [.send(.state(state), to: .all)]
    }

    /// A page's queue was full or closed when a message was queued: it is forgotten at once, without
    /// a message (its owner closes it with the reason).
    mutating func dropped(_ id: UInt64) {
        clients.remove(id)
    }

    // MARK: control

    /// A control message from page `id`, parsed: on success every page gets the new `state` (unless
    /// nothing changes) and the sender an `ack` (and a `state` when it asked for one); on failure the
    /// sender gets an `error` and nothing changes.
    mutating func receive(_ parsed: Result<DashboardRequest, DashboardControlError>, from id: UInt64) -> [Action] {
        let request: DashboardRequest
        switch parsed {
        case .failure(let error): return [.send(.error(.init(error)), to: .page(id))]
        case .success(let r): request = r
        }
        let type = request.control.requestType
        switch request.control {
        case .interval(let ms):
            intervalMilliseconds = ms
        case .start(let sensor):
            guard source.streams[sensor] != nil else {
                return [.send(.error(.init(DashboardControlError(
                    code: .unavailable, message: "\(sensor.rawValue) is not available on this source",
                    request: type, id: request.id))), to: .page(id))]
            }
            running.insert(sensor)
            errors[sensor.rawValue] = nil
        case .stop(let sensor):
            running.remove(sensor)
            pendingCount -= pending.removeValue(forKey: sensor)?.count ?? 0
        case .referenceFrame(let frame):
            guard source.referenceFrames.contains(frame) else {
                let known = source.referenceFrames.isEmpty ? "none" : source.referenceFrames.joined(separator: ", ")
                return [.send(.error(.init(DashboardControlError(
                    code: .unavailable, message: "reference frame \"\(frame)\" is not available; available: \(known)",
                    request: type, id: request.id))), to: .page(id))]
            }
            referenceFrame = frame
        case .device(let name):
            guard devices.contains(where: { $0.id == name }) else {
                let known = devices.isEmpty ? "none heard yet" : devices.map(\.id).joined(separator: ", ")
                return [.send(.error(.init(DashboardControlError(
                    code: .unavailable, message: "device \"\(name)\" is not available; devices: \(known)",
                    request: type, id: request.id))), to: .page(id))]
            }
            requestedDevice = name
            device = name
        case .filter(let newFilter):
            if newFilter.mode != filter.mode { lowPass = nil }
            filter = newFilter
        case .state:
            return [.send(.ack(.init(request: type, id: request.id)), to: .page(id)), .send(.state(state), to: .page(id))]
        }
        return [.send(.state(state), to: .all), .send(.ack(.init(request: type, id: request.id)), to: .page(id))]
    }

    // MARK: feed events

    /// An event from the feed: samples of running streams wait for the next frame (the accelerometer's
    /// through the filter); errors and orientation changes go to every page at once.
    mutating func ingest(_ event: DashboardFeedEvent) -> [Action] {
        switch event {
        case .sample(var sample):
            guard running.contains(sample.sensor), !clients.isEmpty else { return [] }
            if sample.sensor == .accelerometer, filter.mode != .off, case .vector(let v) = sample.value {
                let f = filter.factor
                let low = lowPass.map { v * f + $0 * (1 - f) } ?? v
                lowPass = low
                sample.value = .vector(filter.mode == .lowPass ? low : v - low)
            }
            if pendingCount >= pendingCapacity,
                let fullest = pending.max(by: { $0.value.count < $1.value.count })?.key,
                pending[fullest]?.isEmpty == false
            {
                // No frame has gone out for a long while (no ticker): keep the newest.
                pending[fullest]?.removeFirst()
                pendingCount -= 1
                discarded += 1
            }
            pending[sample.sensor, default: []].append(sample)
            pendingCount += 1
            return []
        case .error(let sensor, let message):
            errors[sensor?.rawValue ?? "source"] = message
            return [
                .send(.sourceError(.init(sensor: Nullable(sensor?.rawValue), message: message)), to: .all),
                .send(.state(state), to: .all),
            ]
        case .orientation(let new):
            guard new != orientation else { return [] }
            orientation = new
            return [.send(.state(state), to: .all)]
        case .devices(let list, let selected):
            guard list != devices || selected != device else { return [] }
            devices = list
            device = selected
            return [.send(.state(state), to: .all)]
        }
    }

    // MARK: frames

    /// A frame is due: the samples gathered since the last one go to every page as one `samples`
    /// message. Nothing when none waits.
    mutating func flush() -> (count: Int, actions: [Action]) {
        guard pendingCount > 0 else { return (0, []) }
        let count = pendingCount
        sequence += 1
        let message = DashboardServerMessage.Samples(seq: sequence, rows: pending.mapValues { Array($0) })
        pending.removeAll(keepingCapacity: true)
        pendingCount = 0
        return (count, [.send(.samples(message), to: .all)])
    }

    // MARK: messages

    /// The `hello` message.
    var hello: DashboardServerMessage.Hello {
        typealias H = DashboardServerMessage.Hello
        var streams: [String: H.Stream] = [:]
        for (sensor, s) in source.streams {
            streams[sensor.rawValue] = H.Stream(
                minimumRateHz: Nullable(finite: s.minimumRate), maximumRateHz: Nullable(finite: s.maximumRate),
                range: Nullable(finite: s.range))
        }
        var columns: [String: [String]] = [:]
        for sensor in DashboardSensor.allCases { columns[sensor.rawValue] = sensor.columns }
        return H(
            protocol: Self.protocolVersion,
            source: H.Source(
                identifier: source.identifier, name: source.name, streams: streams,
                details: source.details.map { [$0.0, $0.1] }),
            referenceFrames: source.referenceFrames,
            columns: columns,
            units: DashboardSensor.units,
            limits: H.Limits(
                intervalMs: H.IntervalLimits(
                    min: DashboardLimits.minimumIntervalMilliseconds, max: DashboardLimits.maximumIntervalMilliseconds,
                    step: DashboardLimits.intervalStepMilliseconds),
                filterFactor: H.FactorLimits(
                    min: DashboardLimits.minimumFilterFactor, max: DashboardLimits.maximumFilterFactor,
                    default: DashboardLimits.defaultFilterFactor)),
            outboxCapacity: outboxCapacity)
    }

    /// The `state` message.
    var state: DashboardServerMessage.State {
        typealias S = DashboardServerMessage.State
        var sensors: [String: S.Sensor] = [:]
        for sensor in DashboardSensor.allCases {
            sensors[sensor.rawValue] = S.Sensor(
                available: source.streams[sensor] != nil, running: running.contains(sensor),
                error: Nullable(errors[sensor.rawValue]))
        }
        return S(
            intervalMs: intervalMilliseconds, sensors: sensors, sourceError: Nullable(errors["source"]),
            referenceFrame: Nullable(referenceFrame), filter: S.Filter(mode: filter.mode.rawValue, factor: filter.factor),
            orientation: Nullable(orientation), clients: clients.count,
            devices: devices, device: Nullable(device))
    }
}
