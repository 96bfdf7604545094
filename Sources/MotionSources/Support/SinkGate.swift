#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one way a source calls its sink: the promises of ``SensorSource`` about the sink, kept in one
/// place for threaded sources (``SourceWorker``) and event-loop sources (the phones, MQTT) alike.
///
/// - Calls are serialised: one sink call at a time, whatever thread delivers.
/// - Once ``close(waiting:)`` has returned, no sink call is in progress or will begin until the next
///   ``open(_:)`` — except when `close` is called from inside a sink call (a sink that stops its own
///   source), where waiting would deadlock: it then only shuts the gate, and the call in progress
///   delivers nothing more once it returns to the gate.
/// - At most one terminal event (``end(_:)``) goes out per ``open(_:)``, and nothing after it.
///
/// A gate starts open. Without a sink it calls nothing, but still lets one terminal event "end" it, so
/// a source that calls its sink itself can use the gate's bookkeeping.
///
/// ## Threading
/// Every method may be called from any thread, any number of times. The sink is called on the
/// delivering thread, never with the gate's lock held.
package final class SinkGate: Sendable {
    private struct State: Sendable {
        var sink: SourceSink?
        /// Set by ``close(waiting:)``: no sink call begins afterwards until ``open(_:)``.
        var closed: Bool
        /// Set by a terminal event: no sink call begins afterwards until ``open(_:)``.
        var ended = false
        /// The thread inside a sink call, if any, and how deeply (a sink that delivers again).
        var caller: pthread_t?
        var depth = 0
    }

    private let state: ConditionLocked<State>

    /// Creates an open gate calling `sink` (none: nothing is called until ``open(_:)``).
    package init(sink: (@Sendable (SourceEvent) -> Void)? = nil) {
        state = ConditionLocked(State(sink: sink.map(SourceSink.init), closed: false))
    }

    /// Opens the gate on `sink` (replacing the previous one), for a new run: events flow again and one
    /// terminal event may go out. A call of the previous sink still in progress on another thread
    /// finishes first (calls stay serialised).
    package func open(_ sink: @escaping @Sendable (SourceEvent) -> Void) {
        let sink = SourceSink(sink)
        state.withLock { s in
            s.sink = sink
            s.closed = false
            s.ended = false
        }
    }

    /// Shuts the gate: no sink call begins afterwards until the next ``open(_:)``. With `waiting`
    /// (the default) it returns once no sink call is in progress, unless it is called from inside one
    /// (see the type's documentation).
    package func close(waiting: Bool = true) {
        let me = pthread_self()
        state.withLock(waiting: { s -> LockStep<Void> in
            s.closed = true
            guard waiting, let caller = s.caller, pthread_equal(caller, me) == 0 else { return .done(()) }
            return .wait
        })
    }

    /// `true` while events may go out: opened with a sink, not closed, no terminal event yet.
    package var isOpen: Bool { state.withLock { !$0.closed && !$0.ended && $0.sink != nil } }

    /// `true` once a terminal event went out (or was refused for a missing sink) since the last ``open(_:)``.
    package var hasEnded: Bool { state.withLock { $0.ended } }

    /// Waits for the turn to call the sink. Returns the sink, or `nil` (and takes no turn) when the
    /// gate is shut; with `terminal`, ends the gate. Sets `ended` for a terminal event even without a sink.
    private func enter(terminal: Bool) -> (sink: SourceSink?, entered: Bool) {
        let me = pthread_self()
        return state.withLock(waiting: { s -> LockStep<(sink: SourceSink?, entered: Bool)> in
            if s.closed || s.ended { return .done((nil, false)) }
            if let caller = s.caller, pthread_equal(caller, me) == 0 { return .wait }
            if terminal { s.ended = true }
            guard let sink = s.sink else { return .done((nil, terminal)) }
            s.caller = me
            s.depth += 1
            return .done((sink, true))
        })
    }

    private func leave() {
        state.withLock { s in
            s.depth -= 1
            if s.depth == 0 {
                s.caller = nil
                state.broadcast()
            }
        }
    }

    /// Calls the sink with a non-terminal event (a sample, `.interrupted`), unless the gate is shut.
    /// - Returns: whether the sink was called.
    @discardableResult
    package func deliver(_ event: SourceEvent) -> Bool {
        guard let sink = enter(terminal: false).sink else { return false }
        defer { leave() }
        sink.call(event)
        return true
    }

    /// Calls the sink with each sample in order, in one turn (no other thread's event comes between
    /// them), stopping at once if the gate shuts meanwhile.
    /// - Returns: how many samples went out.
    @discardableResult
    package func deliver(_ samples: some Sequence<RawSample>) -> Int {
        guard let sink = enter(terminal: false).sink else { return 0 }
        defer { leave() }
        var count = 0
        for sample in samples {
            if state.withLock({ $0.closed || $0.ended }) { break }
            sink.call(.sample(sample))
            count += 1
        }
        return count
    }

    /// Calls the sink with a terminal event (`.failed`, `.finished`) if it is the first since the last
    /// ``open(_:)`` and the gate is not closed; nothing goes out after it until the next ``open(_:)``.
    /// - Returns: whether this call ended the gate (`true` also without a sink: the run has ended).
    @discardableResult
    package func end(_ event: SourceEvent) -> Bool {
        let (sink, entered) = enter(terminal: true)
        guard let sink else { return entered }
        defer { leave() }
        sink.call(event)
        return true
    }
}
