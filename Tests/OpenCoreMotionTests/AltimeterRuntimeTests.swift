import Dispatch
import Foundation
import MotionSources
import MotionSourcesLinux
import MotionSourcesLinuxTesting
import MotionTestSupport
@testable import OpenCoreMotion
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A barometer whose k-th reading (from 0) is `100 + 0.001 k` kPa, that counts its reads and the reads
/// under way, and that the test can make fail or hold inside a read.
final class HeldBarometer: BarometerSource, @unchecked Sendable {
    // Sendable: every mutable member is behind `state`; `gate` is a semaphore.
    let identifier = "scripted"
    let name = "scripted barometer"
    let virtualStartTime: Double?
    /// Signalled when a read begins and when it ends.
    let changes = Changes()
    private struct State {
        var reads = 0
        var inFlight = 0
        var failing = false
        /// The read (from 0) that waits for ``release()``.
        var holdAt: Int?
    }
    private let state = Locked(State())
    private let gate = DispatchSemaphore(value: 0)

    /// A barometer on the real clock (`virtualStartTime` `nil`) or in virtual time from `virtualStartTime`.
    init(virtualStartTime: Double? = nil, holdAt: Int? = nil) {
        self.virtualStartTime = virtualStartTime
        state.withLock { $0.holdAt = holdAt }
    }

    /// Reads begun.
    var reads: Int { state.withLock { $0.reads } }
    /// Reads begun and not returned.
    var inFlight: Int { state.withLock { $0.inFlight } }
    /// From now on every read throws (a device removed).
    func fail() { state.withLock { $0.failing = true } }
    /// Lets the held read return.
    func release() { gate.signal() }

    func readPressure(at timestamp: Double) throws(SourceError) -> Double {
        let (k, hold, failing) = state.withLock { s -> (Int, Bool, Bool) in
            defer { s.reads += 1; s.inFlight += 1 }
            return (s.reads, s.holdAt == s.reads, s.failing)
        }
        changes.signal()
        defer {
            state.withLock { $0.inFlight -= 1 }
            changes.signal()
        }
        if hold { gate.wait() }  // on the altimeter's own thread, never the pool's
        if failing { throw SourceError(.deviceRemoved, "scripted barometer removed") }
        return 100 + 0.001 * Double(k)
    }
}

/// What an altimeter's handler received, in order, and any call that began after the test said the
/// updates were stopped (``close()``).
final class AltitudeLog: @unchecked Sendable {
    // Sendable: every member is behind `state`; the samples are immutable.
    enum Event {
        case data(CMAltitudeData)
        case error(NSError)
    }
    private struct State {
        var events: [Event] = []
        var closed = false
        var lateCalls = 0
    }
    private let state = Locked(State())
    let changes = Changes()

    /// The handler to start updates with.
    var handler: CMAltitudeHandler {
        { [self] data, error in
            state.withLock { s in
                if s.closed { s.lateCalls += 1 }
                if let data { s.events.append(.data(data)) }
                if let error { s.events.append(.error(error as NSError)) }
            }
            changes.signal()
        }
    }

    /// From now on every handler call counts as late: call it when the stop method returns.
    func close() { state.withLock { $0.closed = true } }
    var lateCalls: Int { state.withLock { $0.lateCalls } }
    var events: [Event] { state.withLock { $0.events } }
    var data: [CMAltitudeData] { events.compactMap { if case .data(let d) = $0 { d } else { nil } } }
    var errors: [NSError] { events.compactMap { if case .error(let e) = $0 { e } else { nil } } }
    func until(_ condition: @escaping @Sendable () -> Bool) async -> Bool { await changes.until(condition) }
}

/// Returns once every operation added to `queue` before the call has run.
func flush(_ queue: OperationQueue) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        queue.addOperation { done.resume() }
    }
}

/// Hands a value that is not `Sendable` to another thread (the altimeter is thread-safe).
struct Handed<T>: @unchecked Sendable {
    let value: T
}

