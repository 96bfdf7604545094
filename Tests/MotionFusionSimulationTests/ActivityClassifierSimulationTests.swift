import MotionFusion
import MotionSources
import Testing

/// The activity classifier on the simulator's scenarios, whose class is known.
@Suite struct ActivityClassifierSimulationTests {
    /// Runs `seconds` of `scenario` at 50 Hz through a classifier; returns the fraction of the samples
    /// after 10 s reported as each class, and the mean features.
    static func run(_ scenario: SimulationScenario, seed: UInt64, seconds: Double = 60, gyro: Bool = true)
        -> (fractions: [ActivityKind: Double], sd: Double, vibration: Double, rotation: Double) {
        var sim = MotionSimulator(options: SimulationOptions(scenario: scenario, seed: seed))
        sim.setRates(gyro ? [.accelerometer: 50, .gyro: 50] : [.accelerometer: 50], from: 0, keepUnchanged: false)
        var classifier = ActivityClassifier()
        var counts: [ActivityKind: Double] = [:]
        var n = 0.0, sd = 0.0, vib = 0.0, rot = 0.0
        while let t = sim.nextTimestamp, t < seconds {
            let s = sim.next()
            if s.sensor == .gyro {
                classifier.processRotationRate(timestamp: s.timestamp, x: s.value.x, y: s.value.y, z: s.value.z)
                continue
            }
            guard s.sensor == .accelerometer else { continue }
            classifier.process(timestamp: s.timestamp, x: s.value.x, y: s.value.y, z: s.value.z)
            guard t >= 10 else { continue }
            counts[classifier.activity, default: 0] += 1
            n += 1
            sd += classifier.magnitudeDeviation
            vib += classifier.vibration
            rot += classifier.rotation ?? 0
        }
        return (counts.mapValues { $0 / n }, sd / n, vib / n, rot / n)
    }

    @Test(arguments: [(SimulationScenario.still, ActivityKind.stationary), (.handheld, .stationary), (.walk, .walking),
                      (.run, .running), (.cycle, .cycling), (.drive, .automotive)])
    func eachScenarioIsMostlyItsClass(_ scenario: SimulationScenario, _ truth: ActivityKind) {
        for seed: UInt64 in [11, 12] {
            let r = Self.run(scenario, seed: seed)
            let share = r.fractions[truth] ?? 0
            #expect(share > 0.9, "\(scenario) seed \(seed): \(r)")
        }
    }
}

/// The classifier's hysteresis, confidence and handling of bad input.
@Suite struct ActivityClassifierBehaviourTests {
    @Test func aChangeIsReportedOnlyAfterItsConfirmationTimeAndConfidenceGrows() {
        // 20 s still, then 60 s of the simulated walk (its samples shifted to follow on).
        var still = MotionSimulator(options: SimulationOptions(scenario: .still, seed: 3))
        var walk = MotionSimulator(options: SimulationOptions(scenario: .walk, seed: 3))
        still.setRates([.accelerometer: 50], from: 0, keepUnchanged: false)
        walk.setRates([.accelerometer: 50], from: 0, keepUnchanged: false)
        var c = ActivityClassifier()
        var changes: [(t: Double, kind: ActivityKind, confidence: ActivityConfidence)] = []
        while let t = still.nextTimestamp, t < 20 {
            let s = still.next()
            if c.process(timestamp: s.timestamp, x: s.value.x, y: s.value.y, z: s.value.z) {
                changes.append((s.timestamp, c.activity, c.confidence))
            }
        }
        #expect(c.activity == .stationary && c.confidence == .high)
        while let t = walk.nextTimestamp, t < 60 {
            let s = walk.next()
            if c.process(timestamp: 20 + s.timestamp, x: s.value.x, y: s.value.y, z: s.value.z) {
                changes.append((20 + s.timestamp, c.activity, c.confidence))
            }
        }
        let walking = changes.filter { $0.kind == .walking }
        let first = walking.first
        // The walk is confirmed by the step detector (4 steps, ≈2 s) and then 2.5 s of agreement.
        #expect(first.map { $0.t > 22 && $0.t < 30 } == true, "\(changes)")
        #expect(walking.map(\.confidence) == [.low, .medium, .high])
        #expect(c.activityStart > 20 && c.activityStart < 26)
        // Stationary → walking with no other class in between.
        #expect(!changes.contains { $0.kind == .running || $0.kind == .cycling || $0.kind == .automotive })
    }

    @Test func badSamplesAreIgnoredAndAGapRestarts() {
        var c = ActivityClassifier()
        var t = 0.0
        for k in 0..<1000 {
            t = Double(k) / 50
            c.process(timestamp: t, x: 0.001 * Double(k % 3), y: 0, z: -1)
        }
        #expect(c.activity == .stationary)
        // NaN, infinite and backwards samples change nothing.
        let before = (c.activity, c.confidence, c.magnitudeDeviation)
        let nan = c.process(timestamp: t + 0.02, x: .nan, y: 0, z: -1)
        let infinite = c.process(timestamp: .infinity, x: 0, y: 0, z: -1)
        let backwards = c.process(timestamp: t - 1, x: 5, y: 5, z: 5)
        #expect(!nan && !infinite && !backwards)
        c.processRotationRate(timestamp: t, x: .nan, y: 0, z: 0)
        #expect(before == (c.activity, c.confidence, c.magnitudeDeviation))
        #expect(c.rotation == nil)
        // A 10 s gap: unknown again until the statistics have filled.
        let restarted = c.process(timestamp: t + 10, x: 0, y: 0, z: -1)
        #expect(restarted && c.activity == .unknown && c.confidence == .low)
    }
}
