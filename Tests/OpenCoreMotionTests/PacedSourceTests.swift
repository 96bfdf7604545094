import Dispatch
import Foundation
import MotionFusion
import MotionSources
import MotionTestSupport
@testable import OpenCoreMotion
import Testing

/// A source that no clock paces (a simulator or replay in virtual time) is held back by a handler that
/// falls behind, instead of queueing without bound; a source on a clock never is. And the package's own
/// serial queues get a thread while every thread of libdispatch's global pool is blocked.
@Suite struct PacedSourceTests {
    /// Emits `count` samples from a thread of its own, as a virtual-time source does, counting the
    /// emits that have returned.
    final class Emitter: @unchecked Sendable {
        // Sendable: `returned` is only touched under its lock; the source is thread-safe.
        let source: ManualSource
        let returned = Locked(0)
        let changes = Changes()
        init(_ source: ManualSource) { self.source = source }
        func start(_ count: Int) {
            Thread.detachNewThread { [self] in
                for i in 0..<count {
                    source.emit(accel(1 + Double(i) * 0.01))
                    returned.withLock { $0 += 1 }
                    changes.signal()
                }
            }
        }
        var count: Int { returned.withLock { $0 } }

        /// With `paced`, expects the emits held at ``QueuePush/pacedBacklog`` (and still there 0.3 s
        /// later) while the consumer takes nothing; without, expects all `total` to return.
        func expectHeldAtTheLimit(if paced: Bool, total: Int, while consumer: String) async {
            if paced {
                #expect(await changes.until { self.count >= QueuePush.pacedBacklog })
                try? await Task.sleep(nanoseconds: 300_000_000)
                #expect(count == QueuePush.pacedBacklog, "held at the limit while \(consumer)")
            } else {
                #expect(await changes.until { self.count == total }, "a source on a clock is never held back")
            }
        }
    }

