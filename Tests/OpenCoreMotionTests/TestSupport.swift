import Foundation
import MotionFusion
import MotionSources
@testable import OpenCoreMotion

/// Polls `condition` every millisecond until it holds or `timeout` seconds pass.
func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}

/// A thread-safe list that handlers append to.
///
/// `@unchecked`: as on Apple platforms, Core Motion's sample classes are not `Sendable`; what the tests
/// record are the package's samples, which are immutable, so handing them between threads is safe.
final class Recorder<T>: @unchecked Sendable {
    private let items = Locked<[T]>([])
    func append(_ item: T) { items.withLock { $0.append(item) } }
    var all: [T] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

func accel(_ t: Double, z: Double = -1) -> RawSample {
    RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, z))
}

func gyro(_ t: Double, _ v: Vector3 = .zero) -> RawSample {
    RawSample(sensor: .gyro, timestamp: t, value: v)
}

func serialQueue() -> OperationQueue {
    let q = OperationQueue()
    q.maxConcurrentOperationCount = 1
    return q
}

/// The async twin of ``waitUntil(timeout:_:)``: suspends instead of blocking a thread, so tasks the
/// condition depends on can run.
func eventually(timeout: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}
