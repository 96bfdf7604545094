import MotionSources

/// Records what a source hands its sink, and notices any call that begins after the test said the
/// source was stopped (``close()``).
///
/// Tests await events through ``waitFor(_:timeout:)``: the sink resumes the waiter, nothing polls.
///
/// ## Threading
/// The sink may be called from any thread; every member is thread-safe.
public final class EventRecorder: Sendable {
    private struct Waiter {
        var ready: @Sendable ([SourceEvent]) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
        var id: Int
    }

    private struct State {
        var events: [SourceEvent] = []
        var closed = false
        var lateCalls = 0
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let state = Locked(State())

    /// An empty recorder.
    public init() {}

    /// The sink to hand a source.
    public var sink: @Sendable (SourceEvent) -> Void {
        { [self] event in
            state.withLock { s in
                if s.closed { s.lateCalls += 1 }
                s.events.append(event)
                let events = s.events
                s.waiters.removeAll { waiter in
                    guard waiter.ready(events) else { return false }
                    waiter.continuation.resume(returning: true)
                    return true
                }
            }
        }
    }

    /// From now on, any sink call counts as late (see ``lateCalls``): call it when `apply(.none)` returns.
    public func close() { state.withLock { $0.closed = true } }
    /// Sink calls that began after ``close()``.
    public var lateCalls: Int { state.withLock { $0.lateCalls } }
    /// Every event so far, in order.
    public var events: [SourceEvent] { state.withLock { $0.events } }
    /// The samples so far, in order.
    public var samples: [RawSample] {
        events.compactMap { if case .sample(let s) = $0 { s } else { nil } }
    }

    /// Waits until the events so far satisfy `ready`, or `timeout` real seconds (default 30) pass.
    /// - Returns: whether `ready` was satisfied.
    public func waitFor(_ ready: @escaping @Sendable ([SourceEvent]) -> Bool, timeout: Double = 30) async -> Bool {
        let id = state.withLock { s -> Int in s.nextID += 1; return s.nextID }
        let watchdog = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64((timeout.isFinite ? min(max(timeout, 0), 86_400) : 0) * 1e9))  // safe: finite, clamped to 0…1 day
            self?.expire(id)
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            state.withLock { s in
                if ready(s.events) {
                    continuation.resume(returning: true)
                } else {
                    s.waiters.append(Waiter(ready: ready, continuation: continuation, id: id))
                }
            }
        }
    }

    private func expire(_ id: Int) {
        state.withLock { s in
            s.waiters.removeAll { waiter in
                guard waiter.id == id else { return false }
                waiter.continuation.resume(returning: false)
                return true
            }
        }
    }
}

extension SourceEvent {
    /// `true` for `.failed` and `.finished`.
    public var isTerminal: Bool {
        switch self {
        case .failed, .finished: true
        case .sample, .interrupted: false
        }
    }
}

/// One source under the contract, with the means to drive it: what differs between families.
///
/// Each check of ``SourceContract`` makes a fresh subject.
public protocol SourceContractSubject: Sendable {
    /// The source.
    var source: any SensorSource { get }
    /// The sensor the checks demand (one the source carries).
    var sensor: SensorKind { get }
    /// Two rates (Hz) the source supports, for the rate change: `first` then `second`.
    var rates: (first: Double, second: Double) { get }
    /// Lets `seconds` of the source's time pass while it runs (or, with `running` false, after it was
    /// stopped), and returns once everything due in that time has reached the sink: by advancing a
    /// ``ManualClock`` and settling it, by emitting by hand, or by awaiting the samples.
    func run(seconds: Double, running: Bool, recorder: EventRecorder) async
    /// Makes the source report an interruption and then resume, and returns once a sample after the
    /// interruption has arrived; `false` when the family has no interruption to provoke.
    func interruptAndResume(recorder: EventRecorder) async -> Bool
    /// Makes the source end on its own (a recording's end, a device unplugged), and returns once its
    /// terminal event has arrived; `false` when the family never ends by itself.
    func end(recorder: EventRecorder) async -> Bool
    /// What went wrong in driving the subject (a thread that never settled), found by the subject itself
    /// rather than by the checks; default none.
    var drivingProblems: [String] { get }
}

