import Foundation
import MotionBenchmarks
import MotionFusion
import Testing

/// Leave-one-trial-out cross-validation on three 12 s pieces of one real BROAD trial.
@Suite struct BroadCrossValidationTests {
    static func pieces() throws -> [BroadTrial] {
        let trial = try BroadTrial(contentsOf: BroadMetricTests.trialURL)
        let n = Int(12 * trial.sampleRate)
        return (0..<3).compactMap { k in
            let r = (k * n)..<min((k + 1) * n, trial.count)
            guard r.count > 100 else { return nil }
            return BroadTrial(name: "piece\(k)", sampleRate: trial.sampleRate,
                              accelerometer: Array(trial.accelerometer[r]), gyro: Array(trial.gyro[r]),
                              magnetometer: Array(trial.magnetometer[r]), truth: Array(trial.truth[r]),
                              movement: Array(trial.movement[r]))
        }
    }

    @Test func eachTrialIsScoredWithTheCandidateBestOnTheOthers() throws {
        let trials = try Self.pieces()
        try #require(trials.count == 3)
        let values = [0.05, 1.75, 6.0]
        let cv = BroadCrossValidation(axes: [.init(name: "accelerometerTimeConstant", values: values)])
        let r = try cv.run(.causal6D, trials: trials)
        // The table the procedure chose from, recomputed here.
        var table: [[Double]] = []
        for v in values {
            var p = AttitudeFilterParameters()
            p.accelerometerTimeConstant = v
            let runner = BroadRunner(parameters: p, usesMagnetometer: false)
            table.append(try trials.map { try runner.score($0).inclination })
        }
        for (k, t) in trials.enumerated() {
            let others = table.map { row in row.enumerated().filter { $0.offset != k }.map(\.element).reduce(0, +) }
            let best = others.indices.min { others[$0] < others[$1] }!
            #expect(r.chosen[t.name] == ["accelerometerTimeConstant=\(values[best])"])
            #expect(r.crossValidated[t.name] == table[best][k])
        }
        let defaults = try trials.map { try BroadRunner(usesMagnetometer: false).score($0).inclination }
        #expect(r.inSample.values.sorted() == defaults.sorted())
        #expect(abs(r.crossValidatedMean - r.crossValidated.values.reduce(0, +) / 3) < 1e-12)
    }

    @Test func withoutAGridCrossValidatedEqualsInSample() throws {
        let trials = try Self.pieces()
        let r = try BroadCrossValidation(axes: []).run(.offline9D, trials: trials)
        #expect(r.crossValidated == r.inSample)
        #expect(r.chosen.values.allSatisfy { $0.isEmpty })
    }

    @Test func anUnknownParameterIsAnError() throws {
        let trials = try Self.pieces()
        let cv = BroadCrossValidation(axes: [.init(name: "noSuchParameter", values: [1])])
        #expect(throws: BroadError.self) { try cv.run(.causal9D, trials: trials) }
    }
}
