#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The runtime under every source that runs its own threads (simulator, replay, IIO, evdev): the
/// threads, an interruptible sleep on a ``SourceClock`` (the monotonic clock unless a test injects one), a stop that waits for them, and a sink
/// that is never called after the stop and receives at most one terminal event.
///
/// A worker is one run of a source: create it with the run's sink (or `nil` when the source manages
/// its sink itself), ``spawn(name:realtime:_:)`` one or more loop bodies, and end it with ``stop()``.
/// Bodies call ``sleep(until:)`` between samples, which returns `false` once the worker is stopping,
/// and deliver through ``deliver(_:)`` (serialised across the worker's threads, dropped once the
/// worker has ended) and ``end(_:)`` (the first `.failed` or `.finished` goes out, then silence).
///
/// ``stop()`` waits for every body to return, so after it returns no sink call is in progress or
/// will begin, except when it is called from one of the worker's own threads (a sink that stops its
/// own source), where waiting would deadlock: it then only raises the flag, and the thread is
/// detached.
///
/// ## Threading
/// Every method may be called from any thread, any number of times.
package final class SourceWorker: Sendable {
    /// The sink of a run.
    package typealias Sink = @Sendable (SourceEvent) -> Void

    private struct State {
        var stopping = false
        /// Threads not yet joined or detached.
        var threads: [pthread_t] = []
        /// Bodies that have not returned.
        var running = 0
        /// Threads that could not be created.
        var failedSpawns = 0
    }

    private let state: ConditionLocked<State>
    /// Calls the run's sink: serialised, silent once the worker has stopped, at most one terminal event.
    private let gate: SinkGate

    /// The clock ``sleep(until:)`` follows.
    package var clock: any SourceClock { state.clock }

    /// Creates a worker delivering to `sink`; no thread runs until ``spawn(name:realtime:_:)``.
    /// ``sleep(until:)`` follows `clock` (default: the real one, `CLOCK_MONOTONIC`).
    package init(sink: Sink? = nil, clock: any SourceClock = MonotonicSourceClock.shared) {
        gate = SinkGate(sink: sink)
        state = ConditionLocked(State(), clock: clock)
    }

    /// Creates a worker and runs `body` on one thread. If the thread cannot be created, ``started``
    /// is `false`.
    package convenience init(name: String = "source", clock: any SourceClock = MonotonicSourceClock.shared,
                             body: @escaping @Sendable (SourceWorker) -> Void) {
        self.init(sink: nil, clock: clock)
        spawn(name: name, body)
    }

    deinit {
        // Threads never joined (their run ended on its own): let the system reclaim them.
        state.withLock { s in
            for thread in s.threads { pthread_detach(thread) }
            s.threads = []
        }
    }

    private final class Start {
        let worker: SourceWorker
        let body: @Sendable (SourceWorker) -> Void
        init(worker: SourceWorker, body: @escaping @Sendable (SourceWorker) -> Void) {
            self.worker = worker
            self.body = body
        }
    }

    /// Runs `body` on a new thread. With `realtime`, the thread asks for `SCHED_FIFO` at a low priority
    /// (5) so a loaded machine does not delay sample delivery; without the privilege (`CAP_SYS_NICE`)
    /// it keeps the normal policy. Only threads that sleep in `poll` or ``sleep(until:)`` should ask.
    ///
    /// - Returns: `false` when no thread could be created (the body does not run).
    @discardableResult
    package func spawn(name: String = "source", realtime: Bool = false, _ body: @escaping @Sendable (SourceWorker) -> Void) -> Bool {
        let box = Unmanaged.passRetained(Start(worker: self, body: body))
        return state.withLock { s in
            var thread = pthread_t()
            let rc = pthread_create(&thread, nil, { raw in
                guard let raw else { return nil }
                let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
                start.body(start.worker)
                start.worker.bodyReturned()
                return nil
            }, box.toOpaque())
            guard rc == 0 else {
                box.release()
                s.failedSpawns += 1
                return false
            }
            s.threads.append(thread)
            s.running += 1
            if realtime {
                var parameters = sched_param()
                parameters.sched_priority = 5
                _ = pthread_setschedparam(thread, SCHED_FIFO, &parameters)
            }
            return true
        }
    }

    private func bodyReturned() {
        state.withLock(broadcasting: true) { $0.running -= 1 }
    }

    /// Whether every thread asked for could be created.
    package var started: Bool { state.withLock { $0.failedSpawns == 0 } }

    /// `true` once ``stop()`` or ``requestStop()`` has been called or a terminal event was delivered.
    package var isStopping: Bool { state.withLock { $0.stopping } }

    /// `true` when called on one of the worker's threads.
    package var isCurrentThread: Bool {
        let me = pthread_self()
        return state.withLock { s in s.threads.contains { pthread_equal($0, me) != 0 } }
    }

    /// Sleeps until `deadline` (seconds on ``clock``) or until the worker stops.
    /// - Returns: `true` if the deadline was reached, `false` if the worker is stopping.
    package func sleep(until deadline: Double) -> Bool {
        let clock = state.clock
        return state.withLock(waiting: { s in
            if s.stopping { return .done(false) }
            return clock.now() < deadline ? .waitUntil(deadline) : .done(true)
        })
    }

    /// Delivers samples in order, unless the worker has ended.
    package func deliver(_ samples: some Sequence<RawSample>) {
        gate.deliver(samples)
    }

    /// Delivers one event. A terminal one (`.failed`, `.finished`) ends the worker: it goes out only if
    /// nothing ended the worker before, and nothing goes out after it; other threads see
    /// ``isStopping``.
    /// - Returns: whether the event was delivered (without a sink: whether it was the first to end the worker).
    @discardableResult
    package func end(_ event: SourceEvent) -> Bool {
        let first = gate.end(event)
        if first { state.withLock(broadcasting: true) { $0.stopping = true } }
        return first
    }

    /// Delivers a non-terminal event (`.interrupted`), unless the worker has ended.
    package func send(_ event: SourceEvent) {
        gate.deliver(event)
    }

    /// Asks the bodies to end without waiting for them: sleeps return `false`, deliveries stop.
    package func requestStop() {
        gate.close(waiting: false)
        state.withLock(broadcasting: true) { $0.stopping = true }
    }

    /// Waits until every body has returned and reclaims the threads. From one of the worker's own
    /// threads it waits for the others only, and detaches its own.
    package func join() {
        let me = pthread_self()
        let (others, own) = state.withLock { s -> ([pthread_t], pthread_t?) in
            let own = s.threads.first { pthread_equal($0, me) != 0 }
            let others = s.threads.filter { pthread_equal($0, me) == 0 }
            s.threads = []
            return (others, own)
        }
        for thread in others { pthread_join(thread, nil) }
        if let own { pthread_detach(own) }
    }

    /// Asks the bodies to end and waits until they have (see ``join()``).
    package func stop() {
        requestStop()
        join()
    }
}
