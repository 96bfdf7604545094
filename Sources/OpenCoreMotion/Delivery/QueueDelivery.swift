import DequeModule
import Foundation

/// Delivers items to a handler on an `OperationQueue`, one operation per item, in order, none dropped.
///
/// Items wait in a FIFO. At most one of this delivery's operations is on the queue at a time: each
/// operation hands one item to the handler and, if more are waiting, adds the next operation. So
/// the handler is never entered twice at once, even on a concurrent queue, and order is kept while
/// the caller's own operations interleave freely. A slow handler makes items wait; none is lost.
///
/// ## Stopping
/// ``cancel()`` drops the waiting items and marks the delivery inactive under its lock; an operation
/// checks that mark under the same lock before it calls the handler. So once ``cancel()`` returns,
/// no further handler call begins. A call already under way runs to its end. Operations the caller
/// put on the same queue are never touched (Core Motion on Apple platforms cancels the whole queue;
/// OpenCoreMotion deliberately does not).
final class QueueDelivery<Item>: @unchecked Sendable {
    // Sendable: Core Motion's handler types (`CMAccelerometerHandler`, …) are non-Sendable closures that
    // Apple calls on the caller's `OperationQueue`; the handler is only ever called there, one call at a
    // time. The items are the package's own samples, immutable once made (Core Motion's sample classes
    // are not `Sendable`, see Unchecked.swift); each is handed from the enqueuing thread to the queue
    // once, under the lock. Every other stored property is Sendable.
    typealias Handler = (Item?, (any Error)?) -> Void

    private enum Payload {
        case item(Item)
        case error(any Error)
    }

    private struct State {
        var pending = Deque<Payload>()
        var scheduled = false
        var active = true
    }

    private let queue: OperationQueue
    // Called only on `queue`, one call at a time: the caller's contract, as with Core Motion.
    private let handler: Handler
    private let state = Locked(State())

    init(queue: OperationQueue, handler: @escaping Handler) {
        self.queue = queue
        self.handler = handler
    }

    /// Queues an item for the handler.
    func enqueue(_ item: Item) { push(.item(item)) }

    /// Queues an error for the handler; items already queued are delivered first.
    func enqueue(error: any Error) { push(.error(error)) }

    private func push(_ payload: Payload) {
        let schedule = state.withLock { s -> Bool in
            guard s.active else { return false }
            s.pending.append(payload)
            if s.scheduled { return false }
            s.scheduled = true
            return true
        }
        if schedule { scheduleNext() }
    }

    private func scheduleNext() {
        queue.addOperation { [self] in runOne() }
    }

    private func runOne() {
        let next = state.withLock { s -> Payload? in
            guard s.active, let p = s.pending.popFirst() else {
                s.scheduled = false
                return nil
            }
            return p
        }
        guard let next else { return }
        switch next {
        case .item(let item): handler(item, nil)
        case .error(let error): handler(nil, error)
        }
        let more = state.withLock { s -> Bool in
            if s.active && !s.pending.isEmpty { return true }
            s.scheduled = false
            return false
        }
        if more { scheduleNext() }
    }

    /// Stops delivery: waiting items are dropped and no further handler call begins.
    func cancel() {
        state.withLock {
            $0.active = false
            $0.pending.removeAll()
        }
    }

    /// Items waiting for the handler.
    var backlog: Int { state.withLock { $0.pending.count } }
}
