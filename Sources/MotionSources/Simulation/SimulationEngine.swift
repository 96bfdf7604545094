#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The worker of a ``SimulatedDevice``: one ``SourceWorker`` thread at most, driven through a
/// generation-counted handshake under a ``ConditionLocked``.
///
/// `apply` publishes a new configuration (generation n); the worker only calls the sink outside the
/// lock and re-checks the generation before every call, so no call with an older configuration
/// begins after `apply` returns. A stop waits until the worker acknowledges it and exits, so no call
/// is in progress either when it returns. The simulator state lives in `parked` while no worker
/// runs, and is owned by the worker (a local copy) while it does.
final class SimulationEngine: Sendable {
    typealias Sink = @Sendable (SourceEvent) -> Void

    /// Immutable: safe to read from any thread.
    let model: MotionModel
    let realTime: Bool
    /// A backlog older than this (seconds) beyond the demand's latency is dropped in real-time mode
    /// (the worker was starved that long: the samples restart from now rather than flood).
    static let maximumBacklog = 1.0

    private struct State {
        var parked: MotionSimulator
        var rates: [SensorKind: Double] = [:]
        /// Seconds a sample may wait so that several are delivered per wake-up (real time only).
        var latency = 0.0
        var sink: Sink?
        /// Set by a stop asked from another thread (real time): the instant up to which the samples
        /// already due are still delivered before the worker exits (those held back by `latency`).
        var drainUntil: Double?
        /// When the last non-empty configuration was applied (real time): new sensors start there, not
        /// when the worker gets to run, so a stream has every sample from the `apply` on.
        var appliedAt = 0.0
        var generation: UInt64 = 0
        var acknowledged: UInt64 = 0
        /// The running worker, `nil` when none runs.
        var worker: SourceWorker?
    }

    private let state: ConditionLocked<State>

    /// The clock real-time pacing follows.
    let clock: any SourceClock

    init(options: SimulationOptions, startTime: Double, realTime: Bool, clock: any SourceClock = MonotonicSourceClock.shared) {
        var o = options
        o.rates = [:]
        let parked = MotionSimulator(options: o, startTime: startTime)
        model = parked.model
        state = ConditionLocked(State(parked: parked), clock: clock)
        self.realTime = realTime
        self.clock = clock
    }

    /// Publishes a configuration. For an empty one (stop), and unless called from the worker itself,
    /// waits until the worker has exited, so the sink is never called again; a non-empty one is
    /// adopted by the worker before its next sink call, without waiting.
    ///
    /// - Returns: `false` when the worker thread could not be created (the engine is then stopped).
    @discardableResult
    func apply(_ newRates: [SensorKind: Double], sink newSink: Sink?, latency newLatency: Double = 0) -> Bool {
        let outcome = state.withLock(broadcasting: true) { s -> (mine: UInt64, worker: SourceWorker?)? in
            s.generation &+= 1
            s.rates = newRates
            s.latency = newLatency
            s.sink = newSink
            // A stop from outside the sink still delivers what was already sampled: with a latency
            // allowed, up to that many seconds of due samples wait in the worker, and dropping them
            // would cut the end off every stream (`publish --duration 10` sent 990 of 1000 per sensor).
            if realTime && !newRates.isEmpty { s.appliedAt = clock.now() }
            s.drainUntil = newRates.isEmpty && realTime && s.worker.map({ !$0.isCurrentThread }) == true ? clock.now() : nil
            if !newRates.isEmpty && s.worker == nil {
                let worker = SourceWorker(sink: nil, clock: clock)
                s.worker = worker
                guard worker.spawn(name: "simulator", { [self] worker in run(worker) }) else {
                    s.rates = [:]
                    s.sink = nil
                    s.worker = nil
                    return nil
                }
            }
            return (s.generation, s.worker)
        }
        guard let outcome else { return false }
        if newRates.isEmpty, let worker = outcome.worker, !worker.isCurrentThread {
            _ = state.wait { s in s.worker == nil || s.acknowledged >= outcome.mine ? () : nil }
            worker.join()
        }
        return true
    }

    private enum Next {
        case exit
        case deliver(Sink)
    }

    /// The worker loop. Holds the lock except while generating and delivering a sample.
    private func run(_ worker: SourceWorker) {
        var simulator = state.withLock { $0.parked }
        var seen: UInt64 = 0
        var currentSink: Sink?
        var first = true
        /// While stopping: deliver the samples due up to this instant, then exit.
        var draining: Double?
        /// With a latency: the instant of the wake-up whose burst is going out (every sample due by then).
        var burst = -Double.infinity
        while true {
            let next = state.withLock(waiting: { s -> LockStep<Next> in
                while true {
                    if s.generation != seen {
                        seen = s.generation
                        draining = nil
                        if s.rates.isEmpty {
                            guard let until = s.drainUntil, currentSink != nil else { return .done(park(&s, simulator, worker)) }
                            draining = until
                        } else {
                            currentSink = s.sink
                            if realTime {
                                // A fresh start reschedules every sensor from the apply; a re-rate keeps unchanged ones.
                                simulator.setRates(s.rates, from: s.appliedAt, keepUnchanged: !first)
                            } else {
                                simulator.setRates(s.rates, from: max(simulator.lastTimestamp, model.startTime))
                            }
                            first = false
                            s.acknowledged = seen
                            state.broadcast()
                        }
                    }
                    if let until = draining {
                        guard let due = simulator.nextTimestamp, due <= until, let deliver = currentSink else {
                            return .done(park(&s, simulator, worker))
                        }
                        return .done(.deliver(deliver))
                    }
                    guard let due = simulator.nextTimestamp, let deliver = currentSink else { return .wait }
                    if realTime {
                        let now = clock.now()
                        // Sleep until the next sample is due, or, with a latency allowed, until it has
                        // waited that long; then every sample due by then goes out in one wake-up.
                        // A wake-up before that (another thread's broadcast, a clock that moved) sends
                        // nothing: only the deadline starts a burst.
                        if now < due || (due > burst && now < due + s.latency) { return .waitUntil(due + s.latency) }
                        if due > burst { burst = now }
                        // The backlog counts from when the sample was meant to go out: a sample held
                        // back by the latency on purpose is not late.
                        if now - due > s.latency + Self.maximumBacklog {
                            simulator.setRates(s.rates, from: now, keepUnchanged: false)
                            continue
                        }
                    }
                    return .done(.deliver(deliver))
                }
            })
            switch next {
            case .exit:
                return
            case .deliver(let deliver):
                let sample = simulator.next()
                deliver(.sample(sample))
            }
        }
    }

    /// Parks the simulator state, acknowledges the stop and releases the engine (under the lock).
    private func park(_ s: inout State, _ simulator: MotionSimulator, _ worker: SourceWorker) -> Next {
        s.parked = simulator
        s.acknowledged = s.generation
        if s.worker === worker { s.worker = nil }
        state.broadcast()
        return .exit
    }
}
