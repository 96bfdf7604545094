import MotionFusion
@testable import MotionSources
import Testing

/// The threaded device: clamping, determinism on the virtual clock, real-time pacing, and the
/// stop handshake.
@Suite struct SimulatedDeviceTests {
    @Test func describesItself() {
        let device = SimulatedDevice(scenario: .walk, seed: 3, clock: .virtual(startTime: 0))
        #expect(device.info.identifier == "sim:walk")
        #expect(device.info.sensors[.accelerometer]?.maximumRate == 1000)
        #expect(device.info.sensors[.magnetometer]?.maximumRate == 100)
        #expect(device.info.sensors[.gyro]?.range == 2000 * Double.pi / 180)
    }

    @Test func ratesAreClampedToTheCapability() throws {
        let device = SimulatedDevice(scenario: .still, clock: .virtual(startTime: 0))
        let recorder = Recorder()
        let rates = try device.apply(
            SensorDemand(rates: [.accelerometer: 5000, .gyro: .nan, .magnetometer: 0.001]), sink: recorder.sink)
        #expect(rates == [.accelerometer: 1000, .gyro: 1000, .magnetometer: 1])
        try device.apply(.none, sink: recorder.sink)
    }

    @Test func virtualClockMatchesThePureSimulatorAndStopsForGood() async throws {
        let device = SimulatedDevice(scenario: .handheld, seed: 17, clock: .virtual(startTime: 50))
        let recorder = Recorder()
        try device.apply(SensorDemand(rates: [.accelerometer: 100, .gyro: 100]), sink: recorder.sink)
        try await recorder.wait(forAtLeast: 400)
        try device.apply(.none, sink: recorder.sink)
        let countAtStop = recorder.count
        try await Task.sleep(for: .milliseconds(30))
        #expect(recorder.count == countAtStop, "no sink call after apply(.none) returned")
        #expect(countAtStop >= 400)

        var options = SimulationOptions(scenario: .handheld, seed: 17)
        options.rates = [.accelerometer: 100, .gyro: 100]
        var reference = MotionSimulator(options: options, startTime: 50)
        let delivered = recorder.samples
        #expect(delivered == collect(&reference, count: delivered.count))
        #expect(delivered.first?.timestamp == 50)
    }