extension SourceContractSubject {
    /// None: subjects that report their own failures through `#expect` leave it out.
    public var drivingProblems: [String] { [] }
}

/// The behaviour every ``SensorSource`` promises (see its documentation), as checks any test target
/// runs on its own families: start, stop, no sink call after the stop returns, at most one terminal
/// event and nothing after it, interruption and resumption, rate changes.
///
/// Each check returns the broken promises, one line each, empty when the source keeps them:
/// `#expect(await SourceContract.check { … } == [])`.
public enum SourceContract {
    /// Runs every check on fresh subjects from `make`; returns the broken promises, each prefixed with
    /// the check's name.
    public static func check(_ make: @Sendable () throws -> any SourceContractSubject) async -> [String] {
        var problems: [String] = []
        for (name, check) in [("start and stop", startAndStop), ("rate change", rateChange),
                              ("interruption", interruption), ("terminal event", terminal)] as [(String, @Sendable (any SourceContractSubject) async -> [String])] {
            do {
                let subject = try make()
                problems += await check(subject).map { "\(name): \($0)" }
                problems += subject.drivingProblems.map { "\(name): \($0)" }
            } catch {
                problems.append("\(name): the subject could not be made: \(error)")
            }
        }
        return problems
    }

    /// Start: the granted rate is within the capability and samples of the demanded sensor only
    /// arrive, in timestamp order. Stop: `apply(.none)` delivers no terminal event and, once it has
    /// returned, the sink is never called again, even as time goes on. A second start works again.
    @Sendable public static func startAndStop(_ subject: any SourceContractSubject) async -> [String] {
        var problems: [String] = []
        let source = subject.source
        for round in 1...2 {
            let recorder = EventRecorder()
            let granted: [SensorKind: Double]
            do {
                granted = try source.apply(SensorDemand(rates: [subject.sensor: subject.rates.first]), sink: recorder.sink)
            } catch {
                return problems + ["start \(round) threw \(error)"]
            }
            problems += grantedProblems(granted, requested: subject.rates.first, subject)
            await subject.run(seconds: 1, running: true, recorder: recorder)
            let samples = recorder.samples
            if samples.isEmpty { problems.append("start \(round): no sample in 1 s") }
            if samples.contains(where: { $0.sensor != subject.sensor }) {
                problems.append("start \(round): samples of a sensor not demanded")
            }
            if zip(samples, samples.dropFirst()).contains(where: { $0.timestamp > $1.timestamp }) {
                problems.append("start \(round): timestamps go backwards")
            }
            do {
                try source.apply(.none, sink: recorder.sink)
            } catch {
                problems.append("stop \(round) threw \(error)")
            }
            recorder.close()
            await subject.run(seconds: 1, running: false, recorder: recorder)
            if recorder.lateCalls > 0 { problems.append("stop \(round): \(recorder.lateCalls) sink calls after the stop returned") }
            if recorder.events.contains(where: \.isTerminal) { problems.append("stop \(round): a stop delivered a terminal event") }
        }
        return problems
    }

    /// A running source re-rated: `apply` returns the new rate (within the capability), and the
    /// samples after the change come at about that rate.
    @Sendable public static func rateChange(_ subject: any SourceContractSubject) async -> [String] {
        var problems: [String] = []
        let source = subject.source
        let recorder = EventRecorder()
        do {
            try source.apply(SensorDemand(rates: [subject.sensor: subject.rates.first]), sink: recorder.sink)
            await subject.run(seconds: 1, running: true, recorder: recorder)
            let before = recorder.samples.count
            let granted = try source.apply(SensorDemand(rates: [subject.sensor: subject.rates.second]), sink: recorder.sink)
            problems += grantedProblems(granted, requested: subject.rates.second, subject)
            await subject.run(seconds: 2, running: true, recorder: recorder)
            // The second second after the change: the new rate has surely taken over.
            let after = Array(recorder.samples.dropFirst(before))
            if let rate = granted[subject.sensor], let last = after.last {
                let window = after.filter { $0.timestamp > last.timestamp - 1 }
                let expected = rate
                if abs(Double(window.count) - expected) > max(2, expected * 0.1) {
                    problems.append("after the change to \(rate) Hz, \(window.count) samples in the last second")
                }
            } else {
                problems.append("no sample after the rate change")
            }
            try source.apply(.none, sink: recorder.sink)
        } catch {
            problems.append("apply threw \(error)")
        }
        return problems
    }

