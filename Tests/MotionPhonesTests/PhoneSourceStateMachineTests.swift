import MotionFusion
import MotionSources
import Testing
@testable import MotionPhones

/// Drives ``PhoneSourceStateMachine`` by hand: no network, no clock, no event loop.
@Suite struct PhoneSourceStateMachineTests {
    typealias Machine = PhoneSourceStateMachine<Int>

    static let sink: Machine.Sink = { _ in }

    /// A started machine of a listening (or connecting) app with a consumer asking for `sensors`.
    func machine(listens: Bool = true, silence: Double = 5, sensors: Set<SensorKind> = [.accelerometer, .gyro],
                 ownAttitude: Bool = false, at now: Double = 0) -> Machine {
        var m = Machine(silence: silence, keepsOwnAttitude: ownAttitude, listens: listens, platform: nil)
        m.demand(sensors, sink: Self.sink)
        let r1 = m.needsStart()
        #expect(r1)
        let r2 = m.started(1, now: now)
        #expect(r2 == nil)
        return m
    }

    func message(_ readings: [(SensorKind, Double?, Double)], clock: String = "") -> PhoneDecoded {
        var d = PhoneDecoded()
        d.clock = clock
        d.readings = readings.map { PhoneReading(sensor: $0.0, phoneTime: $0.1, value: Vector3(x: $0.2, y: 0, z: -1)) }
        return d
    }

    @Test func deliversInMessageOrderOnlyTheSensorsAskedFor() {
        var m = machine(sensors: [.accelerometer])
        let d = m.receive(message([(.accelerometer, nil, 1), (.gyro, nil, 2), (.accelerometer, nil, 3)]), arrival: 10, peer: "1.2.3.4:5")
        #expect(d.sink != nil)
        #expect(d.samples.map(\.value.x) == [1, 3])
        #expect(d.samples.allSatisfy { $0.sensor == .accelerometer })
        // Without phone times every reading takes the arrival time, nudged so it still increases.
        #expect(d.samples[0].timestamp == 10)
        #expect(d.samples[1].timestamp > d.samples[0].timestamp)
        #expect(d.samples[1].timestamp - d.samples[0].timestamp < 1e-5)
        let st = m.statistics
        #expect(st.messages == 1)
        #expect(st.sensors[.accelerometer]?.count == 2)
        #expect(st.sensors[.gyro]?.count == 1)
        #expect(st.peer == "1.2.3.4:5")
    }

    /// A phyphox experiment restarted is a new session, a clock of its own whose times start at 0 again:
    /// its readings are new even where their phone times are no later than the old session's last.
    @Test func aNewSessionsClockStartsAfresh() {
        var m = machine(sensors: [.gyro])
        let first = m.receive(message([(.gyro, 0.0, 1), (.gyro, 0.5, 2), (.gyro, 1.0, 3)], clock: "phyphox:a"), arrival: 50)
        #expect(first.samples.count == 3)
        let restarted = m.receive(message([(.gyro, 0.0, 4), (.gyro, 0.5, 5)], clock: "phyphox:b"), arrival: 52)
        #expect(restarted.samples.map(\.value.x) == [4, 5])
        #expect(m.statistics.stale == 0)
        #expect(restarted.samples[0].timestamp > first.samples[2].timestamp)
        // The same session's rows again are still stale.
        let again = m.receive(message([(.gyro, 0.5, 5)], clock: "phyphox:b"), arrival: 52.1)
        #expect(again.samples.isEmpty && m.statistics.stale == 1)
    }

    @Test func dropsDuplicatesAndSmallStepsBackAsStale() {
        var m = machine()
        let first = m.receive(message([(.gyro, 100.0, 1), (.gyro, 100.01, 2)]), arrival: 50)
        #expect(first.samples.count == 2)
        // The same rows again (a repeated batch), and one 0.5 s older: not delivered.
        let again = m.receive(message([(.gyro, 100.0, 1), (.gyro, 100.01, 2), (.gyro, 99.5, 3)]), arrival: 50.1)
        #expect(again.samples.isEmpty)
        #expect(m.statistics.stale == 3)
        #expect(m.statistics.clockResets == 0)
        // The next new row goes through, after the last delivered one.
        let next = m.receive(message([(.gyro, 100.02, 4)]), arrival: 50.2)
        #expect(next.samples.map(\.value.x) == [4])
        #expect(next.samples[0].timestamp > first.samples[1].timestamp)
        // Another sensor keeps its own phone-time order.
        let r3 = m.receive(message([(.accelerometer, 100.0, 5)]), arrival: 50.3)
        #expect(r3.samples.count == 1)
    }

