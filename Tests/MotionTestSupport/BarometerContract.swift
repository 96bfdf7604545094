import MotionSources

/// A barometer read on demand whose readings a test scripts: 100 kPa plus 1 Pa per read, NaN while
/// ``silent`` (a phone's barometer with nothing new), and a thrown `.deviceRemoved` once ``fail()`` was
/// called (a device unplugged).
///
/// ## Threading
/// Every member is thread-safe.
public final class ScriptedBarometer: BarometerSource {
    public let identifier = "scripted"
    public let name = "Scripted barometer"
    public let virtualStartTime: Double? = nil

    private struct State {
        var reads = 0
        var silent = false
        var failing = false
    }
    private let state = Locked(State())

    /// A barometer on the real clock reading 100 kPa, then 1 Pa more each read.
    public init() {}

    /// Reads begun so far.
    public var reads: Int { state.withLock { $0.reads } }
    /// Whether reads return NaN (no reading) instead of a pressure.
    public func setSilent(_ silent: Bool) { state.withLock { $0.silent = silent } }
    /// From now on every read throws `.deviceRemoved`.
    public func fail() { state.withLock { $0.failing = true } }

    public func readPressure(at timestamp: Double) throws(SourceError) -> Double {
        let (k, silent, failing) = state.withLock { s -> (Int, Bool, Bool) in
            defer { s.reads += 1 }
            return (s.reads, s.silent, s.failing)
        }
        if failing { throw SourceError(.deviceRemoved, "the scripted barometer was unplugged") }
        return silent ? .nan : 100 + 0.001 * Double(k)
    }
}

/// A barometer on the real clock, here a ``ManualClock``, run as a ``PolledBarometerSource`` under the
/// ``SourceContract``: a run advances the clock in steps of 10 ms and returns once the reading thread
/// sleeps again. `silence` and `fail` are what the family can do to provoke an interruption (readings
/// stop coming, then come back) and an end (the device gone); `nil` when it cannot.
public struct BarometerSubject: SourceContractSubject {
    package let clock: ManualClock
    public let polled: PolledBarometerSource
    public var source: any SensorSource { polled }
    public var sensor: SensorKind { .pressure }
    public var rates: (first: Double, second: Double) { (25, 10) }
    private let silence: (@Sendable (Bool) -> Void)?
    private let fail: (@Sendable () -> Void)?
    private let problems = Locked<[String]>([])
    public var drivingProblems: [String] { problems.withLock { $0 } }

    /// A subject reading `barometer` on a ``ManualClock`` starting at 100 s.
    public init(_ barometer: any BarometerSource, silence: (@Sendable (Bool) -> Void)? = nil, fail: (@Sendable () -> Void)? = nil) {
        clock = ManualClock(start: 100)
        polled = PolledBarometerSource(barometer: barometer, clock: clock)
        self.silence = silence
        self.fail = fail
    }

    public func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        let settled = await clock.run(seconds: seconds, step: 0.01, parked: running ? 1 : 0)
        if !settled { problems.withLock { $0.append("the barometer's reading thread did not settle") } }
    }

    public func interruptAndResume(recorder: EventRecorder) async -> Bool {
        guard let silence else { return false }
        silence(true)
        await run(seconds: 0.5, running: true, recorder: recorder)
        silence(false)
        await run(seconds: 0.5, running: true, recorder: recorder)
        return true
    }

    public func end(recorder: EventRecorder) async -> Bool {
        guard let fail else { return false }
        await run(seconds: 0.2, running: true, recorder: recorder)
        fail()
        // Past the next reading, which fails and ends the thread.
        clock.advance(by: 0.1)
        let ended = await recorder.waitFor { $0.contains(where: \.isTerminal) }
        if !ended { problems.withLock { $0.append("the failing barometer did not end the source") } }
        return true
    }
}
