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
    /// A backlog older than this (seconds) is dropped in real-time mode.
    static let maximumBacklog = 1.0

    private struct State {
        var parked: MotionSimulator
        var rates: [SensorKind: Double] = [:]
        /// Seconds a sample may wait so that several are delivered per wake-up (real time only).
        var latency = 0.0
        var sink: Sink?
        var generation: UInt64 = 0
        var acknowledged: UInt64 = 0
        /// The running worker, `nil` when none runs.
        var worker: SourceWorker?
    }

    private let state: ConditionLocked<State>

    init(options: SimulationOptions, startTime: Double, realTime: Bool) {
        var o = options
        o.rates = [:]
        let parked = MotionSimulator(options: o, startTime: startTime)
        model = parked.model
        state = ConditionLocked(State(parked: parked))
        self.realTime = realTime
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
            if !newRates.isEmpty && s.worker == nil {
                let worker = SourceWorker(sink: nil)
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
        while true {
            let next = state.withLock(waiting: { s -> LockStep<Next> in
                while true {
                    if s.generation != seen {
                        seen = s.generation
                        if s.rates.isEmpty {
                            s.parked = simulator
                            s.acknowledged = seen
                            if s.worker === worker { s.worker = nil }
                            state.broadcast()
                            return .done(.exit)
                        }
                        currentSink = s.sink
                        if realTime {
                            // A fresh start reschedules every sensor from now; a re-rate keeps unchanged ones.
                            simulator.setRates(s.rates, from: MonotonicClock.now(), keepUnchanged: !first)
                        } else {
                            simulator.setRates(s.rates, from: max(simulator.lastTimestamp, model.startTime))
                        }
                        first = false
                        s.acknowledged = seen
                        state.broadcast()
                    }
                    guard let due = simulator.nextTimestamp, let deliver = currentSink else { return .wait }
                    if realTime {
                        let now = MonotonicClock.now()
                        // Sleep until the next sample is due, or, with a latency allowed, until it has
                        // waited that long; then every sample due by then goes out in one wake-up.
                        if now < due { return .waitUntil(due + s.latency) }
                        if now - due > Self.maximumBacklog {
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
}
