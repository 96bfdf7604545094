import DequeModule
import Foundation

/// Delivers items to a handler on an `OperationQueue`: one handler call per item, in order, none dropped.
///
/// Items wait in a FIFO. At most one of this delivery's operations is on the queue at a time, and it
/// hands the handler the items that were waiting when it began, one call each; if more arrived
/// meanwhile, it adds the next operation. So the handler is never entered twice at once, even on a
/// concurrent queue; order is kept; the caller's own operations run between batches; and a source
/// faster than the handler costs one operation per batch rather than one per item (no allocation per
/// item once the FIFO has grown). A slow handler makes items wait; none is lost.
///
/// ## Stopping
/// ``cancel()`` drops the waiting items and marks the delivery inactive under its lock; an operation
/// checks that mark under the same lock before each handler call. So once ``cancel()`` returns, no
/// further handler call begins. A call already under way runs to its end. Operations the caller put
/// on the same queue are never touched (Core Motion on Apple platforms cancels the whole queue;
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
        queue.addOperation(BatchOperation(self))
    }

    /// Hands the handler the items waiting when it starts (each checked against ``cancel()`` under the
    /// lock), then schedules the next batch if more arrived, or clears the scheduled mark.
    fileprivate func runBatch() {
        var remaining = state.withLock { $0.pending.count }
        while remaining > 0 {
            remaining -= 1
            let next = state.withLock { s -> Payload? in
                guard s.active else { return nil }
                return s.pending.popFirst()
            }
            guard let next else { break }
            switch next {
            case .item(let item): handler(item, nil)
            case .error(let error): handler(nil, error)
            }
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

/// The operation that runs one batch of a ``QueueDelivery`` on its queue: one object per batch, where
/// a block operation would also allocate its closure.
private final class BatchOperation<Item>: Operation, @unchecked Sendable {
    // Sendable: `Operation` subclasses are handed to the queue's thread; the only stored property is
    // the delivery, which is itself Sendable.
    private let delivery: QueueDelivery<Item>

    init(_ delivery: QueueDelivery<Item>) {
        self.delivery = delivery
        super.init()
    }

    override func main() {
        delivery.runBatch()
    }
}
