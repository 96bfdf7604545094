import Foundation
import MotionSources
import OpenCoreMotion

/// Passes a source through, counting what it emits up to a cut-off time: every sample, and the
/// gyroscope samples that can produce a device-motion update (those after the first accelerometer
/// sample, where fusion starts). The delivery and soak benchmarks compare these with what their
/// handlers got.
///
/// With a `deliveryInterval`, the expected updates (``expected(_:)``, ``expectedDeviceMotionUpdates``)
/// are those a consumer at that interval is owed: each stream thinned by timestamp as
/// `CMMotionManager` thins it (`Decimator`, with the period of the rate the source granted). A source
/// may run faster than asked: a phone at its own rate, or device motion, whose fusion runs at
/// 100 Hz or more and is delivered at the interval asked.
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
        /// The rates the source granted, else those asked for, Hz.
        var rates: [SensorKind: Double] = [:]
        var last: [SensorKind: Double] = [:]
        var thinned: [SensorKind: Decimator] = [:]
        var thinnedCounts: [SensorKind: Int] = [:]
        var deviceMotion: Decimator?
        var thinnedDeviceMotion = 0
    }
    private let counts: Locked<Counts>

    /// Counts what `inner` emits; with `deliveryInterval` (seconds), also what a consumer at that
    /// interval is owed.
    package init(_ inner: any SensorSource, deliveryInterval: Double? = nil) {
        self.inner = inner
        var c = Counts()
        if let deliveryInterval {
            for kind in SensorKind.allCases { c.thinned[kind] = Decimator(interval: deliveryInterval) }
            c.deviceMotion = Decimator(interval: deliveryInterval)
        }
        counts = Locked(c)
    }

    /// The updates of `kind` a consumer at the delivery interval is owed (every one emitted without a
    /// delivery interval).
    package func expected(_ kind: SensorKind) -> Int {
        counts.withLock { $0.deviceMotion == nil ? $0.perSensor[kind, default: 0] : $0.thinnedCounts[kind, default: 0] }
    }

    /// The device-motion updates a consumer at the delivery interval is owed (``deviceMotionUpdates``
    /// without a delivery interval).
    package var expectedDeviceMotionUpdates: Int {
        counts.withLock { $0.deviceMotion == nil ? $0.deviceMotionUpdates : $0.thinnedDeviceMotion }
    }

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
        counts.withLock { c in c.rates.merge(demand.rates) { granted, _ in granted } }
        let granted = try inner.apply(demand) { [self] event in
            if case .sample(let s) = event {
                counts.withLock { c in
                    if s.sensor == .accelerometer { c.sawAccelerometer = true }
                    guard s.timestamp <= c.cutoff else { return }
                    c.emitted += 1
                    c.perSensor[s.sensor, default: 0] += 1
                    if s.sensor == .gyro, c.sawAccelerometer { c.deviceMotionUpdates += 1 }
                    // What the manager would pass on: finite, newer than the last of its sensor, due.
                    guard c.deviceMotion != nil, s.timestamp.isFinite, s.value.isFinite,
                          c.last[s.sensor].map({ s.timestamp > $0 }) ?? true else { return }
                    c.last[s.sensor] = s.timestamp
                    let period = 1 / (c.rates[s.sensor] ?? 100)
                    if c.thinned[s.sensor]?.accept(s.timestamp, sourcePeriod: period) == true { c.thinnedCounts[s.sensor, default: 0] += 1 }
                    if s.sensor == .gyro, c.sawAccelerometer, c.deviceMotion?.accept(s.timestamp, sourcePeriod: period) == true {
                        c.thinnedDeviceMotion += 1
                    }
                }
            }
            sink(event)
        }
        counts.withLock { c in c.rates.merge(granted) { _, granted in granted } }
        return granted
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
