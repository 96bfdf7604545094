import MotionSources

/// Something tests wait on that wakes on the event itself: whatever changes the state a test waits
/// for (a handler appending a sample, a source receiving a demand) calls ``signal()``, and a test
/// awaits ``until(giveUpAfter:_:)`` with its condition. The condition is checked when the wait begins
/// and again at each signal; nothing polls and no thread is held while waiting.
///
/// ```swift
/// let changes = Changes()
/// manager.startAccelerometerUpdates(to: queue) { data, _ in seen.append(data); changes.signal() }
/// #expect(await changes.until { seen.count >= 3 })
/// ```
///
/// The give-up deadline only turns a wait that never ends into a failure message: it is generous
/// (default 60 s) and says nothing about how long the wait took, which tests never assert.
///
/// ## Threading
/// Every member may be called from any thread. A condition runs on the thread that signals (or on the
/// waiting task), outside this type's lock, so it may take other locks; it must not call ``signal()``.
public final class Changes: Sendable {
    private struct Waiter {
        var condition: @Sendable () -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var waiters: [Int: Waiter] = [:]
        /// Waits whose deadline passed before they were registered.
        var expired: Set<Int> = []
        var nextID = 0
    }

    private let state = Locked(State())

    /// A `Changes` nobody waits on yet.
    public init() {}

    /// Tells the waiters that something changed: each re-checks its condition, and those it now holds
    /// for resume. Cheap when nobody waits.
    public func signal() {
        let waiting = state.withLock { $0.waiters.map { ($0.key, $0.value.condition) } }
        for (id, condition) in waiting where condition() {
            resume(id, with: true)
        }
    }

    /// Suspends until `condition` holds (checked now and at each ``signal()``), or until
    /// `seconds` (default 60) pass, whichever comes first.
    /// - Returns: whether `condition` held; on giving up, its value at that moment.
    public func until(giveUpAfter seconds: Double = 60, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
        if condition() { return true }
        let id = state.withLock { s -> Int in s.nextID += 1; return s.nextID }
        let giveUp = Task { [weak self] in
            // safe: finite, clamped to 0…1 day before the conversion.
            try? await Task.sleep(nanoseconds: UInt64((seconds.isFinite ? min(max(seconds, 0), 86_400) : 0) * 1e9))
            if !Task.isCancelled { self?.expire(id, condition) }
        }
        defer {
            giveUp.cancel()
            state.withLock { _ = $0.expired.remove(id) }
        }
        return await withCheckedContinuation { continuation in
            let expired = state.withLock { s -> Bool in
                if s.expired.contains(id) { return true }
                s.waiters[id] = Waiter(condition: condition, continuation: continuation)
                return false
            }
            if expired {
                continuation.resume(returning: condition())
            } else if condition() {
                // A signal that came between the first check and the registration found no waiter:
                // check again now that one is registered.
                resume(id, with: true)
            }
        }
    }

    /// Gives up waiter `id` with its condition's value now (or marks it given up if not registered yet).
    private func expire(_ id: Int, _ condition: @Sendable () -> Bool) {
        let waiter = state.withLock { s -> Waiter? in
            guard let waiter = s.waiters.removeValue(forKey: id) else {
                s.expired.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.continuation.resume(returning: condition())
    }

    /// Resumes waiter `id` once (later calls find it gone).
    private func resume(_ id: Int, with value: Bool) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: value)
    }
}