    @Test func aClockSteppingBackRestartsTheMappingAndTimesStillIncrease() {
        var m = machine()
        let before = m.receive(message([(.accelerometer, 1000, 1), (.accelerometer, 1000.5, 2)]), arrival: 20)
        #expect(before.samples.count == 2)
        // The phone's clock restarts near zero (a new recording session): not stale, a reset.
        let after = m.receive(message([(.accelerometer, 3, 3)]), arrival: 20.1)
        #expect(after.samples.map(\.value.x) == [3])
        #expect(m.statistics.clockResets == 1)
        #expect(m.statistics.stale == 0)
        #expect(after.samples[0].timestamp > before.samples[1].timestamp)
        #expect(after.samples[0].timestamp <= 20.1)
        // The phone span of the statistics restarts at the new clock.
        #expect(m.statistics.sensors[.accelerometer]?.firstPhone == 3)
        #expect(m.statistics.sensors[.accelerometer]?.countBeforeFirstPhone == 2)
    }

    @Test func mapsPhoneTimesOntoTheHostClockKeepingTheirSpacing() {
        var m = machine(sensors: [.gyro])
        // A batch whose newest row arrives with no delay: the offset is arrival − newest phone time.
        let batch = m.receive(message([(.gyro, 999.9, 1), (.gyro, 999.95, 2), (.gyro, 1000, 3)]), arrival: 50)
        let times = batch.samples.map(\.timestamp)
        #expect(times.count == 3)
        #expect(abs(times[0] - 49.9) < 1e-9)
        #expect(abs(times[1] - 49.95) < 1e-9)
        #expect(abs(times[2] - 50) < 1e-9)
        // A later row arriving 20 ms late maps to its phone time on that offset, before its arrival.
        let late = m.receive(message([(.gyro, 1001, 4)]), arrival: 51.02)
        #expect(abs(late.samples[0].timestamp - 51) < 1e-9)
        // Separate clocks (two sessions) are mapped separately: the new session's phone time 5 is not
        // compared with the old one's 1001, and maps to its own arrival.
        let other = m.receive(message([(.gyro, 5, 5)], clock: "session 2"), arrival: 51.5)
        #expect(other.samples.map(\.timestamp) == [51.5])
        #expect(m.statistics.stale == 0)
    }

