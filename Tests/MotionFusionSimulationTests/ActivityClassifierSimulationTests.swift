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
