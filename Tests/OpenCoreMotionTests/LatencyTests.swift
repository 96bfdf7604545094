import Foundation
import MotionSources
@testable import OpenCoreMotion
import Testing

@Suite struct MaximumLatencyTests {
    @Test func theSourceRunsWithTheSmallestLatencyAnyConsumerAccepts() async {
        let source = ObservedSource()
        // Shared with the reading task: like Apple's, the manager is not `Sendable`, but it is callable
        // from any thread (its state is behind a lock).
        nonisolated(unsafe) let manager = CMMotionManager(source: source)
        let batched = Task { for try await _ in manager.gyroUpdates(interval: 0.01, maximumLatency: 0.2) {} }
        #expect(await source.until { source.demand.maximumLatency == 0.2 })
        manager.startGyroUpdates()  // Apple's API: every sample at once.
        #expect(await source.until { source.demand.maximumLatency == 0 })
        manager.stopGyroUpdates()
        #expect(await source.until { source.demand.maximumLatency == 0.2 })
        batched.cancel()
        #expect(await source.until { source.demand.isEmpty })
    }

    /// With a latency allowed, the simulator wakes once per batch: samples arrive in bursts, yet
    /// every one arrives, in order, with its own timestamp, and none later than the latency allows.
    @Test func batchedSamplesKeepTheirTimestampsAndArriveWithinTheLatency() async throws {
        let device = SimulatedDevice(scenario: .still)
        let arrivals = Recorder<(timestamp: Double, delay: Double)>()
        try device.apply(SensorDemand(rates: [.accelerometer: 100], maximumLatency: 0.1)) { event in
            if case .sample(let s) = event {
                arrivals.append((s.timestamp, MonotonicClock.now() - s.timestamp))
            }
        }
        #expect(await arrivals.until { arrivals.count >= 60 })
        try device.apply(.none) { _ in }
        let got = arrivals.all
        for (a, b) in zip(got, got.dropFirst()) {
            #expect(abs((b.timestamp - a.timestamp) - 0.01) < 1e-6, "the 100 Hz spacing is kept")
        }
        let delays = got.map(\.delay)
        // The simulator's thread runs on the real clock: on a loaded machine (CI under ThreadSanitizer) it
        // may wake tens of milliseconds late. Holding a sample for twice the latency still fails.
        #expect(delays.max()! < 0.1 + 0.1, "no sample waits much longer than the latency: \(delays.max()!)")
        #expect(delays.max()! > 0.08, "samples were held back to be delivered together")
        #expect(delays.min()! < 0.02, "the newest sample of a batch goes out at once")
    }
}
