import MotionFusion
import MotionSources
import MotionTestSupport
import Testing

/// The simulator paced by a ``ManualClock``: time moves only when the contract runs it, and each run
/// returns once the worker has delivered everything due and is asleep again.
struct SimulatorSubject: SourceContractSubject {
    let clock = ManualClock(start: 100)
    let device: SimulatedDevice
    var source: any SensorSource { device }
    var sensor: SensorKind { .gyro }
    var rates: (first: Double, second: Double) { (100, 50) }

    init() {
        device = SimulatedDevice(options: SimulationOptions(scenario: .handheld, seed: 3), sourceClock: clock)
    }

    /// Advances in steps of at most 0.5 s: a worker that finds itself more than a second behind drops
    /// the backlog (``SimulationEngine/maximumBacklog``, a starved real-time worker), which a single
    /// jump of the clock would look like.
    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        var left = seconds
        while left > 0 {
            // The worker reads the clock when it (re)starts: let it, before time moves.
            if running { _ = await clock.settle(parked: 1) }
            clock.advance(by: min(left, 0.5))
            left -= 0.5
            let settled = await clock.settle(parked: running ? 1 : 0)
            #expect(settled, "the simulator's worker did not settle")
        }
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool { false }
    func end(recorder: EventRecorder) async -> Bool { false }
}

/// ``ManualSource`` driven by hand: a run emits samples at the demanded rate on the test's thread.
final class ManualSourceSubject: SourceContractSubject {
    let manual = ManualSource(sensors: [.accelerometer, .gyro], minimumRate: 1, maximumRate: 200)
    var source: any SensorSource { manual }
    var sensor: SensorKind { .accelerometer }
    var rates: (first: Double, second: Double) { (100, 25) }
    private let time = Locked(0.0)

    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        let rate = manual.demand.rates[sensor] ?? 100
        let count = Int((seconds * rate).rounded())
        for _ in 0..<count {
            let t = time.withLock { t -> Double in t += 1 / rate; return t }
            manual.emit(RawSample(sensor: sensor, timestamp: t, value: Vector3(0, 0, -1)))
        }
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool {
        manual.interrupt(SourceError(.io, "no data for 2 s"))
        await run(seconds: 0.1, running: true, recorder: recorder)
        return true
    }

    func end(recorder: EventRecorder) async -> Bool {
        manual.finish()
        manual.fail(SourceError(.deviceRemoved, "unplugged after the end"))
        return true
    }
}

@Suite struct SourceContractTests {
    @Test func capabilityClampsBadRatesToTheFastest() {
        let c = SensorCapability(minimumRate: 1, maximumRate: 200)
        #expect(c.clamp(rate: .nan) == 200)
        #expect(c.clamp(rate: -5) == 200)
        #expect(c.clamp(rate: 0.01) == 1)
        #expect(c.clamp(rate: 1_000) == 200)
        #expect(c.clamp(rate: 50) == 50)
    }

    @Test func simulatorKeepsTheContract() async {
        let problems = await SourceContract.check { SimulatorSubject() }
        #expect(problems == [], "\(problems)")
    }

    @Test func manualSourceKeepsTheContract() async {
        let problems = await SourceContract.check { ManualSourceSubject() }
        #expect(problems == [], "\(problems)")
    }

    @Test func aScriptedBarometerKeepsTheContract() async {
        let problems = await SourceContract.check {
            let barometer = ScriptedBarometer()
            return BarometerSubject(barometer, silence: { barometer.setSilent($0) }, fail: { barometer.fail() })
        }
        #expect(problems == [], "\(problems)")
    }

    @Test func theSimulatedBarometerKeepsTheContract() async {
        let problems = await SourceContract.check { BarometerSubject(SimulatedBarometerSource(scenario: .stairs, seed: 5)) }
        #expect(problems == [], "\(problems)")
    }

