#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `CLOCK_MONOTONIC` in seconds: the base of sample timestamps and of
/// `ProcessInfo.processInfo.systemUptime` on Linux.
public enum MonotonicClock {
    /// Seconds since boot (`clock_gettime(CLOCK_MONOTONIC)`). Thread-safe, no allocation.
    @inlinable
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// `seconds` as a `timespec`, for absolute-deadline waits. Negative or non-finite values give 0.
    static func deadline(_ seconds: Double) -> timespec {
        guard seconds.isFinite, seconds > 0 else { return Glibc.timespec(tv_sec: 0, tv_nsec: 0) }
        let whole = seconds.rounded(.down)
        var nanos = Int((seconds - whole) * 1e9)
        var secs = Int(whole)
        if nanos >= 1_000_000_000 { secs += 1; nanos -= 1_000_000_000 }
        return Glibc.timespec(tv_sec: secs, tv_nsec: nanos)
    }
}

/// A pthread mutex with a condition variable whose timed waits use `CLOCK_MONOTONIC` absolute
/// deadlines (no drift, immune to wall-clock changes). TSan understands both primitives.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func broadcast() { pthread_cond_broadcast(condition) }
    /// Waits for a broadcast (or a spurious wake-up). Call with the lock held.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits for a broadcast or until `deadline` (seconds on `CLOCK_MONOTONIC`), whichever comes first.
    /// Call with the lock held.
    func wait(until deadline: Double) {
        var ts = MonotonicClock.deadline(deadline)
        pthread_cond_timedwait(condition, mutex, &ts)
    }
}
