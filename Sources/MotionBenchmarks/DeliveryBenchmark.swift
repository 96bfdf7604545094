import Foundation
import MotionSources
import OpenCoreMotion

/// Push delivery from the simulated device to an `OperationQueue` handler (`coremotion bench
/// delivery`): the accelerometer at a fixed rate through a `CMMotionManager`, latency from a sample's
/// timestamp to the start of its handler call, and what was lost or reordered.
package enum DeliveryBenchmark {
    /// What one run measured (the JSON of `bench delivery --json`).
    package struct Result: Codable, Sendable {
        /// Accelerometer rate asked for, Hz.
        package var rate_hz: Double
        /// Seconds measured.
        package var seconds: Double
        /// Samples the source emitted up to the cut-off.
        package var expected: Int
        /// Updates the handler received up to the cut-off.
        package var delivered: Int
        /// `expected − delivered`, at least 0.
        package var lost: Int
        /// Updates stamped at or before the one before them.
        package var out_of_order: Int
        /// Latency from timestamp to handler, µs.
        package var latency_us: Percentiles
    }

    /// Runs for `seconds` (≤ 3600) at `rate` Hz (≤ 1000); with `slowHandler` the handler sleeps 50 ms
    /// once a second (a slow handler must lose nothing).
    package static func run(rate: Double, seconds: Double, slowHandler: Bool) async throws -> Result {
        let source = CountingSource(SimulatedDevice(scenario: .handheld))
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 1 / rate
        let tally = Locked(DeliveryTally(latencyCapacity: Int(min(rate * seconds * 1.2, 5_000_000))))  // safe: bounded
        let nextSleep = Locked(0.0)
        let cutoff = Locked(Double.infinity)
        let queue = OperationQueue()
        manager.startAccelerometerUpdates(to: queue) { data, _ in
            let now = ProcessInfo.processInfo.systemUptime
            guard let data else { return }
            let limit = cutoff.withLock { $0 }
            tally.withLock { $0.record(timestamp: data.timestamp, now: now, cutoff: limit, recordLatency: true) }
            let sleep = slowHandler && nextSleep.withLock { next in
                defer { if now >= next { next = now + 1 } }
                return now >= next
            }
            if sleep { usleep(50_000) }
        }
        try await Task.sleep(nanoseconds: UInt64(min(max(seconds, 0), 3600) * 1e9))  // safe: clamped
        let end = MonotonicClock.now()
        cutoff.withLock { $0 = end }
        source.setCutoff(end)
        try await tally.waitForDrain()
        manager.stopAccelerometerUpdates()
        return tally.withLock { tally in
            let expected = source.emitted
            return Result(rate_hz: rate, seconds: seconds, expected: expected, delivered: tally.delivered,
                          lost: max(0, expected - tally.delivered), out_of_order: tally.outOfOrder,
                          latency_us: Percentiles(tally.latencies))
        }
    }
}
