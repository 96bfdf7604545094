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

    /// `seconds` as a `timespec`, for absolute-deadline waits. Negative or non-finite values give 0;
    /// values beyond 10¹⁵ s (a replayed timestamp of 1e308) are clamped there rather than trapping.
    static func deadline(_ seconds: Double) -> timespec {
        guard seconds.isFinite, seconds > 0 else { return Glibc.timespec(tv_sec: 0, tv_nsec: 0) }
        let seconds = min(seconds, 1e15)
        let whole = seconds.rounded(.down)
        var nanos = Int((seconds - whole) * 1e9)
        var secs = Int(whole)
        if nanos >= 1_000_000_000 { secs += 1; nanos -= 1_000_000_000 }
        return Glibc.timespec(tv_sec: secs, tv_nsec: nanos)
    }
}

/// A pthread mutex with a condition variable whose timed waits use `CLOCK_MONOTONIC` absolute
/// deadlines (no drift, immune to wall-clock changes). ThreadSanitizer understands both primitives.
///
/// The primitives live in allocated memory, so their addresses are stable as POSIX requires.
/// Shared by every source that runs its own threads.
///
/// ## Threading
/// Any thread may lock. ``wait()`` and ``wait(until:)`` must be called with the lock held.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// Creates an unlocked lock.
    public init() {
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

    /// Takes the lock.
    public func lock() { pthread_mutex_lock(mutex) }
    /// Releases the lock.
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Wakes every waiter. Call with the lock held.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Runs `body` with the lock held.
    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
    /// Waits for a broadcast (or a spurious wake-up). Call with the lock held.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits for a broadcast or until `deadline` (seconds on `CLOCK_MONOTONIC`), whichever comes first.
    /// Call with the lock held.
    public func wait(until deadline: Double) {
        var ts = MonotonicClock.deadline(deadline)
        pthread_cond_timedwait(condition, mutex, &ts)
    }
}
