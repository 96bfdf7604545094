import Dispatch
import Foundation
import MotionSources
import MotionTestSupport
@testable import OpenCoreMotion
import Testing

/// What an app can see of `QueueDelivery` on the queue it passed: the queue's own API (current queue,
/// suspension, cancellation, waiting, the concurrency limit) holds for the handler as for the app's
/// own operations, and the main queue, which takes another path, behaves as the main queue.
@Suite struct QueueDeliveryTests {
    /// What one handler call saw.
    struct Call: Sendable, Equatable {
        var item: Int
        var onQueue: Bool
    }

    /// A delivery whose handler records each call and whether it ran on `queue`.
    func recording(on queue: OperationQueue, extra: @escaping @Sendable () -> Void = {})
        -> (QueueDelivery<Int>, Recorder<Call>) {
        let calls = Recorder<Call>()
        let delivery = QueueDelivery<Int>(queue: queue) { item, _ in
            extra()
            calls.append(Call(item: item ?? -1, onQueue: OperationQueue.current === queue))
        }
        return (delivery, calls)
    }

    @Test func theHandlerSeesTheAppsQueueAsCurrentWithOrWithoutAnUnderlyingQueue() async {
        let plain = OperationQueue()
        let dispatchQueue = DispatchQueue(label: "QueueDeliveryTests.underlying")
        let underlying = OperationQueue()
        underlying.underlyingQueue = dispatchQueue
        for queue in [plain, underlying] {
            let (delivery, calls) = recording(on: queue)
            for i in 0..<50 { delivery.enqueue(i) }
            #expect(await calls.until { calls.count == 50 })
            #expect(calls.all.map(\.item) == Array(0..<50))
            #expect(calls.all.allSatisfy { $0.onQueue })
        }
        withExtendedLifetime(dispatchQueue) {}
    }

    @Test func aSuspendedQueueHoldsTheHandlerBack() async {
        let queue = serialQueue()
        let (delivery, calls) = recording(on: queue)
        queue.isSuspended = true
        for i in 0..<3 { delivery.enqueue(i) }
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(calls.count == 0, "no handler call while the queue is suspended")
        queue.isSuspended = false
        #expect(await calls.until { calls.count == 3 })
        #expect(calls.all.map(\.item) == [0, 1, 2])
    }

    /// On Apple platforms each sample is an operation of its own, and `cancelAllOperations()` drops the
    /// ones waiting. Here the waiting batch is dropped, and delivery must go on with the next sample (a
    /// cancelled operation never runs, so a delivery waiting for it would stall for ever).
    @Test func cancelAllOperationsDropsTheWaitingSamplesAndDeliveryGoesOn() async {
        let queue = serialQueue()
        let (delivery, calls) = recording(on: queue)
        queue.isSuspended = true
        for i in 0..<5 { delivery.enqueue(i) }
        queue.cancelAllOperations()
        queue.isSuspended = false
        // The serial queue runs an operation added now only after the cancelled ones left it.
        #expect(await drained(queue))
        #expect(calls.count == 0)
        #expect(delivery.backlog == 0)
        delivery.enqueue(5)
        #expect(await calls.until { calls.count == 1 })
        #expect(calls.all.map(\.item) == [5])
    }

    @Test func waitUntilAllOperationsAreFinishedWaitsForTheHandler() async throws {
        let queue = OperationQueue()
        let (delivery, calls) = recording(on: queue) { usleep(200) }
        let count = try await offThePool {
            for i in 0..<200 { delivery.enqueue(i) }
            queue.waitUntilAllOperationsAreFinished()
            return calls.count
        }
        #expect(count == 200)
    }

    /// On a serial queue the handler never runs beside the app's own operations, and on a concurrent one
    /// never beside itself.
    @Test func theHandlerKeepsToTheQueuesConcurrencyLimit() async {
        for width in [1, 4] {
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = width
            let running = Locked(0)
            let overlaps = Locked(0)
            let enter = { @Sendable in
                running.withLock { n in
                    if width == 1 && n > 0 { overlaps.withLock { $0 += 1 } }
                    n += 1
                }
            }
            let leave = { @Sendable in running.withLock { $0 -= 1 } }
            let handlerRunning = Locked(false)
            let (delivery, calls) = recording(on: queue) {
                let twice = handlerRunning.withLock { was in defer { was = true }; return was }
                if twice { overlaps.withLock { $0 += 1 } }
                enter(); usleep(100); leave()
                handlerRunning.withLock { $0 = false }
            }
            for i in 0..<200 {
                delivery.enqueue(i)
                if i % 10 == 0 { queue.addOperation { enter(); usleep(100); leave() } }
            }
            // A barrier runs once every operation added before it (the app's own ones) has finished.
            let appsDone = Locked(false)
            queue.addBarrierBlock {
                appsDone.withLock { $0 = true }
                calls.changes.signal()
            }
            #expect(await calls.until { calls.count == 200 && appsDone.withLock { $0 } })
            #expect(overlaps.withLock { $0 } == 0, "width \(width)")
            #expect(calls.all.map(\.item) == Array(0..<200))
        }
    }

    /// On `OperationQueue.main` the handler sees the main queue as current, in order, one sample at a
    /// time, whether samples come in bursts or one by one. (This test process serves the main queue from
    /// `dispatchMain()`'s worker threads, not from the main thread: the case where only an operation
    /// makes the main queue current.)
    @Test func onTheMainQueueTheHandlerSeesTheMainQueueAsCurrentInOrder() async {
        let (delivery, calls) = recording(on: .main)
        for i in 0..<100 { delivery.enqueue(i) }
        #expect(await calls.until { calls.count == 100 })
        for i in 100..<120 {
            delivery.enqueue(i)
            #expect(await calls.until { calls.count == i + 1 })
        }
        #expect(calls.all.map(\.item) == Array(0..<120))
        #expect(calls.all.allSatisfy { $0.onQueue })
        delivery.cancel()
        delivery.enqueue(120)
        try? await Task.sleep(nanoseconds: 20_000_000)
        #expect(calls.count == 120, "nothing after cancel")
    }
}