/// One barometer under the altimeter's contract, with the means to drive it.
protocol AltimeterContractSubject {
    var altimeter: CMAltimeter { get }
    /// Lets `seconds` of the barometer's time pass (`running`: while the altimeter reads it) and
    /// returns once the readings due are done.
    func run(seconds: Double, running: Bool) async
    /// Makes every later read fail; `false` when the barometer cannot fail.
    func breakBarometer() -> Bool
}

/// The promises of ``CMAltimeter`` over any barometer, as ``SourceContract`` states them for its source
/// (`PolledBarometerSource`, which the contract checks on its own), here at the level of the handlers: updates
/// start, in time order; once a stop returns no handler call begins (apart from at most one whose item a
/// running batch had already taken, see `QueueDelivery`), however long time runs; a restart
/// after a stop works; a barometer that fails reaches the handler as exactly one error, then silence.
enum AltimeterContract {
    static func check(_ make: () throws -> any AltimeterContractSubject) async -> [String] {
        var problems: [String] = []
        do {
            problems += await startStopRestart(try make()).map { "start and stop: \($0)" }
            problems += await terminal(try make()).map { "terminal error: \($0)" }
        } catch {
            problems.append("the subject could not be made: \(error)")
        }
        return problems
    }

    static func startStopRestart(_ subject: any AltimeterContractSubject) async -> [String] {
        var problems: [String] = []
        for round in 1...2 {
            let queue = serialQueue()
            let log = AltitudeLog()
            subject.altimeter.startRelativeAltitudeUpdates(to: queue, withHandler: log.handler)
            await subject.run(seconds: 3, running: true)
            if !(await log.until { log.data.count >= 2 }) { problems.append("round \(round): fewer than 2 updates in 3 s") }
            subject.altimeter.stopRelativeAltitudeUpdates()
            log.close()
            await subject.run(seconds: 3, running: false)
            await flush(queue)
            let stamps = log.data.map(\.timestamp)
            if zip(stamps, stamps.dropFirst()).contains(where: { $0 >= $1 }) { problems.append("round \(round): timestamps not increasing") }
            if log.data.first?.relativeAltitude.doubleValue != 0 { problems.append("round \(round): the first update is not the reference") }
            if !log.errors.isEmpty { problems.append("round \(round): errors \(log.errors)") }
            // One call may begin after the stop returned: its item taken just before (QueueDelivery's
            // documented window, seen under ThreadSanitizer on a loaded machine). Two cannot.
            if log.lateCalls > 1 { problems.append("round \(round): \(log.lateCalls) handler calls after the stop returned") }
        }
        return problems
    }

    static func terminal(_ subject: any AltimeterContractSubject) async -> [String] {
        let queue = serialQueue()
        let log = AltitudeLog()
        subject.altimeter.startRelativeAltitudeUpdates(to: queue, withHandler: log.handler)
        await subject.run(seconds: 2, running: true)
        guard subject.breakBarometer() else {
            subject.altimeter.stopRelativeAltitudeUpdates()
            return []
        }
        await subject.run(seconds: 0.2, running: false)  // the failing read ends the thread
        var problems: [String] = []
        if !(await log.until { !log.errors.isEmpty }) { problems.append("no error") }
        await subject.run(seconds: 3, running: false)
        await flush(queue)
        subject.altimeter.stopRelativeAltitudeUpdates()
        let events = log.events
        if log.errors.count != 1 { problems.append("\(log.errors.count) errors") }
        if case .error(let e)? = events.last {
            if e.domain != CMErrorDomain || e.code != Int(CMErrorNotAvailable.rawValue) { problems.append("error \(e)") }
        } else {
            problems.append("events after the error")
        }
        return problems
    }
}

/// A barometer on the real clock, here a ``ManualClock``: a run advances it in steps of one reading
/// (40 ms) and returns once the reading thread sleeps again.
struct ClockedSubject: AltimeterContractSubject {
    let clock = ManualClock(start: 1000)
    let altimeter: CMAltimeter
    let failing: (@Sendable () -> Void)?