    @Test func restartingOnTheVirtualClockContinuesTheStream() async throws {
        let device = SimulatedDevice(scenario: .rotate, seed: 2, clock: .virtual(startTime: 0))
        let recorder = Recorder()
        try device.apply(SensorDemand(rates: [.gyro: 200]), sink: recorder.sink)
        try await recorder.wait(forAtLeast: 50)
        try device.apply(.none, sink: recorder.sink)
        try device.apply(SensorDemand(rates: [.gyro: 50]), sink: recorder.sink)
        try await recorder.wait(forAtLeast: recorder.count + 50)
        try device.apply(.none, sink: recorder.sink)
        let stamps = recorder.samples.map(\.timestamp)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 })
        let gaps = zip(stamps, stamps.dropFirst()).map { $1 - $0 }
        #expect(abs(gaps.first! - 0.005) < 1e-9 && abs(gaps.last! - 0.02) < 1e-9)
    }

    @Test func stoppingFromInsideTheSinkStopsImmediately() async throws {
        let device = SimulatedDevice(scenario: .still, clock: .virtual(startTime: 0))
        let recorder = Recorder()
        let inner = recorder.sink
        try device.apply(SensorDemand(rates: [.accelerometer: 1000])) { [device] event in
            inner(event)
            if case .sample(let s) = event, s.timestamp >= 0.0089 {
                _ = try? device.apply(.none, sink: inner)
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.count == 10)
    }

    @Test func reratingFromAnotherThreadSwitchesSinksCleanly() async throws {
        let device = SimulatedDevice(scenario: .walk, clock: .virtual(startTime: 0))
        let first = Recorder(), second = Recorder()
        try device.apply(SensorDemand(rates: [.accelerometer: 100]), sink: first.sink)
        try await first.wait(forAtLeast: 100)
        try device.apply(SensorDemand(rates: [.accelerometer: 100, .magnetometer: 10]), sink: second.sink)
        try await second.wait(forAtLeast: 1)
        let frozen = first.count
        try await second.wait(forAtLeast: 100)
        try device.apply(.none, sink: second.sink)
        #expect(first.count == frozen, "the old sink is not called after apply returns")
        let all = first.samples + second.samples
        let accel = samples(.accelerometer, from: all).map(\.timestamp)
        #expect(zip(accel, accel.dropFirst()).allSatisfy { abs($1 - $0 - 0.01) < 1e-9 }, "unchanged sensor keeps its grid")
        #expect(second.samples.contains { $0.sensor == .magnetometer })
    }

    @Test func realTimeDeliversAtTheRequestedRateWithMonotonicTimestamps() async throws {
        let device = SimulatedDevice(scenario: .handheld, seed: 1, clock: .realTime)
        let recorder = Recorder()
        let begin = MonotonicClock.now()
        try device.apply(SensorDemand(rates: [.accelerometer: 100, .gyro: 100]), sink: recorder.sink)
        try await Task.sleep(for: .milliseconds(300))
        try device.apply(.none, sink: recorder.sink)
        let end = MonotonicClock.now()
        let delivered = recorder.samples
        let accel = samples(.accelerometer, from: delivered)
        // The test's own sleep may overrun on a busy machine: compare with the time really elapsed.
        let expected = (end - begin) * 100
        #expect(Double(accel.count) >= expected * 0.5 - 2 && Double(accel.count) <= expected + 2,
                "≈\(expected) samples in \(end - begin) s, got \(accel.count)")
        #expect(samples(.gyro, from: delivered).count >= accel.count - 1)
        for s in delivered { #expect(s.timestamp >= begin - 0.011 && s.timestamp <= end) }
        let stamps = accel.map(\.timestamp)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { abs($1 - $0 - 0.01) < 1e-6 })
        let truth = device.truth(at: stamps.last!)
        #expect(abs(truth.gravity.length - 1) < 1e-9)
    }

    /// Issue 20: a stop must not throw away what was already sampled. With a latency allowed the worker
    /// holds due samples back (here up to 0.5 s); a stream stopped at instant T still gets every sample
    /// of its grid up to T, in order, before `apply(.none)` returns. (Before: the held samples were
    /// dropped, cutting the end off every stream: `publish --duration 10` sent 990 of 1000 per sensor;
    /// here the stop comes before the first 0.5 s wake-up, so nothing at all was delivered.)
    @Test func aStopDeliversTheSamplesAlreadyDueThatTheLatencyHeldBack() async throws {
        let device = SimulatedDevice(scenario: .still, clock: .realTime)
        let recorder = Recorder()
        let begin = MonotonicClock.now()
        try device.apply(SensorDemand(rates: [.accelerometer: 100, .gyro: 100], maximumLatency: 0.5), sink: recorder.sink)
        try await Task.sleep(for: .milliseconds(200))
        let stop = MonotonicClock.now()
        try device.apply(.none, sink: recorder.sink)
        let delivered = recorder.samples
        for sensor in [SensorKind.accelerometer, .gyro] {
            let t = samples(sensor, from: delivered).map(\.timestamp)
            // Every grid instant from the start to the stop: no hole, none missing at the end.
            #expect(!t.isEmpty && t.first! >= begin - 0.0101, "\(sensor): \(t.count) samples")
            #expect((t.last ?? 0) > stop - 0.0101, "\(sensor): last \((t.last ?? 0) - begin) s, stopped at \(stop - begin) s")
            #expect(zip(t, t.dropFirst()).allSatisfy { abs($1 - $0 - 0.01) < 1e-6 }, "\(sensor): a hole")
        }
        // And nothing after the stop returned.
        let count = recorder.count
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.count == count)
    }

    @Test func releasingARunningDeviceStopsItsThread() async throws {
        let recorder = Recorder()
        do {
            let device = SimulatedDevice(scenario: .shake, clock: .realTime)
            try device.apply(SensorDemand(rates: [.gyro: 200]), sink: recorder.sink)
            try await Task.sleep(for: .milliseconds(30))
        }
        let count = recorder.count
        try await Task.sleep(for: .milliseconds(30))
        #expect(recorder.count == count)
    }
}

@Suite struct SimulatedDeviceSpecificationTests {
    @Test func parsesSourceSpecifications() {
        #expect(SimulatedDevice(specification: "sim", clock: .virtual(startTime: 0))?.info.identifier == "sim:handheld")
        #expect(SimulatedDevice(specification: "sim:walk", clock: .virtual(startTime: 0))?.options.scenario == .walk)
        #expect(SimulatedDevice(specification: "sim:shake:7", clock: .virtual(startTime: 0))?.options.seed == 7)
        for bad in ["", "sim:", "sim:jog", "sim:walk:x", "replay:/tmp/a.csv", "sim:walk:1:2"] {
            #expect(SimulatedDevice(specification: bad, clock: .virtual(startTime: 0)) == nil, "\(bad)")
        }
    }
}

@Suite struct SimulatedDeviceInfoTests {
    @Test func detailsNameTheNoiseLevels() {
        let device = SimulatedDevice(scenario: .still, clock: .virtual(startTime: 0))
        let details = Dictionary(uniqueKeysWithValues: device.info.details)
        #expect(details["scenario"] == "still")
        #expect(details["gyro noise"] == "0.007 °/s/√Hz")
        #expect(details["accelerometer noise"] == "180.0 µg/√Hz")
    }
}
