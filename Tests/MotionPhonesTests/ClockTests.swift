import Foundation
import Testing
@testable import MotionPhones

/// A reproducible generator (SplitMix64) for jitter.
struct TestRandom {
    var state: UInt64
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
    /// Exponential with the given mean.
    mutating func exponential(mean: Double) -> Double { -mean * log(1 - next()) }
}

/// A simulated phone: samples at `rate` Hz on a clock running `drift` fast with an offset, sent in
/// batches every `batch` seconds, each batch delayed by `minimumDelay` plus exponential jitter.
struct SimulatedLink {
    var rate = 200.0
    var drift = 50e-6
    var phoneOffset = -1_700_000_000.0   // phone epoch seconds = host + this… (host = phone − offset)
    var batch = 0.0
    var minimumDelay = 0.004
    var jitterMean = 0.010
    var seed: UInt64 = 7

    /// Runs for `duration` host seconds; returns (true host time of each sample, mapped host time).
    func run(duration: Double) -> [(truth: Double, mapped: Double)] {
        var random = TestRandom(state: seed)
        var mapper = PhoneClockMapper()
        var out: [(Double, Double)] = []
        let start = 1000.0
        var pending: [(truth: Double, phone: Double)] = []
        var nextSend = start + batch
        var i = 0
        while true {
            let truth = start + Double(i) / rate
            if truth > start + duration { break }
            let phone = (truth - phoneOffset) * (1 + drift)
            pending.append((truth, phone))
            i += 1
            if batch == 0 || truth >= nextSend {
                let arrival = truth + minimumDelay + random.exponential(mean: jitterMean)
                for p in pending { mapper.observe(phoneTime: p.phone, arrival: arrival) }
                for p in pending { out.append((p.truth, min(mapper.hostTime(forPhoneTime: p.phone)!, arrival))) }
                pending.removeAll()
                nextSend += batch
            }
        }
        return out
    }
}

@Suite struct PhoneClockMapperTests {
    @Test func followsDriftWithJitterPerSample() {
        let link = SimulatedLink(drift: 80e-6, batch: 0)
        let result = link.run(duration: 120)
        // After the first window, the error is the minimum delay plus a small residual.
        let settled = result.filter { $0.truth > 1000 + 35 }
        let errors = settled.map { $0.mapped - $0.truth - link.minimumDelay }
        let worst = errors.map(abs).max()!
        #expect(worst < 0.002, "worst residual \(worst) s")
        // Spacing kept: consecutive mapped times differ by the true period within 50 µs (the
        // estimate moves slowly).
        var spacingError = 0.0
        for k in 1..<settled.count {
            spacingError = max(spacingError, abs((settled[k].mapped - settled[k - 1].mapped) - 1 / link.rate))
        }
        #expect(spacingError < 50e-6, "spacing error \(spacingError)")
    }

    @Test func batchedSamplesKeepTheirOwnTimes() {
        // Sensor Logger's style: one batch per 0.2 s, so most samples wait up to 0.2 s.
        let link = SimulatedLink(drift: -40e-6, batch: 0.2, minimumDelay: 0.003, jitterMean: 0.02)
        let result = link.run(duration: 90)
        let settled = result.filter { $0.truth > 1000 + 35 }
        let residual = settled.map { abs($0.mapped - $0.truth - link.minimumDelay) }.max()!
        #expect(residual < 0.003, "residual \(residual) s")
        // Without mapping (arrival times) the error would be up to the batch period.
        #expect(zip(settled.dropFirst(), settled).allSatisfy { $0.0.mapped > $0.1.mapped })
    }

    @Test func tracksADriftThatWouldOtherwiseAccumulate() {
        // 300 ppm over 10 minutes is 0.18 s: a fixed offset would be far off by the end.
        let link = SimulatedLink(drift: 300e-6, batch: 0.1, jitterMean: 0.005)
        let result = link.run(duration: 600)
        let last = result.suffix(200)
        let residual = last.map { abs($0.mapped - $0.truth - link.minimumDelay) }.max()!
        #expect(residual < 0.002, "residual at the end \(residual) s")
    }

    @Test func restartsOnAClockStep() {
        var m = PhoneClockMapper()
        for k in 0..<100 { m.observe(phoneTime: 500 + Double(k) * 0.01, arrival: 10 + Double(k) * 0.01 + 0.005) }
        #expect(abs(m.hostTime(forPhoneTime: 500.5)! - 10.505) < 0.001)
        // The phone rebooted: its clock starts again near 3 s.
        m.observe(phoneTime: 3, arrival: 11.5)
        #expect(m.resets == 1)
        #expect(abs(m.hostTime(forPhoneTime: 3)! - 11.5) < 1e-9)
    }

    @Test func noEstimateBeforeData() {
        let m = PhoneClockMapper()
        #expect(m.hostTime(forPhoneTime: 1) == nil)
        var n = PhoneClockMapper()
        n.observe(phoneTime: .nan, arrival: 1)
        #expect(n.hostTime(forPhoneTime: 1) == nil)
    }
}

@Suite struct PhoneStateMachineTests {
    @Test func silenceIsReportedOnceAndEndsWithData() {
        var s = SilenceMonitor(limit: 2)
        do { let ok = !s.tick(now: 100); #expect(ok) }   // not armed
        _ = s.heard(now: 100)
        do { let ok = !s.tick(now: 101.9); #expect(ok) }
        do { let ok = s.tick(now: 102.1); #expect(ok) }
        do { let ok = !s.tick(now: 103); #expect(ok) }   // once
        do { let ok = s.heard(now: 104); #expect(ok) }   // resumes
        do { let ok = !s.tick(now: 105); #expect(ok) }
        do { let ok = s.tick(now: 106.5); #expect(ok) }
    }

    @Test func backoffDoublesUpToTheMaximumAndResetsOnData() {
        var m = ReconnectMachine(initialDelay: 0.25, maximumDelay: 2)
        do { let ok = m.start() == .connect; #expect(ok) }
        var delays: [Double] = []
        for _ in 0..<6 {
            guard case .wait(let d) = m.disconnected() else { Issue.record("expected a wait"); return }
            delays.append(d)
            do { let ok = m.timerFired() == .connect; #expect(ok) }
        }
        #expect(delays == [0.25, 0.5, 1, 2, 2, 2])
        do { let ok = m.connected() == .none; #expect(ok) }
        m.receivedData()
        do { let ok = m.disconnected() == .wait(0.25); #expect(ok) }
        do { let ok = m.stop() == .none; #expect(ok) }
        do { let ok = m.timerFired() == .none; #expect(ok) }
        var n = ReconnectMachine()
        _ = n.start()
        do { let ok = n.stop() == .close; #expect(ok) }
        do { let ok = n.connected() == .close; #expect(ok) }
    }
}
