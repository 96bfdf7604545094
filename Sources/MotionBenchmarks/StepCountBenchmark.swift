import MotionFusion

/// One walk of a step-counting benchmark: accelerometer samples (g, s) and the true step count.
package struct StepWalk: Sendable {
    /// The recording's name.
    package var name: String
    /// Who walked (the fold key of leave-one-user-out).
    package var user: String
    /// Where the phone was carried (the fold key of leave-one-placement-out).
    package var placement: String
    /// The true number of steps.
    package var truth: Int
    /// Timestamps (s), increasing.
    package var t: [Double]
    /// Acceleration (g) along x, y, z.
    package var x: [Double], y: [Double], z: [Double]

    /// A walk; the four sample arrays must have the same length (extra elements are ignored).
    package init(name: String, user: String, placement: String, truth: Int,
                t: [Double], x: [Double], y: [Double], z: [Double]) {
        self.name = name
        self.user = user
        self.placement = placement
        self.truth = truth
        self.t = t
        self.x = x
        self.y = y
        self.z = z
    }

    /// Steps counted with `parameters`.
    package func count(_ parameters: StepDetectorParameters) -> Int {
        var detector = StepDetector(parameters: parameters)
        let n = min(t.count, x.count, y.count, z.count)
        for i in 0..<n {
            detector.process(timestamp: t[i], x: x[i], y: y[i], z: z[i])
        }
        return detector.steps
    }
}

/// The result of one walk in ``StepCountBenchmark``.
package struct StepWalkResult: Sendable {
    /// The walk's name, user, placement and true count.
    package var name: String, user: String, placement: String, truth: Int
    /// Steps counted with the shipped defaults.
    package var countedWithDefaults: Int
    /// Steps counted with the parameters chosen without this walk's user (leave-one-user-out).
    package var countedLeaveOneUserOut: Int
    /// Steps counted with the parameters chosen without this walk's placement (leave-one-placement-out).
    package var countedLeaveOnePlacementOut: Int

    /// |counted − truth| / truth for a count.
    package func error(_ counted: Int) -> Double {
        truth > 0 ? Double(abs(counted - truth)) / Double(truth) : 0
    }
}

/// Step-counting accuracy: mean absolute percentage error (MAPE) of ``StepDetector`` on labelled walks,
/// with the shipped defaults (in-sample when the defaults were chosen on the same walks) and
/// cross-validated: for each held-out user (or placement) the parameters are chosen from ``grid()`` by
/// the lowest MAPE on the other users' (placements') walks, then the held-out walks are counted with them.
package enum StepCountBenchmark {
    /// The parameter grid searched in cross-validation: threshold factor × low-pass cut-off × minimum
    /// amplitude × hysteresis ratio (3 × 3 × 3 × 3 = 81 sets). The defaults are one of them.
    package static func grid() -> [StepDetectorParameters] {
        var sets: [StepDetectorParameters] = []
        for k in [0.25, 0.35, 0.5] {
            for fc in [2.5, 3.0, 3.5] {
                for amin in [0.025, 0.04, 0.05] {
                    for h in [0.5, 0.75, 1.0] {
                        var p = StepDetectorParameters()
                        p.thresholdFactor = k
                        p.lowPassCutoff = fc
                        p.minimumAmplitude = amin
                        p.hysteresisRatio = h
                        sets.append(p)
                    }
                }
            }
        }
        return sets
    }

    /// Summary of a run.
    package struct Result: Sendable {
        /// Per walk, in input order.
        package var walks: [StepWalkResult]
        /// MAPE (fraction) with the defaults.
        package var defaultsMAPE: Double
        /// MAPE (fraction) leave-one-user-out.
        package var leaveOneUserOutMAPE: Double
        /// MAPE (fraction) leave-one-placement-out.
        package var leaveOnePlacementOutMAPE: Double
        /// Number of parameter sets searched per fold.
        package var gridSize: Int
    }

    /// Runs the benchmark on `walks` with `defaults` and cross-validation over `grid`.
    /// `progress` is called after each parameter set (index, total).
    package static func run(
        _ walks: [StepWalk],
        defaults: StepDetectorParameters = StepDetectorParameters(),
        grid: [StepDetectorParameters] = grid(),
        progress: (Int, Int) -> Void = { _, _ in }
    ) -> Result {
        // counts[g][w]
        var counts: [[Int]] = []
        counts.reserveCapacity(grid.count)
        for (g, p) in grid.enumerated() {
            counts.append(walks.map { $0.count(p) })
            progress(g + 1, grid.count)
        }
        func ape(_ c: Int, _ w: StepWalk) -> Double {
            w.truth > 0 ? Double(abs(c - w.truth)) / Double(w.truth) : 0
        }
        func crossValidated(_ key: (StepWalk) -> String) -> [Int] {
            var out = [Int](repeating: 0, count: walks.count)
            var folds: [String] = []
            for w in walks where !folds.contains(key(w)) { folds.append(key(w)) }
            for fold in folds {
                let training = walks.indices.filter { key(walks[$0]) != fold }
                var best = 0
                var bestError = Double.infinity
                for g in grid.indices {
                    var e = 0.0
                    for i in training { e += ape(counts[g][i], walks[i]) }
                    if e < bestError {
                        bestError = e
                        best = g
                    }
                }
                for i in walks.indices where key(walks[i]) == fold { out[i] = counts[best][i] }
            }
            return out
        }
        let defaultCounts = walks.map { $0.count(defaults) }
        let louo = crossValidated { $0.user }
        let lopo = crossValidated { $0.placement }
        var results: [StepWalkResult] = []
        for (i, w) in walks.enumerated() {
            results.append(StepWalkResult(
                name: w.name, user: w.user, placement: w.placement, truth: w.truth,
                countedWithDefaults: defaultCounts[i], countedLeaveOneUserOut: louo[i],
                countedLeaveOnePlacementOut: lopo[i]))
        }
        func mean(_ counted: [Int]) -> Double {
            guard !walks.isEmpty else { return 0 }
            var s = 0.0
            for (i, w) in walks.enumerated() { s += ape(counted[i], w) }
            return s / Double(walks.count)
        }
        return Result(walks: results, defaultsMAPE: mean(defaultCounts), leaveOneUserOutMAPE: mean(louo),
                      leaveOnePlacementOutMAPE: mean(lopo), gridSize: grid.count)
    }
}
