import DequeModule
import Foundation

/// Delivers items to a handler on an `OperationQueue`: one handler call per item, in order, none dropped.
///
/// Items wait in a FIFO. At most one batch of this delivery is scheduled at a time, and it hands the
/// handler the items that were waiting when it began, one call each; if more arrived meanwhile, it
/// schedules the next batch. So the handler is never entered twice at once, even on a concurrent queue;
/// order is kept; the caller's own operations run between batches; and a source faster than the handler
/// costs one batch rather than one per item (no allocation per item once the FIFO has grown). A slow
/// handler makes items wait; none is lost.
///
/// ## How a batch is scheduled
/// On an app's own queue, each batch is an `Operation` added to it, so everything the app can see of
/// its queue holds for the handler: `OperationQueue.current` is the queue, `isSuspended` holds the
/// handler back, `maxConcurrentOperationCount` counts it, `waitUntilAllOperationsAreFinished()` waits
/// for it. On Linux, swift-corelibs-foundation allocates 15 times per operation (the operation, its
/// three locks with their pthread objects, an array, the `DispatchWorkItem`, its closure and block,
/// two more in libdispatch as it runs), so a handler that keeps up, one batch per item, costs that per
/// item; nothing in the queue's public API lets an operation be reused.
///
/// `OperationQueue.main` takes the same path. Its operations run on `DispatchQueue.main`, but a batch
/// dispatched there directly (a user-data dispatch source allocates nothing per event) would see the
/// main queue as `OperationQueue.current` only when the main thread serves that queue; when a process
/// gives the main thread to `dispatchMain()`, as Swift's async `main` does on Linux, worker threads
/// serve it and only an operation makes the main queue current.
///
/// ## A source faster than the handler
/// A source paced by a clock is never held back: its samples wait here, however many. A source that
/// no clock paces (a simulator or replay in virtual time, ``ConsumerPacedSource``) would fill memory
/// that way, so its consumers call ``limitBacklog(to:)``: past the limit, ``enqueue(_:)`` blocks the
/// source's thread until the handler has taken the backlog down to half of it, or until ``cancel()``.
/// It never blocks on the delivery's own queue (a handler emitting into its own source) or on the
/// main thread for the main queue, which would wait for itself.
///
/// ## Stopping
/// ``cancel()`` drops the waiting items and marks the delivery inactive under its lock; a batch checks
/// that mark under the same lock before each handler call, when it takes the item. So once ``cancel()``
/// returns, no further item is taken, and at most one handler call begins: one whose item a running
/// batch took just before, on another thread. Closing that window would mean ``cancel()`` waiting for
/// the handler's call (a check and a call cannot be one atomic step without holding a lock across app
/// code); a handler that waits for the thread stopping it (a `DispatchQueue.main.sync` from a
/// background queue while the main thread stops) would then deadlock, so it does not wait. A call
/// already under way runs to its end. Operations the caller put on the same
/// queue are never touched (Core Motion on Apple platforms cancels the whole queue; OpenCoreMotion
/// deliberately does not).
///
/// ## The app cancelling its queue
/// If the app calls `cancelAllOperations()` on its queue while a batch waits there, the items of that
/// batch are dropped, as Core Motion's cancelled handler operations are on Apple platforms; later items
/// are delivered as usual.
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

    /// The delivery's one batch, if any.
    private enum Batch {
        case none
        /// Scheduled and not begun; the number tells an operation's batch from a later one.
        case waiting(UInt)
        /// Handing items to the handler.
        case running
    }

    private struct State {
        var pending = Deque<Payload>()
        var batch = Batch.none
        var batches: UInt = 0
        var active = true
        /// Threads blocked in ``enqueue(_:)`` until the backlog shrinks.
        var waitingForRoom = 0

        /// Marks a new batch scheduled and returns its number.
        mutating func scheduleBatch() -> UInt {
            batches &+= 1
            batch = .waiting(batches)
            return batches
        }
    }

    private let queue: OperationQueue
    // Called only on `queue`, one call at a time: the caller's contract, as with Core Motion.
    private let handler: Handler
    private let state = Locked(State())
    /// The most items that may wait before ``enqueue(_:)`` blocks; `Int.max` (the default) never blocks.
    private let limit = Locked(Int.max)
    /// Where blocked enqueuers wait; the consumer takes it only to wake them.
    private let room = NSCondition()

    init(queue: OperationQueue, handler: @escaping Handler) {
        self.queue = queue
        self.handler = handler
    }

    /// Bounds the backlog for a source that no clock paces (see the type's discussion): once more than
    /// `items` (at least 2) wait, ``enqueue(_:)`` blocks until half as many do or delivery stops.
    func limitBacklog(to items: Int) {
        limit.withLock { $0 = max(items, 2) }
    }

    /// Queues an item for the handler; with a ``limitBacklog(to:)``, waits while the backlog is full.
    func enqueue(_ item: Item) {
        push(.item(item))
        let limit = limit.withLock { $0 }
        guard limit != .max, state.withLock({ $0.active && $0.pending.count > limit }), !isOnOwnQueue else { return }
        room.lock()
        defer { room.unlock() }
        while state.withLock({ s -> Bool in
            let full = s.active && s.pending.count > limit / 2
            if full { s.waitingForRoom += 1 }
            return full
        }) {
            room.wait()
            state.withLock { $0.waitingForRoom -= 1 }
        }
    }

    /// Whether the calling thread is the one that would have to drain the backlog.
    private var isOnOwnQueue: Bool {
        OperationQueue.current === queue || (queue === OperationQueue.main && Thread.isMainThread)
    }

    /// Wakes the threads blocked in ``enqueue(_:)``.
    private func wakeEnqueuers() {
        room.lock()
        room.broadcast()
        room.unlock()
    }

    /// Queues an error for the handler; items already queued are delivered first.
    func enqueue(error: any Error) { push(.error(error)) }

    private func push(_ payload: Payload) {
        let batch = state.withLock { s -> UInt? in
            guard s.active else { return nil }
            s.pending.append(payload)
            guard case .none = s.batch else { return nil }
            return s.scheduleBatch()
        }
        if let batch { schedule(batch) }
    }

    private func schedule(_ batch: UInt) {
        queue.addOperation(BatchOperation(self, batch: batch))
    }

    /// Hands the handler the items waiting when it starts (each checked against ``cancel()`` under the
    /// lock), then schedules the next batch if more arrived. `batch` is the operation's batch number:
    /// a batch the app cancelled does nothing.
    fileprivate func runBatch(_ batch: UInt) {
        var remaining = state.withLock { s -> Int in
            guard case .waiting(let waiting) = s.batch, waiting == batch else { return -1 }
            s.batch = .running
            return s.pending.count
        }
        guard remaining >= 0 else { return }
        while remaining > 0 {
            remaining -= 1
            let (next, wake) = state.withLock { s -> (Payload?, Bool) in
                guard s.active else { return (nil, false) }
                let next = s.pending.popFirst()
                return (next, s.waitingForRoom > 0 && s.pending.count <= limit.withLock { $0 } / 2)
            }
            if wake { wakeEnqueuers() }
            guard let next else { break }
            switch next {
            case .item(let item): handler(item, nil)
            case .error(let error): handler(nil, error)
            }
        }
        let more = state.withLock { s -> UInt? in
            if s.active && !s.pending.isEmpty { return s.scheduleBatch() }
            s.batch = .none
            return nil
        }
        if let more { schedule(more) }
    }

    /// The app cancelled the operation of `batch` (`cancelAllOperations()`, or the operation's own
    /// `cancel()`): if it has not begun, its items are dropped and the next item schedules a new batch.
    /// Once begun, the batch runs to its end as usual.
    fileprivate func batchCancelled(_ batch: UInt) {
        let dropped = state.withLock { s -> Bool in
            guard case .waiting(let waiting) = s.batch, waiting == batch else { return false }
            s.pending.removeAll()
            s.batch = .none
            return true
        }
        if dropped { wakeEnqueuers() }
    }

    /// Stops delivery: waiting items are dropped and no further item is taken; at most one call whose item
    /// a running batch had already taken may still begin (see the type's discussion). Never waits.
    func cancel() {
        state.withLock {
            $0.active = false
            $0.pending.removeAll()
        }
        wakeEnqueuers()
    }

    /// Items waiting for the handler.
    var backlog: Int { state.withLock { $0.pending.count } }
}

/// The operation that runs one batch of a ``QueueDelivery`` on its queue: one object per batch, where
/// a block operation would also allocate its closure.
private final class BatchOperation<Item>: Operation, @unchecked Sendable {
    // Sendable: `Operation` subclasses are handed to the queue's thread; the stored properties are
    // constants, the delivery itself Sendable.
    private let delivery: QueueDelivery<Item>
    private let batch: UInt

    init(_ delivery: QueueDelivery<Item>, batch: UInt) {
        self.delivery = delivery
        self.batch = batch
        super.init()
    }

    override func main() {
        delivery.runBatch(batch)
    }

    /// A cancelled operation never runs `main()`, so the delivery must learn of it or it would wait for
    /// this batch for ever.
    override func cancel() {
        super.cancel()
        delivery.batchCancelled(batch)
    }
}