    init(_ barometer: any BarometerSource, fail: (@Sendable () -> Void)?) {
        altimeter = CMAltimeter(optionalBarometer: barometer, clock: clock)
        failing = fail
    }

    func run(seconds: Double, running: Bool) async {
        let settled = await clock.run(seconds: seconds, step: 0.04, parked: running ? 1 : 0)
        #expect(settled, "the altimeter's reading thread did not settle")
    }

    func breakBarometer() -> Bool {
        guard let failing else { return false }
        failing()
        return true
    }
}

/// A barometer in virtual time: it runs by itself, so a run only gives it some real time.
struct VirtualSubject: AltimeterContractSubject {
    let altimeter: CMAltimeter
    init(_ barometer: any BarometerSource) { altimeter = CMAltimeter(barometer: barometer) }
    func run(seconds: Double, running: Bool) async { await pauseFor(0.05) }
    func breakBarometer() -> Bool { false }
}

@Suite struct AltimeterContractTests {
    @Test func aCountingBarometerOnTheManualClockKeepsTheContract() async {
        let problems = await AltimeterContract.check {
            let b = HeldBarometer()
            return ClockedSubject(b, fail: { b.fail() })
        }
        #expect(problems == [], "\(problems)")
    }

    @Test func theSimulatedBarometerInRealTimeKeepsTheContract() async {
        let problems = await AltimeterContract.check { ClockedSubject(SimulatedBarometerSource(scenario: .stairs, seed: 5), fail: nil) }
        #expect(problems == [], "\(problems)")
    }

    @Test func theSimulatedBarometerInVirtualTimeKeepsTheContract() async {
        let problems = await AltimeterContract.check { VirtualSubject(SimulatedBarometerSource(scenario: .lift, seed: 5, virtualStartTime: 0)) }
        #expect(problems == [], "\(problems)")
    }

    @Test func anIIOPressureSensorKeepsTheContract() async {
        let problems = await AltimeterContract.check {
            let chip = try InMemoryBMP280()
            return ClockedSubject(chip.sensor, fail: { chip.unplug() })
        }
        #expect(problems == [], "\(problems)")
    }
}

@Suite struct AltimeterRuntimeTests {
    /// A virtual-time barometer whose handler's queue is suspended, once it has read as far as the
    /// backlog lets it: `bound` reads, the backlog's updates and the one that waits for room.
    func heldAtTheLimit() async -> (HeldBarometer, CMAltimeter, OperationQueue, AltitudeLog, bound: Int) {
        let barometer = HeldBarometer(virtualStartTime: 0)
        let altimeter = CMAltimeter(barometer: barometer)
        let queue = serialQueue()
        queue.isSuspended = true
        let log = AltitudeLog()
        altimeter.startRelativeAltitudeUpdates(to: queue, withHandler: log.handler)
        let bound = (CMAltimeter.pacedBacklog + 1) * CMAltimeter.samplesPerUpdate
        #expect(await barometer.changes.until { barometer.reads >= bound })
        return (barometer, altimeter, queue, log, bound)
    }

    /// On a ``ManualClock`` a real-time barometer is read exactly 25 times a simulated second: 3 s from
    /// the start are 76 reads (t = 0, 0.04 … 3.00) and 3 updates, each the mean of 25 consecutive reads,
    /// stamped with the last read's time, 1 s apart. No real time passes and nothing is polled.
    @Test func onTheManualClockThreeSecondsAreThreeUpdatesOfTwentyFiveReads() async {
        let barometer = HeldBarometer()
        let clock = ManualClock(start: 1000)
        let altimeter = CMAltimeter(optionalBarometer: barometer, clock: clock)
        let queue = serialQueue()
        let log = AltitudeLog()
        altimeter.startRelativeAltitudeUpdates(to: queue, withHandler: log.handler)
        #expect(await clock.run(seconds: 3, step: 0.04, parked: 1))
        #expect(barometer.reads == 76)
        #expect(await log.until { log.data.count >= 3 })
        altimeter.stopRelativeAltitudeUpdates()
        await flush(queue)
        let data = log.data
        #expect(data.count == 3)
        for (j, d) in data.enumerated() {
            #expect(abs(d.timestamp - (1000.96 + Double(j))) < 1e-9, "update \(j) at \(d.timestamp)")
            #expect(abs(d.pressure.doubleValue - (100 + 0.001 * Double(25 * j + 12))) < 1e-9, "update \(j): \(d.pressure)")
            let expected = SimulatedBarometer.altitude(pressure: 100 + 0.001 * Double(25 * j + 12), seaLevel: 101.325)
                - SimulatedBarometer.altitude(pressure: 100.012, seaLevel: 101.325)
            #expect(abs(d.relativeAltitude.doubleValue - expected) < 1e-6)
        }
        #expect(log.errors.isEmpty)
    }

