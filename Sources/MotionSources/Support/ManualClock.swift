/// A ``SourceClock`` whose time moves only when told: the test twin of `CLOCK_MONOTONIC`.
///
/// Threads that sleep or wait on it (a ``SourceWorker``'s bodies, the simulator's worker, anything
/// whose ``ConditionLocked`` was given this clock) block until ``advance(to:)`` or ``advance(by:)``
/// reaches their deadline. A test then awaits ``settle(parked:timeout:)``: it returns once the given
/// number of threads are blocked on this clock with deadlines still in the future, that is once they
/// have done everything due by the current time. No polling, no real time: a simulated second takes
/// as long as computing its samples.
///
/// ```swift
/// let clock = ManualClock(start: 100)
/// let device = SimulatedDevice(options: options, sourceClock: clock)
/// try device.apply(SensorDemand(rates: [.gyro: 100]), sink: record)
/// clock.advance(by: 1)
/// #expect(await clock.settle(parked: 1))   // 101 samples, t = 100.00 … 101.00
/// ```
///
/// ## Threading
/// Every method may be called from any thread; ``settle(parked:timeout:)`` suspends without blocking
/// a Swift-concurrency thread.
package final class ManualClock: SourceClock {
    private struct Sleeper {
        /// The condition waited on; `nil` for ``sleep(until:)``.
        var condition: ObjectIdentifier?
        var deadline: Double
    }

    private struct Waiter {
        var id: Int
        var parked: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct WeakCondition {
        weak var condition: ClockCondition?
    }

    private struct State {
        var now: Double
        var sleepers: [Int: Sleeper] = [:]
        var nextToken = 0
        var conditions: [ObjectIdentifier: WeakCondition] = [:]
        var waiters: [Waiter] = []

        /// Threads blocked with nothing due: deadlines after now, or none.
        var parked: Int { sleepers.values.reduce(0) { $0 + ($1.deadline > now ? 1 : 0) } }

        mutating func register(_ condition: ClockCondition?, until deadline: Double) -> Int {
            let token = nextToken
            nextToken += 1
            sleepers[token] = Sleeper(condition: condition.map(ObjectIdentifier.init), deadline: deadline)
            if let condition { conditions[ObjectIdentifier(condition)] = WeakCondition(condition: condition) }
            resumeSettled()
            return token
        }

        /// Resumes the waiters whose count of parked threads is reached.
        mutating func resumeSettled() {
            guard !waiters.isEmpty else { return }
            let count = parked
            waiters.removeAll { waiter in
                guard waiter.parked == count else { return false }
                waiter.continuation.resume(returning: true)
                return true
            }
        }
    }

    // This lock waits without deadlines only, so its own clock (the real one) is never read.
    private let state: ConditionLocked<State>

    /// A clock reading `start` seconds (default 1000) until advanced.
    package init(start: Double = 1000) {
        state = ConditionLocked(State(now: start))
    }

    /// The current time, seconds.
    package func now() -> Double { state.withLock { $0.now } }

    /// Moves time to `time` (never backwards: an earlier time is ignored) and wakes every thread
    /// blocked on this clock, so those whose deadline has come run.
    package func advance(to time: Double) {
        let conditions = state.withLock(broadcasting: true) { s -> [ClockCondition] in
            if time > s.now { s.now = time }
            s.conditions = s.conditions.filter { $0.value.condition != nil }
            s.resumeSettled()
            return s.conditions.values.compactMap(\.condition)
        }
        // Each condition is broadcast under its mutex, so a thread between checking the time and
        // blocking (it holds that mutex) cannot miss the wake-up.
        for condition in conditions {
            condition.lock()
            condition.broadcast()
            broadcasted(condition)
            condition.unlock()
        }
    }

    /// Moves time forward by `seconds` (see ``advance(to:)``).
    package func advance(by seconds: Double) {
        advance(to: now() + seconds)
    }

    /// Waits until exactly `parked` threads are blocked on this clock with nothing due (a deadline
    /// after ``now()``, or none): they have done all their work up to now. Give the number of threads
    /// the code under test runs (one for a simulator or replay worker).
    ///
    /// - Parameter timeout: real seconds after which it gives up (a hang in the code under test);
    ///   default 30.
    /// - Returns: `true` when the threads settled, `false` on the timeout.
    package func settle(parked: Int, timeout: Double = 30) async -> Bool {
        let id = state.withLock { s -> Int in
            s.nextToken += 1
            return s.nextToken
        }
        let watchdog = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64((timeout.isFinite ? min(max(timeout, 0), 86_400) : 0) * 1e9))  // safe: finite, clamped to 0…1 day
            self?.expire(id)
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            state.withLock { s in
                if s.parked == parked {
                    continuation.resume(returning: true)
                } else {
                    s.waiters.append(Waiter(id: id, parked: parked, continuation: continuation))
                }
            }
        }
    }

    private func expire(_ id: Int) {
        state.withLock { s in
            s.waiters.removeAll { waiter in
                guard waiter.id == id else { return false }
                waiter.continuation.resume(returning: false)
                return true
            }
        }
    }

    /// The number of threads blocked on this clock with nothing due right now (see
    /// ``settle(parked:timeout:)``).
    package var parkedThreads: Int { state.withLock { $0.parked } }

    /// Blocks until ``advance(to:)`` reaches `deadline`.
    package func sleep(until deadline: Double) {
        var token: Int?
        state.withLock(waiting: { s -> LockStep<Void> in
            if let t = token {
                s.sleepers[t] = nil
                token = nil
                s.resumeSettled()
            }
            if s.now >= deadline { return .done(()) }
            token = s.register(nil, until: deadline)
            return .wait
        })
    }

    /// Blocks on `condition` until it is broadcast, which ``advance(to:)`` does.
    package func wait(on condition: ClockCondition, until deadline: Double) {
        let token = state.withLock { s -> Int? in
            s.now >= deadline ? nil : s.register(condition, until: deadline)
        }
        guard let token else { return }
        condition.wait()
        state.withLock { s in
            if s.sleepers.removeValue(forKey: token) != nil { s.resumeSettled() }
        }
    }

    /// The threads blocked on `condition` are awake: they no longer count as parked.
    package func broadcasted(_ condition: ClockCondition) {
        let id = ObjectIdentifier(condition)
        state.withLock { s in
            let before = s.sleepers.count
            s.sleepers = s.sleepers.filter { $0.value.condition != id }
            if s.sleepers.count != before { s.resumeSettled() }
        }
    }
}
