#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// Clocks, in nanoseconds.
public enum LinuxClock {
    /// `CLOCK_MONOTONIC` in ns: the base of ``MotionSources/RawSample/timestamp``.
    public static func monotonicNs() -> Int64 { read(CLOCK_MONOTONIC) }
    /// `CLOCK_REALTIME` in ns.
    public static func realtimeNs() -> Int64 { read(CLOCK_REALTIME) }
    /// `CLOCK_MONOTONIC` in seconds.
    public static func monotonic() -> Double { Double(monotonicNs()) / 1e9 }

    /// ns to add to a timestamp of the IIO clock `name` (`current_timestamp_clock`) to get
    /// `CLOCK_MONOTONIC`: 0 for `monotonic` and `monotonic_raw`, `monotonic − realtime` for
    /// `realtime` (read now, so it follows clock steps), likewise for `boottime` and `tai`.
    public static func offsetToMonotonic(from name: String) -> Int64 {
        let id: clockid_t
        switch name {
        case "monotonic", "monotonic_raw", "monotonic_coarse": return 0
        case "realtime", "realtime_coarse": id = CLOCK_REALTIME
        case "boottime": id = CLOCK_BOOTTIME
        case "tai": id = CLOCK_TAI
        default: id = CLOCK_REALTIME
        }
        // Bracket the other clock between two monotonic reads to halve the error.
        let a = read(CLOCK_MONOTONIC)
        let b = read(id)
        let c = read(CLOCK_MONOTONIC)
        return (a / 2 + c / 2) - b
    }

    private static func read(_ id: clockid_t) -> Int64 {
        var ts = timespec()
        clock_gettime(id, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// A stop flag that sleeping loops can wait on, woken at once by ``signal()``.
final class StopSignal: @unchecked Sendable {
    private let lock = ConditionLock()
    private var raised = false  // guarded by `lock`

    var isRaised: Bool { lock.withLock { raised } }

    func signal() {
        lock.withLock {
            raised = true
            lock.broadcast()
        }
    }

    /// Sleeps until the monotonic time `deadlineNs` or a signal; returns `true` when signalled.
    func wait(untilMonotonicNs deadlineNs: Int64) -> Bool {
        let deadline = Double(deadlineNs) / 1e9
        return lock.withLock {
            while !raised && MonotonicClock.now() < deadline { lock.wait(until: deadline) }
            return raised
        }
    }
}

/// A joinable POSIX thread running one closure.
final class WorkerThread: @unchecked Sendable {
    private var thread: pthread_t?
    private let lock = ConditionLock()
    private var joined = false

    /// Starts `body` on a new thread. With `realtime`, the thread asks for `SCHED_FIFO` at a low
    /// priority (5) so a loaded machine does not delay sample delivery; without the privilege
    /// (`CAP_SYS_NICE`, or an rtkit-style limit) it silently keeps the normal policy. Only threads
    /// that sleep in `poll` between samples should ask.
    init(name: String, realtime: Bool = false, _ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { arg in
            let box = Unmanaged<AnyObject>.fromOpaque(arg!).takeRetainedValue()
            (box as! Box).body()
            return nil
        }, box)
        if rc == 0 {
            thread = t
            if realtime {
                var param = sched_param()
                param.sched_priority = 5
                _ = pthread_setschedparam(t, SCHED_FIFO, &param)
            }
        } else {
            Unmanaged<AnyObject>.fromOpaque(box).release()
        }
    }

    deinit {
        // Never joined (its session ended on a failure): let the system reclaim it.
        if !joined, let thread { pthread_detach(thread) }
    }

    /// `true` when called on this thread.
    var isCurrent: Bool {
        guard let thread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Waits for the thread to finish; from the thread itself, detaches instead.
    func join() {
        let t: pthread_t? = lock.withLock {
            if joined { return nil }
            joined = true
            return thread
        }
        guard let t else { return }
        if pthread_equal(t, pthread_self()) != 0 { pthread_detach(t); return }
        pthread_join(t, nil)
    }
}