    /// A barometer is read on the grid of its rate from the moment it starts: 25 Hz for one second of
    /// the manual clock are the 26 readings at 100, 100.04 … 101, each stamped with its instant and
    /// carrying the pressure read then. Re-rated to 10 Hz, the next reading comes one new period after the
    /// last. Rates beyond 1…50 Hz are clamped; other sensors are not granted.
    @Test func aBarometerIsReadOnTheGridOfItsRate() async throws {
        let barometer = ScriptedBarometer()
        let subject = BarometerSubject(barometer)
        let recorder = EventRecorder()
        let granted = try subject.polled.apply(SensorDemand(rates: [.pressure: 25, .gyro: 100]), sink: recorder.sink)
        #expect(granted == [.pressure: 25])
        await subject.run(seconds: 1, running: true, recorder: recorder)
        let samples = recorder.samples
        #expect(samples.count == 26)
        for (k, s) in samples.enumerated() {
            #expect(s.sensor == .pressure)
            #expect(abs(s.timestamp - (100 + 0.04 * Double(k))) < 1e-9, "reading \(k) at \(s.timestamp)")
            #expect(abs(s.value.x - (100 + 0.001 * Double(k))) < 1e-12 && s.value.y == 0 && s.value.z == 0)
        }
        #expect(try subject.polled.apply(SensorDemand(rates: [.pressure: 10]), sink: recorder.sink) == [.pressure: 10])
        await subject.run(seconds: 0.5, running: true, recorder: recorder)
        let after = recorder.samples.dropFirst(26).map(\.timestamp)
        #expect(after.count == 5)
        #expect(zip(after, [101.1, 101.2, 101.3, 101.4, 101.5]).allSatisfy { abs($0 - $1) < 1e-9 }, "\(after)")
        #expect(try subject.polled.apply(SensorDemand(rates: [.pressure: 1_000]), sink: recorder.sink) == [.pressure: 50])
        #expect(try subject.polled.apply(.none, sink: recorder.sink) == [:])
        #expect(try subject.polled.apply(SensorDemand(rates: [.gyro: 100]), sink: recorder.sink) == [:])
    }

    /// A barometer with nothing to say (NaN: a phone's, before its first reading or gone quiet) is not a
    /// failure: nothing is delivered before a first reading; after one, the first empty read sends one
    /// `.interrupted`, however long the silence lasts, and the next reading resumes.
    @Test func aSilentBarometerInterruptsOnceAndResumes() async throws {
        let barometer = ScriptedBarometer()
        barometer.setSilent(true)
        let subject = BarometerSubject(barometer)
        let recorder = EventRecorder()
        try subject.polled.apply(SensorDemand(rates: [.pressure: 10]), sink: recorder.sink)
        await subject.run(seconds: 1, running: true, recorder: recorder)
        #expect(recorder.events.isEmpty, "nothing before the first reading")
        barometer.setSilent(false)
        await subject.run(seconds: 0.3, running: true, recorder: recorder)
        barometer.setSilent(true)
        await subject.run(seconds: 2, running: true, recorder: recorder)
        barometer.setSilent(false)
        await subject.run(seconds: 0.3, running: true, recorder: recorder)
        try subject.polled.apply(.none, sink: recorder.sink)
        let kinds = recorder.events.map { event -> String in
            switch event {
            case .sample: "s"
            case .interrupted: "i"
            case .failed: "f"
            case .finished: "e"
            }
        }.joined()
        #expect(kinds == "sssisss", "\(kinds)")
    }

    /// On the manual clock a simulated second is exactly the samples due in it: 100 Hz from t = 100
    /// to t = 101 inclusive is 101 samples, with no real time passing and nothing polled.
    @Test func simulatorOnTheManualClockDeliversExactlyWhatIsDue() async throws {
        let subject = SimulatorSubject()
        let recorder = EventRecorder()
        try subject.device.apply(SensorDemand(rates: [.gyro: 100]), sink: recorder.sink)
        #expect(await subject.clock.settle(parked: 1))
        #expect(recorder.samples.map(\.timestamp) == [100])
        subject.clock.advance(to: 101)
        #expect(await subject.clock.settle(parked: 1))
        let samples = recorder.samples
        #expect(samples.count == 101)
        #expect(samples.last?.timestamp == 101)
        try subject.device.apply(.none, sink: recorder.sink)
        recorder.close()
        subject.clock.advance(to: 200)
        #expect(await subject.clock.settle(parked: 0))
        #expect(recorder.samples.count == 101)
        #expect(recorder.lateCalls == 0)
    }
}
