#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// The one thread of the process that writes learned calibration files (``LearnedCalibrationRecord``),
/// one job at a time in the order given: a checkpoint handed off by a delivery thread never lands after
/// the final save at stop.
///
/// A thread of its own, started by the first hub that persists what it learns (``warm(_:)``), rather
/// than a dispatch queue: a queue idle for the minute between checkpoints gives its worker thread back,
/// and the next save then runs on a new thread (a new stack and, in glibc, possibly a new malloc arena),
/// faulting in memory in the middle of a long run. Here the thread, its stack and the code of a save are
/// resident from the start: the first job encodes a record without writing it.
///
/// ## Threading
/// Any thread may call ``async(_:)`` and ``sync(_:)``. Jobs run on the writer's thread; when it cannot
/// be created they run on the caller's.
final class LearnedCalibrationWriter: Sendable {
    /// The process's writer.
    static let shared = LearnedCalibrationWriter()

    /// A job, boxed: a closure kept in a generic lock's state is reabstracted on each access (see
    /// ``SourceWorker``'s sink); a class reference is not.
    private final class Job: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private struct State: Sendable {
        var jobs: [Job] = []
        /// Jobs handed in and jobs finished, for ``sync(_:)``.
        var submitted = 0
        var finished = 0
        var thread: pthread_t?
        /// The thread could not be created: jobs run on the caller's thread.
        var inline = false
    }

    private let state = ConditionLocked(State())

    private init() {}

    /// Runs `job` on the writer's thread after the jobs before it; returns at once.
    func async(_ job: @escaping @Sendable () -> Void) {
        _ = submit(job)
    }

    /// Runs `job` on the writer's thread after the jobs before it, and returns when it has run (at once
    /// when called on the writer's own thread, where waiting would deadlock: it then runs `job` itself).
    func sync(_ job: @escaping @Sendable () -> Void) {
        if isCurrentThread { return job() }
        guard let ticket = submit(job) else { return }
        _ = state.wait { $0.finished >= ticket ? () : nil }
    }

    /// Starts the thread if needed and runs `job` on it first thing: what a save runs (encoding a
    /// record, formatting the time) is then resident before the first checkpoint a minute later.
    func warm(_ job: @escaping @Sendable () -> Void) {
        async(job)
    }

    private var isCurrentThread: Bool {
        let me = pthread_self()
        return state.withLock { s in s.thread.map { pthread_equal($0, me) != 0 } ?? false }
    }

    /// Queues `job`; its ticket, or `nil` when it already ran on the caller's thread (no writer thread).
    private func submit(_ job: @escaping @Sendable () -> Void) -> Int? {
        let ticket = state.withLock(broadcasting: true) { s -> Int? in
            if s.thread == nil, !s.inline { s.inline = !startThread(&s) }
            guard !s.inline else { return nil }
            s.jobs.append(Job(job))
            s.submitted += 1
            return s.submitted
        }
        if ticket == nil { job() }
        return ticket
    }

    /// Creates the thread (detached: it serves the process until it exits). `false` when it cannot be.
    private func startThread(_ s: inout State) -> Bool {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(self)
        let rc = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<LearnedCalibrationWriter>.fromOpaque(raw).takeRetainedValue().serve()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            return false
        }
        pthread_detach(thread)
        s.thread = thread
        return true
    }

    /// The thread's loop: runs each job in turn, forever.
    private func serve() {
        while true {
            let job = state.wait { s -> Job? in s.jobs.isEmpty ? nil : s.jobs.removeFirst() }
            job?.run()
            state.withLock(broadcasting: true) { $0.finished += 1 }
        }
    }
}
