#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The clock a source's runtime reads and sleeps on: seconds since boot, the base of every sample
/// timestamp.
///
/// The runtime (``SourceWorker``, the simulator's pacing, ``ConditionLocked``'s timed waits) takes one
/// instead of reading `CLOCK_MONOTONIC` itself, so a test can hand it a ``ManualClock`` whose time
/// moves only when the test says so (as swift-nio's `NIOAsyncTestingEventLoop` and Hummingbird's
/// test clocks do). Everything defaults to ``MonotonicSourceClock/shared``: no public API changes.
///
/// ## Threading
/// Every method may be called from any thread.
package protocol SourceClock: AnyObject, Sendable {
    /// Seconds since boot on this clock.
    func now() -> Double

    /// Blocks the calling thread until ``now()`` has reached `deadline` (seconds on this clock).
    /// Only for threads the runtime owns: never call it from a Swift-concurrency task.
    func sleep(until deadline: Double)

    /// Blocks on `condition`, whose mutex the caller holds, until it is broadcast or until `deadline`
    /// (seconds on this clock; `.infinity` for no deadline). May return early (a spurious wake-up):
    /// callers re-check what they wait for. The mutex is held again on return.
    func wait(on condition: ClockCondition, until deadline: Double)

    /// `condition` has just been broadcast (its mutex held by the caller): every thread blocked on it
    /// is about to wake.
    func broadcasted(_ condition: ClockCondition)
}

/// The real clock: `CLOCK_MONOTONIC` (``MonotonicClock``), with absolute-deadline sleeps and waits (no
/// drift, no busy waiting, immune to wall-clock changes).
package final class MonotonicSourceClock: SourceClock {
    /// The one instance: every runtime's default clock.
    package static let shared = MonotonicSourceClock()

    private init() {}

    /// ``MonotonicClock/now()``.
    package func now() -> Double { MonotonicClock.now() }

    /// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`, resumed after signals.
    package func sleep(until deadline: Double) {
        var ts = MonotonicClock.deadline(deadline)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// `pthread_cond_timedwait` with a `CLOCK_MONOTONIC` deadline, or `pthread_cond_wait` without one.
    package func wait(on condition: ClockCondition, until deadline: Double) {
        if deadline == .infinity {
            condition.wait()
        } else {
            condition.wait(untilMonotonic: deadline)
        }
    }

    /// Nothing to do: waits are the kernel's.
    package func broadcasted(_ condition: ClockCondition) {}
}

/// A pthread mutex and a condition variable on `CLOCK_MONOTONIC`, at stable addresses: the primitives
/// under ``ConditionLocked``, handed to a ``SourceClock`` to wait on.
///
/// ## Threading
/// Used as a mutex and condition are: ``lock()``/``unlock()`` from any thread, waits with the mutex held.
package final class ClockCondition: @unchecked Sendable {
    // @unchecked: the pointers never change, and pthread primitives are made to be shared by threads.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// A fresh mutex and condition.
    package init() {
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

    /// Locks the mutex.
    package func lock() { pthread_mutex_lock(mutex) }
    /// Unlocks the mutex.
    package func unlock() { pthread_mutex_unlock(mutex) }
    /// Wakes every thread waiting on the condition.
    package func broadcast() { pthread_cond_broadcast(condition) }
    /// Waits for a broadcast (the mutex held).
    package func wait() { pthread_cond_wait(condition, mutex) }
    /// Waits for a broadcast or until `deadline` seconds on `CLOCK_MONOTONIC` (the mutex held).
    package func wait(untilMonotonic deadline: Double) {
        var ts = MonotonicClock.deadline(deadline)
        pthread_cond_timedwait(condition, mutex, &ts)
    }
}