    /// A held handler (its queue suspended) holds a virtual-time barometer at the backlog's limit: 61
    /// updates queued, 61 × 25 reads, and no further read however long it is held; released, the
    /// barometer goes on, every update delivered in order, 1 s of virtual time apart.
    @Test func aHeldHandlerHoldsBackAVirtualTimeBarometer() async {
        let (barometer, altimeter, queue, log, bound) = await heldAtTheLimit()
        await pauseFor(0.3)  // room for reads that should not happen
        #expect(barometer.reads == bound, "held at the limit while the handler is held")
        #expect(log.events.isEmpty)
        queue.isSuspended = false
        #expect(await log.until { log.data.count >= 5 * CMAltimeter.pacedBacklog }, "released, the barometer goes on")
        altimeter.stopRelativeAltitudeUpdates()
        let stamps = log.data.map(\.timestamp)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { abs($1 - $0 - 1) < 1e-9 })
    }

    /// Stopping while the handler is held returns at once (it never waits for the handler's queue),
    /// releases the reading thread, and nothing queued before the stop reaches the handler afterwards.
    @Test func stoppingWhileTheHandlerIsHeldReturnsAtOnceAndDeliversNothing() async {
        let (barometer, altimeter, queue, log, _) = await heldAtTheLimit()
        let begin = MonotonicClock.now()
        altimeter.stopRelativeAltitudeUpdates()
        let took = MonotonicClock.now() - begin
        log.close()
        let reads = barometer.reads
        #expect(took < 2, "the stop took \(took) s")
        #expect(barometer.inFlight == 0)
        queue.isSuspended = false
        await flush(queue)
        await pauseFor(0.1)
        #expect(log.events.isEmpty && log.lateCalls == 0, "\(log.events.count) handler calls after the stop")
        #expect(barometer.reads == reads, "no read after the stop")
    }

    /// The stop joins the reading thread: with a read under way (held inside the barometer), the stop
    /// returns only once that read has returned, and no read begins afterwards, however long time runs.
    @Test func aStopLeavesNoThreadReadingTheBarometer() async throws {
        let barometer = HeldBarometer(holdAt: 2)
        let clock = ManualClock(start: 1000)
        let altimeter = CMAltimeter(optionalBarometer: barometer, clock: clock)
        altimeter.startRelativeAltitudeUpdates(to: serialQueue()) { _, _ in }
        #expect(await clock.settle(parked: 1))
        clock.advance(by: 0.08)
        #expect(await barometer.changes.until { barometer.inFlight == 1 && barometer.reads == 3 })
        let handed = Handed(value: altimeter)
        let stopping = Task {
            try await offThePool { () -> Int in
                handed.value.stopRelativeAltitudeUpdates()
                return barometer.inFlight
            }
        }
        await pauseFor(0.2)  // the stop is waiting for the held read
        barometer.release()
        #expect(try await stopping.value == 0, "a read was still under way when the stop returned")
        clock.advance(by: 10)
        #expect(await clock.settle(parked: 0))
        await pauseFor(0.1)
        #expect(barometer.reads == 3)
    }
}
