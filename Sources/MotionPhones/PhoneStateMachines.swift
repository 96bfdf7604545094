/// When to report that a phone went silent, and when it came back.
///
/// A pure state machine on host time (seconds since boot). A listening source arms it at the first
/// datum (the user may take a while to type the address into the app); a connecting source arms it at
/// start, so a phone that cannot be reached is reported too.
package struct SilenceMonitor: Sendable, Hashable {
    /// Seconds without data after which silence is reported.
    package var limit: Double
    /// Host time of the last datum (or of arming), `nil` before arming.
    package private(set) var lastHeard: Double?
    /// Whether silence was reported and no datum came since.
    package private(set) var isSilent = false

    /// Creates a monitor with a silence limit in seconds.
    package init(limit: Double) { self.limit = limit }

    /// Arms the monitor at `now` without a datum (a connecting source starting).
    package mutating func arm(now: Double) {
        lastHeard = now
        isSilent = false
    }

    /// Disarms it (the source stopped).
    package mutating func disarm() {
        lastHeard = nil
        isSilent = false
    }

    /// A datum arrived at `now`. Returns `true` when it ends a reported silence.
    package mutating func heard(now: Double) -> Bool {
        lastHeard = now
        defer { isSilent = false }
        return isSilent
    }

    /// Time passed. Returns `true` exactly once per silence: when `limit` seconds passed without data.
    package mutating func tick(now: Double) -> Bool {
        guard let last = lastHeard, !isSilent, now - last >= limit else { return false }
        isSilent = true
        return true
    }
}

/// Connection life cycle of a source that connects to the phone, with exponential backoff.
///
/// A pure state machine: each event returns the action the caller performs (connect now, wait, or
/// nothing). Delays start at ``initialDelay`` and double per failed attempt up to ``maximumDelay``;
/// a connection that delivered data resets them.
package struct ReconnectMachine: Sendable, Hashable {
    /// What the caller does next.
    package enum Action: Sendable, Hashable {
        /// Open a connection now.
        case connect
        /// Call ``timerFired()`` after this many seconds.
        case wait(Double)
        /// Close the connection, if any, and do nothing more.
        case close
        /// Nothing.
        case none
    }

    /// The states.
    package enum State: Sendable, Hashable {
        case idle, connecting, connected, waiting, stopped
    }

    /// Seconds before the first retry (default 0.25).
    package var initialDelay: Double
    /// The longest wait between attempts (default 5).
    package var maximumDelay: Double
    /// The current state.
    package private(set) var state: State = .idle
    /// Failed attempts since the last good connection.
    package private(set) var failures = 0

    /// Creates a machine.
    package init(initialDelay: Double = 0.25, maximumDelay: Double = 5) {
        self.initialDelay = initialDelay
        self.maximumDelay = max(initialDelay, maximumDelay)
    }

    /// Starts connecting.
    package mutating func start() -> Action {
        guard state == .idle else { return .none }
        state = .connecting
        return .connect
    }

    /// The connection is up.
    package mutating func connected() -> Action {
        guard state == .connecting else { return state == .stopped ? .close : .none }
        state = .connected
        return .none
    }

    /// Data came over the connection: the next loss retries quickly.
    package mutating func receivedData() {
        failures = 0
    }

    /// An attempt failed, or the connection closed.
    package mutating func disconnected() -> Action {
        guard state == .connecting || state == .connected else { return .none }
        let delay = min(initialDelay * Double(1 << min(failures, 20)), maximumDelay)
        failures += 1
        state = .waiting
        return .wait(delay)
    }

    /// The wait is over.
    package mutating func timerFired() -> Action {
        guard state == .waiting else { return .none }
        state = .connecting
        return .connect
    }

    /// Stops for good.
    package mutating func stop() -> Action {
        let wasActive = state == .connecting || state == .connected
        state = .stopped
        return wasActive ? .close : .none
    }
}
