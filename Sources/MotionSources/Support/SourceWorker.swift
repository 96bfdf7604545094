#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

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
    // The pthread primitives are only touched under `mutex`, or before the thread starts.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var stopping = false
    private var finished = false
    private var thread: pthread_t?

    /// Starts `body` on a new thread; `name` identifies it in diagnostics.
    public init(name: String, body: @escaping @Sendable (SourceWorker) -> Void) {
        pthread_mutex_init(&mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attr)
        pthread_condattr_destroy(&attr)

        let box = Unmanaged.passRetained(Start(worker: self, name: name, body: body))
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            start.run()
            return nil
        }, box.toOpaque())
        if rc == 0 {
            thread = tid
        } else {
            box.release()
            finished = true
        }
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    private final class Start {
        let worker: SourceWorker
        let name: String
        let body: @Sendable (SourceWorker) -> Void
        init(worker: SourceWorker, name: String, body: @escaping @Sendable (SourceWorker) -> Void) {
            self.worker = worker
            self.name = name
            self.body = body
        }
        func run() {
            body(worker)
            worker.markFinished()
        }
    }

    private func markFinished() {
        pthread_mutex_lock(&mutex)
        finished = true
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// `true` once ``stop()`` has been called.
    public var isStopping: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return stopping
    }

    /// Sleeps until `deadline` (seconds on ``MonotonicClock``) or until ``stop()``.
    /// - Returns: `true` if the deadline was reached, `false` if the worker is stopping.
    public func sleep(until deadline: Double) -> Bool {
        var ts = timespec()
        let whole = deadline.rounded(.down)
        ts.tv_sec = Int(whole)
        ts.tv_nsec = Int((deadline - whole) * 1e9)
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while !stopping {
            let rc = pthread_cond_timedwait(&condition, &mutex, &ts)
            if rc == ETIMEDOUT { return !stopping }
        }
        return false
    }

    /// Asks the body to end and waits until it has, unless called from the worker's own thread.
    public func stop() {
        pthread_mutex_lock(&mutex)
        stopping = true
        pthread_cond_broadcast(&condition)
        let own = thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        if !own {
            while !finished { pthread_cond_wait(&condition, &mutex) }
        }
        let joinable = !own ? thread : nil
        if !own { thread = nil }
        pthread_mutex_unlock(&mutex)
        if let joinable { pthread_join(joinable, nil) }
        if own { pthread_detach(pthread_self()); detachedSelf() }
    }

    private func detachedSelf() {
        pthread_mutex_lock(&mutex)
        thread = nil
        pthread_mutex_unlock(&mutex)
    }
}
