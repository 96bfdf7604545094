#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One background thread that a source runs its loop on, with an interruptible sleep on the
/// monotonic clock and a stop that waits for the loop to end.
///
/// The loop body calls ``sleep(until:)`` between samples; it returns `false` once ``stop()`` was
/// called, and the body must then return. ``stop()`` waits for the body to return, so after it
/// returns the body runs no more, except when ``stop()`` is called from the worker's own thread
/// (a sink that stops its own source), where waiting would deadlock: it then only raises the flag.
///
/// ## Threading
/// ``stop()`` may be called from any thread, any number of times. ``sleep(until:)`` and
/// ``isStopping`` are for the body.
public final class SourceWorker: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = ConditionLock()
    private var stopping = false
    private var finished = false
    private var thread: pthread_t?

    /// Starts `body` on a new thread. If no thread can be created the worker is born finished and
    /// ``started`` is `false`.
    public init(body: @escaping @Sendable (SourceWorker) -> Void) {
        let box = Unmanaged.passRetained(Start(worker: self, body: body))
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            start.body(start.worker)
            start.worker.markFinished()
            return nil
        }, box.toOpaque())
        lock.lock()
        if rc == 0 {
            thread = tid
        } else {
            box.release()
            finished = true
        }
        lock.unlock()
    }

    private final class Start {
        let worker: SourceWorker
        let body: @Sendable (SourceWorker) -> Void
        init(worker: SourceWorker, body: @escaping @Sendable (SourceWorker) -> Void) {
            self.worker = worker
            self.body = body
        }
    }

    /// Whether the thread could be created.
    public var started: Bool {
        lock.lock()
        defer { lock.unlock() }
        return thread != nil || !finished
    }

    private func markFinished() {
        lock.lock()
        finished = true
        lock.broadcast()
        lock.unlock()
    }

    /// `true` once ``stop()`` has been called.
    public var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    /// Sleeps until `deadline` (seconds on ``MonotonicClock``) or until ``stop()``.
    /// - Returns: `true` if the deadline was reached, `false` if the worker is stopping.
    public func sleep(until deadline: Double) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while !stopping && MonotonicClock.now() < deadline {
            lock.wait(until: deadline)
        }
        return !stopping
    }

    /// Asks the body to end and waits until it has, unless called from the worker's own thread.
    public func stop() {
        lock.lock()
        stopping = true
        lock.broadcast()
        let own = thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        var joinable: pthread_t?
        if own {
            thread = nil
        } else {
            while !finished { lock.wait() }
            joinable = thread
            thread = nil
        }
        lock.unlock()
        if let joinable { pthread_join(joinable, nil) }
        if own { pthread_detach(pthread_self()) }
    }
}