    /// A first message held up (0.5 s here, as under load) sets the offset estimate too high; the next,
    /// on time, lowers it, so its readings map before the stamps already given. They used to be nudged
    /// 1 µs apart, a pile device motion drops or integrates over no time (57 of 100 updates in
    /// `OwnAttitudeTests` under ThreadSanitizer). They keep the phone's spacing, 5 % short, until the
    /// stamps meet the mapping again.
    @Test func aMappingThatMovesBackKeepsThePhonesSpacing() {
        var m = machine(sensors: [.gyro])
        var stamps: [Double] = []
        // Phone time t, 100 Hz, batches of 10; true offset 100 s, the first batch 0.5 s late.
        for batch in 0..<40 {
            let times = (0..<10).map { Double(batch * 10 + $0) * 0.01 }
            let arrival = times.last! + 100 + (batch == 0 ? 0.5 : 0.002)
            let d = m.receive(message(times.map { (.gyro, $0, 0) }), arrival: arrival)
            stamps += d.samples.map(\.timestamp)
            #expect(d.samples.count == 10)
        }
        let gaps = zip(stamps.dropFirst(), stamps).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 0.0095 - 1e-9 && $0 <= 0.01 + 1e-9 }, "gaps from \(gaps.min()!) to \(gaps.max()!)")
        // The first batch maps at offset 100.5 (its newest sample); from its last sample (0.09 s) on, the
        // stamps keep the spacing 5 % short, so the 0.5 s lead is gone after 10 s of phone time; at
        // 3.99 s it is down by 0.05 × 3.9 s.
        #expect(abs(stamps[399] - (3.99 + 100.5 - 0.05 * 3.9)) < 1e-6, "\(stamps[399] - 103.99)")
        #expect(stamps[399] - 103.99 > 0.29)
    }

    @Test func aPhoneGoneMidStreamIsReportedOnceAndResumes() {
        var m = machine(listens: true, silence: 5)
        // Listening: silence is watched from the first datum only.
        let r4 = m.tick(now: 1000)
        #expect(!r4)
        _ = m.receive(message([(.gyro, nil, 1)]), arrival: 100)
        let r5 = m.tick(now: 104.9)
        #expect(!r5)
        let r6 = m.tick(now: 105)
        #expect(r6)
        let r7 = m.interrupt()
        #expect(r7 != nil)
        // Once per silence, and the repeat of an interruption is held back.
        let r8 = m.tick(now: 106)
        #expect(!r8)
        let r9 = m.interrupt()
        #expect(r9 == nil)
        #expect(m.statistics.silences == 1)
        // The phone comes back: delivered readings re-arm the report.
        let back = m.receive(message([(.gyro, nil, 2)]), arrival: 107)
        #expect(back.samples.count == 1)
        let r10 = m.tick(now: 112)
        #expect(r10)
        let r11 = m.interrupt()
        #expect(r11 != nil)
        #expect(m.statistics.silences == 2)
    }

    @Test func aConnectingSourceIsWatchedFromItsStart() {
        var m = machine(listens: false, silence: 2, at: 10)
        let r12 = m.tick(now: 11.9)
        #expect(!r12)
        let r13 = m.tick(now: 12)
        #expect(r13)
        let r14 = m.interrupt()
        #expect(r14 != nil)
    }

    @Test func noSinkAfterTheDemandIsClearedAndStopsOnlyWhenUnused() {
        var m = machine()
        m.hold()
        m.clearDemand()
        let d = m.receive(message([(.gyro, nil, 1)]), arrival: 1)
        #expect(d.sink == nil)
        #expect(d.samples.isEmpty)
        let r15 = m.interrupt()
        #expect(r15 == nil)
        #expect(m.statistics.sensors[.gyro]?.count == 1)  // still counted for the holder
        let r16 = m.stopIfUnused()
        #expect(r16 == nil)  // held
        m.release()
        let r17 = m.stopIfUnused()
        #expect(r17 == 1)
        let r18 = m.stopIfUnused()
        #expect(r18 == nil)
        let r19 = m.needsStart()
        #expect(r19)
    }

    @Test func aSecondStartIsHandedBack() {
        var m = machine()
        let r20 = m.needsStart()
        #expect(!r20)
        let r21 = m.started(2, now: 0)
        #expect(r21 == 2)
        #expect(m.running == 1)
    }

    @Test func malformedPartsAreCountedAndLoggedSparingly() {
        var m = machine()
        var logged = 0
        for _ in 0..<250 {
            var d = PhoneDecoded()
            d.rejected = ["bad"]
            logged += m.receive(d, arrival: 1).problems.count
        }
        #expect(m.statistics.malformed == 250)
        #expect(logged == 10 + 2)  // the first ten, then the 100th and 200th
        // A rejected-only message is no sign of life: silence is still watched from nothing heard.
        let r22 = m.tick(now: 1000)
        #expect(!r22)
        // Non-finite values are malformed, not delivered.
        let d = m.receive(message([(.gyro, nil, .nan), (.gyro, nil, 1)]), arrival: 2)
        #expect(d.samples.count == 1)
        #expect(m.statistics.malformed == 251)
        let r23 = m.oversized()
        #expect(!r23)  // the 251st problem: not one to log
        #expect(m.statistics.oversized == 1)
    }

    @Test func keepsThePhonesAttitudeOnlyWhenAskedAndForgetsItAfterSilence() {
        var d = PhoneDecoded()
        d.extras = [PhoneExtraReading(phoneTime: nil, quantity: .attitude(Quaternion(w: 1, x: 0, y: 0, z: 0))),
                    PhoneExtraReading(phoneTime: nil, quantity: .gravity(Vector3(x: 0, y: 0, z: -1)))]
        var fused = machine(ownAttitude: false)
        _ = fused.receive(d, arrival: 10)
        #expect(fused.ownAttitude(at: 10, isTrueNorth: false) == nil)
        #expect(fused.extras.latest["attitude"]?.count == 1)
        var own = machine(silence: 5, ownAttitude: true)
        _ = own.receive(d, arrival: 10)
        let a = own.ownAttitude(at: 12, isTrueNorth: true)
        #expect(a?.timestamp == 10)
        #expect(a?.gravity?.z == -1)
        #expect(a?.isTrueNorth == true)
        #expect(own.ownAttitude(at: 9, isTrueNorth: false) == nil)
        #expect(own.ownAttitude(at: 15.1, isTrueNorth: false) == nil)
    }
}
