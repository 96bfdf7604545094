import MotionFusion
@testable import MotionSources
#if canImport(Glibc)
import Glibc
#endif

/// Samples of one sensor, in order.
func samples(_ kind: SensorKind, from stream: [RawSample]) -> [RawSample] {
    stream.filter { $0.sensor == kind }
}

/// The first `count` samples of a simulator.
func collect(_ simulator: inout MotionSimulator, count: Int) -> [RawSample] {
    var out: [RawSample] = []
    out.reserveCapacity(count)
    for _ in 0..<count { out.append(simulator.next()) }
    return out
}

/// Samples until the timestamp passes `end`.
func collect(_ simulator: inout MotionSimulator, until end: Double) -> [RawSample] {
    var out: [RawSample] = []
    while let t = simulator.nextTimestamp, t <= end { out.append(simulator.next()) }
    return out
}

func mean(_ vs: [Vector3]) -> Vector3 {
    vs.reduce(Vector3.zero, +) / Double(max(vs.count, 1))
}

/// The rotation angle between two unit quaternions, radians (0…π).
func angle(between a: Quaternion, _ b: Quaternion) -> Double {
    let d = abs(a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z)
    return 2 * acos(min(d, 1))
}

/// A thread-safe recorder for sink events.
final class Recorder: Sendable {
    private let state = Locked<[RawSample]>([])
    private let others = Locked<Int>(0)

    var sink: @Sendable (SourceEvent) -> Void {
        { [self] event in
            switch event {
            case .sample(let s): state.withLock { $0.append(s) }
            default: others.withLock { $0 += 1 }
            }
        }
    }

    var samples: [RawSample] { state.withLock { $0 } }
    var count: Int { state.withLock { $0.count } }
    var nonSampleEvents: Int { others.withLock { $0 } }

    /// Waits (polling every 2 ms, at most `timeout` seconds) until at least `count` samples arrived.
    func wait(forAtLeast count: Int, timeout: Double = 60) async throws {
        let deadline = MonotonicClock.now() + timeout
        while self.count < count && MonotonicClock.now() < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
