import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import MotionTestSupport
import Testing

/// An evdev source on its in-memory twin (a Joy-Con's IMU node): a run pushes `seconds` of frames at
/// the node's 200 Hz, each with its `MSC_TIMESTAMP`, and awaits their samples; the end is an unplug.
final class EvdevSubject: SourceContractSubject {
    let twin: InMemoryEvdevDevice
    let evdev: EvdevSource
    var source: any SensorSource { evdev }
    var sensor: SensorKind { .accelerometer }
    var rates: (first: Double, second: Double) { (100, 50) }
    /// Frames pushed so far.
    private let frames = Locked(0)

    init() throws {
        let (identity, _) = try Evtest.joycon()
        twin = InMemoryEvdevDevice(identity: identity)
        evdev = EvdevSource(node: identity, opener: twin)
    }

    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        let count = Int((seconds * 200).rounded())
        let first = frames.withLock { f -> Int in defer { f += count }; return f }
        var events: [InputEvent] = []
        for k in first..<(first + count) {
            let time = 1000 + Double(k) / 200
            events += [
                InputEvent(time: time, type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X, value: Int32(k % 7)),
                InputEvent(time: time, type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z, value: 4096),
                InputEvent(time: time, type: EvdevCode.EV_MSC, code: EvdevCode.MSC_TIMESTAMP, value: Int32(truncatingIfNeeded: k * 5000)),
                InputEvent(time: time, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0),
            ]
        }
        let before = recorder.samples.count
        twin.node.push(InputEvent.encode(events))
        guard running else { return }
        let arrived = await recorder.waitFor { events in
            events.reduce(0) { if case .sample = $1 { $0 + 1 } else { $0 } } >= before + count
        }
        #expect(arrived, "the evdev source did not deliver the frames pushed")
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool { false }

    func end(recorder: EventRecorder) async -> Bool {
        twin.node.unplug()
        let ended = await recorder.waitFor { $0.contains(where: \.isTerminal) }
        #expect(ended, "unplugging did not end the source")
        return true
    }
}

@Suite struct EvdevContractTests {
    @Test func evdevKeepsTheContract() async {
        let problems = await SourceContract.check { try EvdevSubject() }
        #expect(problems == [], "\(problems)")
    }
}
