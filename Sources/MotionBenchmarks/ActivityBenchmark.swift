import MotionFusion
import MotionSources

/// Seconds classified as each activity, per true activity: the confusion table of
/// ``ActivityClassifier`` on labelled recordings. Values only.
package struct ActivityConfusion: Sendable, Hashable {
    /// `seconds[truth][predicted]`, indexed by ``ActivityKind/rawValue``.
    package private(set) var seconds: [[Double]]

    /// An empty table.
    package init() {
        seconds = Array(repeating: Array(repeating: 0, count: ActivityKind.allCases.count), count: ActivityKind.allCases.count)
    }

    /// Adds `duration` seconds labelled `truth` and classified `predicted`.
    package mutating func add(truth: ActivityKind, predicted: ActivityKind, duration: Double) {
        guard duration.isFinite, duration > 0 else { return }
        seconds[Int(truth.rawValue)][Int(predicted.rawValue)] += duration
    }

    /// Adds every cell of `other`.
    package mutating func merge(_ other: ActivityConfusion) {
        for i in seconds.indices {
            for j in seconds[i].indices { seconds[i][j] += other.seconds[i][j] }
        }
    }

    /// Seconds labelled `truth`.
    package func total(_ truth: ActivityKind) -> Double { seconds[Int(truth.rawValue)].reduce(0, +) }

    /// The fraction of the seconds labelled `truth` that were classified `truth` (recall), or `nil`
    /// when there are none.
    package func recall(_ truth: ActivityKind) -> Double? {
        let total = total(truth)
        return total > 0 ? seconds[Int(truth.rawValue)][Int(truth.rawValue)] / total : nil
    }

    /// The fraction of the seconds labelled `truth` that were classified `predicted`, or `nil`.
    package func fraction(_ truth: ActivityKind, as predicted: ActivityKind) -> Double? {
        let total = total(truth)
        return total > 0 ? seconds[Int(truth.rawValue)][Int(predicted.rawValue)] / total : nil
    }
}

/// Runs ``ActivityClassifier`` over labelled sample streams and accumulates a confusion table.
package enum ActivityBenchmark {
    /// How long (s) after the start of each recording is not scored: the classifier needs a window and
    /// a confirmation before it reports anything. Default 5 s.
    package static let warmUp = 5.0

    /// Classifies a recording of accelerometer samples (g, s) and, when present, gyroscope samples
    /// (rad/s, s), merged by time; `label` gives the true class at a time (or `nil` to leave it out).
    /// Time before `warmUp` seconds after the first sample is not scored.
    package static func evaluate(accelerometer: [(t: Double, a: Vector3)], gyro: [(t: Double, w: Vector3)] = [],
                                parameters: ActivityClassifierParameters = ActivityClassifierParameters(),
                                warmUp: Double = warmUp,
                                label: (Double) -> ActivityKind?) -> ActivityConfusion {
        var confusion = ActivityConfusion()
        var classifier = ActivityClassifier(parameters: parameters)
        guard let first = accelerometer.first?.t else { return confusion }
        var g = 0
        var previous: Double?
        for (t, a) in accelerometer {
            while g < gyro.count, gyro[g].t <= t {
                let w = gyro[g].w
                classifier.processRotationRate(timestamp: gyro[g].t, x: w.x, y: w.y, z: w.z)
                g += 1
            }
            classifier.process(timestamp: t, x: a.x, y: a.y, z: a.z)
            defer { previous = t }
            guard let previous, t - first >= warmUp, let truth = label(t) else { continue }
            confusion.add(truth: truth, predicted: classifier.activity, duration: min(t - previous, 1))
        }
        return confusion
    }

    /// The simulator's scenarios with the class a user of each is in: still and handheld are
    /// stationary, walk walking, run running, cycle cycling, drive automotive (rotate and shake are
    /// not activities and are left out).
    package static let simulatedScenarios: [(SimulationScenario, ActivityKind)] = [
        (.still, .stationary), (.handheld, .stationary), (.walk, .walking), (.run, .running),
        (.cycle, .cycling), (.drive, .automotive),
    ]

    /// The confusion on `seeds` runs of `seconds` seconds of each labelled simulator scenario, with the
    /// accelerometer and gyroscope at `rate` Hz, or the accelerometer alone when `gyro` is `false`.
    package static func simulated(seeds: ClosedRange<UInt64> = 1...5, seconds: Double = 120, rate: Double = 50,
                                 gyro: Bool = true,
                                 parameters: ActivityClassifierParameters = ActivityClassifierParameters())
        -> [(scenario: SimulationScenario, confusion: ActivityConfusion)] {
        simulatedScenarios.map { scenario, truth in
            var confusion = ActivityConfusion()
            for seed in seeds {
                var sim = MotionSimulator(options: SimulationOptions(scenario: scenario, seed: seed))
                var rates: [SensorKind: Double] = [.accelerometer: rate]
                if gyro { rates[.gyro] = rate }
                sim.setRates(rates, from: 0, keepUnchanged: false)
                var acc: [(t: Double, a: Vector3)] = []
                var rot: [(t: Double, w: Vector3)] = []
                acc.reserveCapacity(Int(seconds * rate) + 1)  // safe: the CLI passes the defaults (120 s × 50 Hz)
                while let t = sim.nextTimestamp, t < seconds {
                    let s = sim.next()
                    if s.sensor == .accelerometer { acc.append((s.timestamp, s.value)) }
                    if s.sensor == .gyro { rot.append((s.timestamp, s.value)) }
                }
                confusion.merge(evaluate(accelerometer: acc, gyro: rot, parameters: parameters) { _ in truth })
            }
            return (scenario, confusion)
        }
    }
}
