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
        // On a clock the test moves in 5 ms steps, each step settled before the next, so "how late"
        // is read exactly: on the real clock this test failed whenever CI's load woke the worker late.
        let clock = ManualClock(start: 100)
        let device = SimulatedDevice(options: SimulationOptions(scenario: .still), sourceClock: clock)
        let arrivals = Recorder<(timestamp: Double, delay: Double)>()
        try device.apply(SensorDemand(rates: [.accelerometer: 100], maximumLatency: 0.1)) { event in
            if case .sample(let s) = event {
                arrivals.append((s.timestamp, clock.now() - s.timestamp))
            }
        }
        #expect(await clock.settle(parked: 1))
        for _ in 0..<200 {
            clock.advance(by: 0.005)
            #expect(await clock.settle(parked: 1))
        }
        try device.apply(.none) { _ in }
        let got = arrivals.all
        #expect(got.count >= 90, "one second of 100 Hz, less at most the last batch held back: \(got.count)")
        for (a, b) in zip(got, got.dropFirst()) {
            #expect(abs((b.timestamp - a.timestamp) - 0.01) < 1e-6, "the 100 Hz spacing is kept")
        }
        let delays = got.map(\.delay)
        let step = 0.005 + 1e-9
        #expect(delays.max()! <= 0.1 + step, "no sample waits longer than the latency: \(delays.max()!)")
        #expect(delays.max()! > 0.09, "samples were held back to be delivered together")
        #expect(delays.min()! <= step, "the newest sample of a batch goes out at once")
        // Bursts, not a trickle: far fewer distinct arrival instants than samples.
        let instants = Set(got.map { (($0.timestamp + $0.delay) * 1000).rounded() })
        #expect(instants.count <= got.count / 5, "\(instants.count) wake-ups for \(got.count) samples")
    }
}