    /// An interruption is non-fatal: the source keeps its demand, and a later sample arrives after the
    /// `.interrupted` event, with no terminal event.
    @Sendable public static func interruption(_ subject: any SourceContractSubject) async -> [String] {
        let source = subject.source
        let recorder = EventRecorder()
        do {
            try source.apply(SensorDemand(rates: [subject.sensor: subject.rates.first]), sink: recorder.sink)
        } catch {
            return ["start threw \(error)"]
        }
        defer { _ = try? source.apply(.none, sink: recorder.sink) }
        await subject.run(seconds: 0.5, running: true, recorder: recorder)
        guard await subject.interruptAndResume(recorder: recorder) else { return [] }
        let events = recorder.events
        guard let interruption = events.firstIndex(where: { if case .interrupted = $0 { true } else { false } }) else {
            return ["no .interrupted event"]
        }
        var problems: [String] = []
        if !events[(interruption + 1)...].contains(where: { if case .sample = $0 { true } else { false } }) {
            problems.append("no sample after the interruption")
        }
        if events.contains(where: \.isTerminal) { problems.append("an interruption ended the source") }
        return problems
    }

    /// A source that ends by itself delivers exactly one terminal event, and nothing after it, even
    /// when stopped or left running afterwards.
    @Sendable public static func terminal(_ subject: any SourceContractSubject) async -> [String] {
        let source = subject.source
        let recorder = EventRecorder()
        do {
            try source.apply(SensorDemand(rates: [subject.sensor: subject.rates.first]), sink: recorder.sink)
        } catch {
            return ["start threw \(error)"]
        }
        guard await subject.end(recorder: recorder) else {
            _ = try? source.apply(.none, sink: recorder.sink)
            return []
        }
        await subject.run(seconds: 1, running: false, recorder: recorder)
        _ = try? source.apply(.none, sink: recorder.sink)
        recorder.close()
        let events = recorder.events
        var problems: [String] = []
        let terminals = events.filter(\.isTerminal).count
        if terminals != 1 { problems.append("\(terminals) terminal events") }
        if let first = events.firstIndex(where: \.isTerminal), first != events.count - 1 {
            problems.append("\(events.count - 1 - first) events after the terminal one")
        }
        return problems
    }

    private static func grantedProblems(_ granted: [SensorKind: Double], requested: Double, _ subject: any SourceContractSubject) -> [String] {
        guard let rate = granted[subject.sensor] else { return ["apply granted no rate for \(subject.sensor)"] }
        guard let capability = subject.source.info.sensors[subject.sensor] else {
            return ["the source's info does not list \(subject.sensor)"]
        }
        if rate < capability.minimumRate || rate > capability.maximumRate {
            return ["granted \(rate) Hz, outside \(capability.minimumRate)…\(capability.maximumRate) Hz"]
        }
        return []
    }
}

extension ManualClock {
    /// Lets `seconds` of this clock pass in steps of at most `step` seconds, returning once the code
    /// under test has done everything due: before each step it waits for `parked` threads to be
    /// blocked on the clock (a thread that has just started reads the time first), after each step
    /// likewise. Small steps keep a polling source's reads one period apart, as on a real clock,
    /// instead of a burst stamped with one time.
    ///
    /// - Returns: `false` as soon as a settle times out (the threads never blocked again: a hang).
    package func run(seconds: Double, step: Double, parked: Int) async -> Bool {
        let end = now() + seconds
        let step = step > 0 ? step : seconds
        while now() < end {
            if parked > 0, !(await settle(parked: parked)) { return false }
            advance(to: min(now() + step, end))
            if !(await settle(parked: parked)) { return false }
        }
        return true
    }
}
