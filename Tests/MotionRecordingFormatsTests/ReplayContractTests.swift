import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources
import MotionTestSupport
import Testing

/// A 5 s recording of the gyro at 100 Hz, played in real time on a ``ManualClock``: each run advances
/// the clock and returns once the player has delivered what is due and sleeps again; the end is the
/// recording's own `.finished`.
struct ReplaySubject: SourceContractSubject {
    static let duration = 5.0
    let clock = ManualClock(start: 100)
    let replay: ReplaySource
    var source: any SensorSource { replay }
    var sensor: SensorKind { .gyro }
    var rates: (first: Double, second: Double) { (100, 30) }

    init() throws {
        var text = "timestamp,sensor,x,y,z\n"
        for k in 0..<Int(Self.duration * 100) {
            text += "\(10 + Double(k) / 100),gyro,0.01,0.02,0.03\n"
        }
        let path = NSTemporaryDirectory() + "replay-contract-\(UUID().uuidString).csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        replay = try ReplaySource(path: path, clock: .realTime, notice: { _ in }, sourceClock: clock)
    }

    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        // The worker reads the clock when it starts: let it, before time moves.
        if running { _ = await clock.settle(parked: 1) }
        clock.advance(by: seconds)
        let settled = await clock.settle(parked: running ? 1 : 0)
        #expect(settled, "the player did not settle")
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool { false }

    func end(recorder: EventRecorder) async -> Bool {
        // The player reads the clock when it starts: let it, before time moves.
        _ = await clock.settle(parked: 1)
        clock.advance(by: Self.duration + 1)
        let ended = await recorder.waitFor { $0.contains(where: \.isTerminal) }
        #expect(ended, "the recording did not finish")
        #expect(await clock.settle(parked: 0))
        return true
    }
}

@Suite struct ReplayContractTests {
    @Test func replayKeepsTheContract() async {
        let problems = await SourceContract.check { try ReplaySubject() }
        #expect(problems == [], "\(problems)")
    }

    /// In real time on the manual clock, playback starts 0.25 s after the demand and delivers exactly
    /// the samples due: 0.25 s lead, then 0.5 s at 100 Hz is 51 samples.
    @Test func replayPacesOnTheManualClock() async throws {
        let subject = try ReplaySubject()
        let recorder = EventRecorder()
        try subject.replay.apply(SensorDemand(rates: [.gyro: 100]), sink: recorder.sink)
        #expect(await subject.clock.settle(parked: 1))
        #expect(recorder.samples.isEmpty)
        subject.clock.advance(to: 100.755)
        #expect(await subject.clock.settle(parked: 1))
        #expect(recorder.samples.count == 51)
        #expect(recorder.samples.first?.timestamp == 100.25)
        try subject.replay.apply(.none, sink: recorder.sink)
    }
}
