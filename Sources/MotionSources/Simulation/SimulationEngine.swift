#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The worker of a ``SimulatedDevice``: one background thread at most, driven through a
/// generation-counted handshake under a ``ConditionLock``.
///
/// `apply` publishes a new configuration (generation n); the worker only calls the sink outside the
/// lock and re-checks the generation before every call, so no call with an older configuration
/// begins after `apply` returns. A stop waits until the worker acknowledges it and exits, so no call
/// is in progress either when it returns. The simulator state lives in `parked` while no worker
/// runs, and is owned by the worker (a local copy) while it does.
final class SimulationEngine: @unchecked Sendable {
    typealias Sink = @Sendable (SourceEvent) -> Void

    /// Immutable: safe to read from any thread.
    let model: MotionModel
    let realTime: Bool
    /// A backlog older than this (seconds) is dropped in real-time mode.
    static let maximumBacklog = 1.0

    private let lock = ConditionLock()
    // Everything below is guarded by `lock`.
    private var parked: MotionSimulator
    private var rates: [SensorKind: Double] = [:]
    private var sink: Sink?
    private var generation: UInt64 = 0
    private var acknowledged: UInt64 = 0
    private var workerAlive = false
    private var worker: pthread_t?

    init(options: SimulationOptions, startTime: Double, realTime: Bool) {
        var o = options
        o.rates = [:]
        parked = MotionSimulator(options: o, startTime: startTime)
        model = parked.model
        self.realTime = realTime
    }

    /// Publishes a configuration. For an empty one (stop), and unless called from the worker itself,
    /// waits until the worker has exited, so the sink is never called again; a non-empty one is
    /// adopted by the worker before its next sink call, without waiting.
    ///
    /// - Returns: `false` when the worker thread could not be created (the engine is then stopped).
    @discardableResult
    func apply(_ newRates: [SensorKind: Double], sink newSink: Sink?) -> Bool {
        lock.lock()
        generation &+= 1
        let mine = generation
        rates = newRates
        sink = newSink
        if !newRates.isEmpty && !workerAlive {
            guard let thread = spawn() else {
                rates = [:]
                sink = nil
                lock.unlock()
                return false
            }
            workerAlive = true
            worker = thread
        }
        lock.broadcast()
        let onWorker = worker.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        if !onWorker && newRates.isEmpty {
            while workerAlive && acknowledged < mine { lock.wait() }
        }
        lock.unlock()
        return true
    }

    private func spawn() -> pthread_t? {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let engine = Unmanaged<SimulationEngine>.fromOpaque(raw!).takeRetainedValue()
            engine.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<SimulationEngine>.fromOpaque(context).release()
            return nil
        }
        pthread_detach(thread)
        return thread
    }

    /// The worker loop. Holds the lock except while generating and delivering a sample.
    private func run() {
        lock.lock()
        var simulator = parked
        var seen: UInt64 = 0
        var currentSink: Sink?
        var first = true
        while true {
            if generation != seen {
                seen = generation
                if rates.isEmpty {
                    parked = simulator
                    acknowledged = seen
                    workerAlive = false
                    worker = nil
                    lock.broadcast()
                    lock.unlock()
                    return
                }
                currentSink = sink
                if realTime {
                    // A fresh start reschedules every sensor from now; a re-rate keeps unchanged ones.
                    simulator.setRates(rates, from: MonotonicClock.now(), keepUnchanged: !first)
                } else {
                    simulator.setRates(rates, from: max(simulator.lastTimestamp, model.startTime))
                }
                first = false
                acknowledged = seen
                lock.broadcast()
            }
            guard let due = simulator.nextTimestamp, let deliver = currentSink else {
                lock.wait()
                continue
            }
            if realTime {
                let now = MonotonicClock.now()
                if now < due {
                    lock.wait(until: due)
                    continue
                }
                if now - due > Self.maximumBacklog {
                    simulator.setRates(rates, from: now, keepUnchanged: false)
                    continue
                }
            }
            lock.unlock()
            let sample = simulator.next()
            deliver(.sample(sample))
            lock.lock()
        }
    }
}
