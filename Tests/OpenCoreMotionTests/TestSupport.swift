import Foundation
import MotionFusion
import MotionSources
import MotionTestSupport
@testable import OpenCoreMotion

/// A thread-safe list that handlers append to, and that tests await (``until(giveUpAfter:_:)``): each
/// append wakes the waiting test, which re-checks its condition; nothing polls.
///
/// `@unchecked`: as on Apple platforms, Core Motion's sample classes are not `Sendable`; what the tests
/// record are the package's samples, which are immutable, so handing them between threads is safe.
final class Recorder<T>: @unchecked Sendable {
    private let items = Locked<[T]>([])
    /// Signalled after each append.
    let changes: Changes
    /// An empty list that signals `changes` (by default its own) after each append: recorders that
    /// share one can be awaited together.
    init(signalling changes: Changes = Changes()) { self.changes = changes }
    func append(_ item: T) {
        items.withLock { $0.append(item) }
        changes.signal()
    }
    var all: [T] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
    /// Suspends until `condition` holds, checked now and after each append (see ``Changes``).
    func until(giveUpAfter seconds: Double = 60, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
        await changes.until(giveUpAfter: seconds, condition)
    }
}

/// A ``ManualSource`` that tests can await: each demand the manager applies, and each sample,
/// failure, interruption or end the test hands it, signals ``changes`` after it took effect, so
/// `await source.until { source.demand.isEmpty }` wakes on the change itself.
final class ObservedSource: SensorSource {
    private let base: ManualSource
    /// Signalled after each `apply` and each event handed to the sink.
    let changes = Changes()
    var info: SourceInfo { base.info }

    /// A manual source with `sensors` at `minimumRate`…`maximumRate` Hz (see ``ManualSource``).
    init(sensors: Set<SensorKind> = Set(SensorKind.motion), minimumRate: Double = 1, maximumRate: Double = 1000,
         identifier: String = "manual") {
        base = ManualSource(sensors: sensors, minimumRate: minimumRate, maximumRate: maximumRate, identifier: identifier)
    }

    @discardableResult
    func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        defer { changes.signal() }
        return try base.apply(demand, sink: sink)
    }

    var demand: SensorDemand { base.demand }
    var demandHistory: [SensorDemand] { base.demandHistory }
    @discardableResult
    func emit(_ sample: RawSample) -> Bool { defer { changes.signal() }; return base.emit(sample) }
    func fail(_ error: SourceError) { base.fail(error); changes.signal() }
    @discardableResult
    func interrupt(_ error: SourceError) -> Bool { defer { changes.signal() }; return base.interrupt(error) }
    func finish() { base.finish(); changes.signal() }

    /// Suspends until `condition` holds, checked now and after each change (see ``Changes``).
    func until(giveUpAfter seconds: Double = 60, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
        await changes.until(giveUpAfter: seconds, condition)
    }
}

/// Suspends until every operation added to `queue` so far has left it (run, or been cancelled), and
/// every operation those added as they ran, without holding a thread: a barrier added now runs only
/// after them and resumes the test. The awaiting counterpart of `waitUntilAllOperationsAreFinished()`.
///
/// Two barriers, one after the other: a delivery batch running when the first is added schedules the
/// next batch (the items that arrived meanwhile) only as it ends, behind that barrier; the second
/// barrier comes after it. (One barrier let a test see the first batch's item without the second's,
/// seen under ThreadSanitizer.)
func drained(_ queue: OperationQueue, giveUpAfter seconds: Double = 60) async -> Bool {
    for _ in 0..<2 {
        let ran = Locked(false)
        let changes = Changes()
        queue.addBarrierBlock {
            ran.withLock { $0 = true }
            changes.signal()
        }
        guard await changes.until(giveUpAfter: seconds, { ran.withLock { $0 } }) else { return false }
    }
    return true
}

func accel(_ t: Double, z: Double = -1) -> RawSample {
    RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, z))
}

func gyro(_ t: Double, _ v: Vector3 = .zero) -> RawSample {
    RawSample(sensor: .gyro, timestamp: t, value: v)
}

func serialQueue() -> OperationQueue {
    .serial()
}

/// Polls `condition` every millisecond until it holds or `timeout` seconds pass (a bound on a failure
/// only), suspending instead of blocking a thread, so tasks the condition depends on can run. Only for
/// state that no event the test can see announces (a recording's end, a batch stored without a
/// handler); everything else waits on ``Changes``.
func eventually(timeout: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}