    /// A ``ManualSource`` that says it runs in virtual time (or not).
    final class VirtualSource: ConsumerPacedSource {
        let base = ManualSource(sensors: [.accelerometer])
        let isPacedByConsumers: Bool
        init(paced: Bool) { isPacedByConsumers = paced }
        var info: SourceInfo { base.info }
        func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
            try base.apply(demand, sink: sink)
        }
    }

    /// Enqueues `items` in order from a thread of its own, as a source's thread does; the recorder
    /// holds the items whose `enqueue` has returned.
    func enqueueFromAThread(_ items: Range<Int>, into delivery: QueueDelivery<Int>) -> Recorder<Int> {
        let enqueued = Recorder<Int>()
        Thread.detachNewThread {
            for i in items {
                delivery.enqueue(i)
                enqueued.append(i)
            }
        }
        return enqueued
    }

    @Test func theEnqueuerWaitsPastTheLimitAndGoesOnAsTheHandlerCatchesUp() async {
        let queue = serialQueue()
        let calls = Recorder<Int>()
        let delivery = QueueDelivery<Int>(queue: queue) { item, _ in calls.append(item ?? -1) }
        delivery.limitBacklog(to: 8)
        queue.isSuspended = true
        let enqueued = enqueueFromAThread(0..<100, into: delivery)
        // The ninth item makes nine waiting: its enqueue blocks until four or fewer wait.
        #expect(await enqueued.until { enqueued.count == 8 })
        try? await Task.sleep(nanoseconds: 200_000_000)
        #expect(enqueued.count == 8, "the enqueuer went on while the handler was held")
        #expect(delivery.backlog == 9)
        queue.isSuspended = false
        #expect(await calls.until { calls.count == 100 })
        #expect(calls.all == Array(0..<100))
        #expect(await enqueued.until { enqueued.count == 100 })
    }

    @Test func cancellingWakesABlockedEnqueuer() async {
        let queue = serialQueue()
        let delivery = QueueDelivery<Int>(queue: queue) { _, _ in }
        delivery.limitBacklog(to: 4)
        queue.isSuspended = true
        let enqueued = enqueueFromAThread(0..<10, into: delivery)
        #expect(await enqueued.until { enqueued.count == 4 })
        delivery.cancel()
        #expect(await enqueued.until { enqueued.count == 10 }, "cancel must release the enqueuer; later items are dropped at once")
        #expect(delivery.backlog == 0)
        queue.isSuspended = false
    }

    @Test func aHandlerEnqueuingOnItsOwnQueueIsNeverBlocked() async {
        let queue = serialQueue()
        let delivery = Locked<QueueDelivery<Int>?>(nil)
        let calls = Recorder<Int>()
        let d = QueueDelivery<Int>(queue: queue) { item, _ in
            calls.append(item ?? -1)
            // From inside the handler, on the delivery's own queue: waiting would wait for itself.
            if item == 0 { for i in 1...20 { delivery.withLock { $0 }?.enqueue(i) } }
        }
        d.limitBacklog(to: 2)
        delivery.withLock { $0 = d }
        d.enqueue(0)
        #expect(await calls.until { calls.count == 21 })
        #expect(calls.all == Array(0...20))
    }

    /// Through a manager: with the handler held, a virtual-time source is held at the limit; a source
    /// on a clock goes on (its samples wait, none lost); both deliver every sample in order.
    @Test(arguments: [true, false]) func aManagerHoldsBackOnlyAVirtualTimeSource(paced: Bool) async {
        let source = VirtualSource(paced: paced)
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.01
        let queue = serialQueue()
        let calls = Recorder<Double>()
        manager.startAccelerometerUpdates(to: queue) { data, _ in calls.append(data?.timestamp ?? -1) }
        queue.isSuspended = true
        let emitter = Emitter(source.base)
        let total = QueuePush.pacedBacklog * 3
        emitter.start(total)
        // The sample past the limit is queued, and its emit waits.
        await emitter.expectHeldAtTheLimit(if: paced, total: total, while: "the handler is held")
        queue.isSuspended = false
        #expect(await calls.until { calls.count == total })
        #expect(calls.all == (0..<total).map { 1 + Double($0) * 0.01 })
        manager.stopAccelerometerUpdates()
    }

    /// Stopping updates releases a virtual-time source held by a handler that is not running.
    @Test func stoppingReleasesAHeldVirtualTimeSource() async {
        let source = VirtualSource(paced: true)
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.01
        let queue = serialQueue()
        manager.startAccelerometerUpdates(to: queue) { _, _ in }
        queue.isSuspended = true
        let emitter = Emitter(source.base)
        emitter.start(QueuePush.pacedBacklog * 2)
        #expect(await emitter.changes.until { emitter.count == QueuePush.pacedBacklog })
        manager.stopAccelerometerUpdates()
        #expect(await emitter.changes.until { emitter.count == QueuePush.pacedBacklog * 2 })
        queue.isSuspended = false
    }

    /// Through an async sequence: while the loop does not take samples, a virtual-time source is held
    /// once 4096 wait; a source on a clock goes on. Both deliver every sample, in order.
    @Test(arguments: [true, false]) func anAsyncSequenceHoldsBackOnlyAVirtualTimeSource(paced: Bool) async throws {
        let source = VirtualSource(paced: paced)
        let manager = CMMotionManager(source: source)
        let updates = manager.accelerometerUpdates(interval: 0.01)
        let emitter = Emitter(source.base)
        let total = QueuePush.pacedBacklog * 3
        emitter.start(total)
        await emitter.expectHeldAtTheLimit(if: paced, total: total, while: "the loop takes nothing")
        var samples: [CMAccelerometerData] = []
        for try await sample in updates {
            samples.append(sample)
            if samples.count == total { break }
        }
        // The samples' fields are read only once the emitter has counted its last emit, under a lock:
        // a sample handed over through the stream's buffer is synchronised by the Swift runtime's own
        // lock, which ThreadSanitizer does not see (a futex on Linux), so reading the fields straight
        // from the loop was reported as a race.
        #expect(await emitter.changes.until { emitter.count == total })
        #expect(samples.map(\.timestamp) == (0..<total).map { 1 + Double($0) * 0.01 })
    }

    /// Leaving the loop releases a virtual-time source held by it.
    @Test func leavingTheLoopReleasesAHeldVirtualTimeSource() async throws {
        let source = VirtualSource(paced: true)
        let manager = CMMotionManager(source: source)
        var updates: AsyncThrowingStream<CMAccelerometerData, any Error>? = manager.accelerometerUpdates(interval: 0.01)
        let emitter = Emitter(source.base)
        emitter.start(QueuePush.pacedBacklog * 2)
        #expect(await emitter.changes.until { emitter.count == QueuePush.pacedBacklog })
        var iterator = updates?.makeAsyncIterator()
        #expect(try await iterator?.next()?.timestamp == 1)
        iterator = nil
        updates = nil
        #expect(await emitter.changes.until { emitter.count == QueuePush.pacedBacklog * 2 })
        let stopped = await eventually { source.base.demand.isEmpty }
        #expect(stopped, "leaving the loop stops the sensor")
    }

    /// The simulator and a replay in virtual time say so; in real time they do not.
    @Test func virtualTimeSourcesSaySo() {
        #expect(SimulatedDevice(scenario: .still, clock: .virtual(startTime: 0)).isPacedByConsumers)
        #expect(!SimulatedDevice(scenario: .still).isPacedByConsumers)
    }

    /// `OperationQueue.serial()` runs its operations while every thread of the global pool is blocked
    /// (a plain serial `OperationQueue` waited about 6 s there, until libdispatch's periodic check added
    /// a thread).
    @Test func theSerialQueueRunsWhileTheGlobalPoolIsBlocked() async throws {
        let queue = OperationQueue.serial(name: "PacedSourceTests.serial")
        // All on a thread of its own: the test's task needs the pool to resume, so the pool is held
        // only inside, for as long as the measurement takes.
        let ran = try await offThePool { () -> Double in
            let release = DispatchSemaphore(value: 0)
            let width = ProcessInfo.processInfo.activeProcessorCount * 4
            for _ in 0..<width { DispatchQueue.global().async { release.wait() } }
            defer { for _ in 0..<width { release.signal() } }
            let start = MonotonicClock.now()
            let done = DispatchSemaphore(value: 0)
            queue.addOperation { done.signal() }
            return done.wait(timeout: .now() + 30) == .success ? MonotonicClock.now() - start : .infinity
        }
        #expect(ran < 0.5, "the serial queue's operation waited \(ran) s")
        #expect(queue.maxConcurrentOperationCount == 1 && queue.name == "PacedSourceTests.serial")
    }
}
