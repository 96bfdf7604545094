import Foundation
import MotionSources

/// Passes a source through, counting what it emits up to a cut-off time: every sample, and the
/// gyroscope samples that can produce a device-motion update (those after the first accelerometer
/// sample, where fusion starts). The delivery and soak benchmarks compare these with what their
/// handlers got.
///
/// ## Threading
/// Thread-safe: the counts are behind a lock; the sink may run on any thread.
package final class CountingSource: SensorSource {
    /// The source counted.
    package let inner: any SensorSource
    private struct Counts {
        var emitted = 0
        var perSensor: [SensorKind: Int] = [:]
        var deviceMotionUpdates = 0
        var sawAccelerometer = false
        var cutoff = Double.infinity
    }
    private let counts = Locked(Counts())

    /// Counts what `inner` emits.
    package init(_ inner: any SensorSource) { self.inner = inner }

    package var info: SourceInfo { inner.info }

    /// Samples emitted with a timestamp at or before the cut-off.
    package var emitted: Int { counts.withLock { $0.emitted } }

    /// Samples of one sensor emitted with a timestamp at or before the cut-off.
    package func emitted(_ kind: SensorKind) -> Int { counts.withLock { $0.perSensor[kind, default: 0] } }

    /// Device-motion updates the source made possible up to the cut-off.
    package var deviceMotionUpdates: Int { counts.withLock { $0.deviceMotionUpdates } }

    /// From now on, samples stamped after `t` (seconds since boot) are not counted.
    package func setCutoff(_ t: Double) { counts.withLock { $0.cutoff = t } }

    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        try inner.apply(demand) { [self] event in
            if case .sample(let s) = event {
                counts.withLock {
                    if s.sensor == .accelerometer { $0.sawAccelerometer = true }
                    guard s.timestamp <= $0.cutoff else { return }
                    $0.emitted += 1
                    $0.perSensor[s.sensor, default: 0] += 1
                    if s.sensor == .gyro, $0.sawAccelerometer { $0.deviceMotionUpdates += 1 }
                }
            }
            sink(event)
        }
    }
}

/// What the delivery benchmarks count of the updates a handler receives: how many, how many out of
/// order, whether one past the cut-off arrived, and optionally each update's latency.
package struct DeliveryTally: Sendable {
    /// Updates counted (stamped at or before the cut-off).
    package var delivered = 0
    /// Updates stamped at or before the one before them.
    package var outOfOrder = 0
    /// `true` once an update stamped after the cut-off arrived: the queue has drained.
    package var pastCutoff = false
    /// Latency of each counted update in µs, when recorded.
    package var latencies: [Double] = []
    private var last = -Double.infinity

    /// An empty tally with room for `latencyCapacity` latencies.
    package init(latencyCapacity: Int = 0) {
        latencies.reserveCapacity(latencyCapacity)
    }

    /// Counts an update stamped `timestamp` (seconds since boot), received at `now`, unless it is
    /// past `cutoff`; with `recordLatency`, keeps `now − timestamp`.
    package mutating func record(timestamp: Double, now: Double, cutoff: Double, recordLatency: Bool) {
        if timestamp > cutoff {
            pastCutoff = true
            return
        }
        delivered += 1
        if recordLatency { latencies.append((now - timestamp) * 1e6) }
        if timestamp <= last { outOfOrder += 1 }
        last = timestamp
    }
}

extension Locked where State == DeliveryTally {
    /// Waits until an update stamped past the cut-off has arrived (the handler's queue has drained),
    /// at most `timeout` seconds.
    package func waitForDrain(timeout: Double = 5) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if withLock({ $0.pastCutoff }) { return }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
    }
}
