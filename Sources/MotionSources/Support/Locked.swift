#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The package's one lock family: `Locked<State>` (a mutex around a value) and `ConditionLocked<State>`
// (the same with a condition variable for waits on the monotonic clock). A class that needs a lock keeps
// its mutable state in one struct held by one of these, so "guarded by" is a type, not a comment.
//
// Both use pthread primitives rather than `Synchronization.Mutex`: on Linux that type waits on raw
// futexes, which ThreadSanitizer cannot see, so every access it guards would be reported as a race,
// hiding real ones. A pthread mutex is understood by ThreadSanitizer and costs about the same
// uncontended (one atomic operation to lock, one to unlock). The primitives live in allocated memory
// so their addresses are stable, as POSIX requires.

/// A value guarded by a mutex.
///
/// `Locked` is `Sendable` only when `State` is: a lock makes access to a value exclusive, it does not
/// make a non-`Sendable` value safe to hand from one isolation domain to another.
///
/// ## Threading
/// ``withLock(_:)`` may be called from any thread. It is not reentrant: calling it again from inside
/// its own body deadlocks.
package final class Locked<State> {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    /// Creates a lock guarding `state`.
    package init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body(&guarded)
    }

    @usableFromInline func lock() { pthread_mutex_lock(mutex) }
    @usableFromInline func unlock() { pthread_mutex_unlock(mutex) }
    @usableFromInline var guarded: State {
        _read { yield state }
        _modify { yield &state }
    }
}

// Sendable: the mutex serialises every access to `state`, and `State: Sendable` makes it safe for the
// value to be reached from several isolation domains; the compiler cannot see the mutex.
extension Locked: @unchecked Sendable where State: Sendable {}

/// What a ``ConditionLocked/withLock(waiting:)`` body asks for next.
package enum LockStep<Result> {
    /// Release the lock and return `Result`.
    case done(Result)
    /// Wait for a ``ConditionLocked/broadcast()`` (or a spurious wake-up), then run the body again.
    case wait
    /// Wait for a broadcast or until this deadline (seconds on the lock's ``ConditionLocked/clock``), then run the body again.
    case waitUntil(Double)
}

/// A value guarded by a mutex with a condition variable whose timed waits follow a ``SourceClock``:
/// by default the real one, with `CLOCK_MONOTONIC` absolute deadlines (no drift, immune to wall-clock
/// changes); in tests a ``ManualClock``, whose time moves only when the test advances it.
///
/// Waits happen between runs of a body, never inside one: ``withLock(waiting:)`` runs its body with the
/// lock held, and the body answers ``LockStep/wait``/``LockStep/waitUntil(_:)`` to release the lock,
/// sleep, and be run again. So the state is never borrowed across a wait. A body that compares with the
/// time reads it from ``clock``.
///
/// ## Threading
/// Any thread may call any method. After changing the state that a waiter waits on, call
/// ``broadcast()`` (inside the body) or use ``withLock(broadcasting:_:)``.
package final class ConditionLocked<State> {
    private let primitives = ClockCondition()
    private var state: State
    /// The clock deadlines are on (seconds since boot).
    package let clock: any SourceClock

    /// Creates a lock guarding `state`, its deadlines on `clock` (default: the real clock).
    package init(_ state: State, clock: any SourceClock = MonotonicSourceClock.shared) {
        self.state = state
        self.clock = clock
    }

    /// Runs `body` with exclusive access to the state; with `broadcasting`, wakes every waiter
    /// before releasing the lock.
    package func withLock<Result, Failure: Error>(
        broadcasting: Bool = false, _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        primitives.lock()
        defer {
            if broadcasting { broadcast() }
            primitives.unlock()
        }
        return try body(&state)
    }

    /// Runs `body` with the lock held until it answers ``LockStep/done(_:)``, sleeping on the condition
    /// between runs as it asks.
    package func withLock<Result>(waiting body: (inout State) -> LockStep<Result>) -> Result {
        primitives.lock()
        defer { primitives.unlock() }
        while true {
            switch body(&state) {
            case .done(let result):
                return result
            case .wait:
                clock.wait(on: primitives, until: .infinity)
            case .waitUntil(let deadline):
                clock.wait(on: primitives, until: deadline)
            }
        }
    }

    /// Waits until `ready` returns a value, or until `deadline` (seconds on ``clock``) has passed, in
    /// which case it returns `nil`.
    package func wait<Result>(until deadline: Double? = nil, for ready: (inout State) -> Result?) -> Result? {
        withLock(waiting: { state -> LockStep<Result?> in
            if let result = ready(&state) { return .done(result) }
            guard let deadline else { return .wait }
            return clock.now() < deadline ? .waitUntil(deadline) : .done(nil)
        })
    }

    /// Wakes every waiter. Call it with the lock held (inside a body).
    package func broadcast() {
        primitives.broadcast()
        clock.broadcasted(primitives)
    }
}

// Sendable: as for `Locked`, the mutex serialises every access to `state`, which is itself Sendable.
extension ConditionLocked: @unchecked Sendable where State: Sendable {}
