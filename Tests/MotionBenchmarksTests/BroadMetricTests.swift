import Foundation
import MotionBenchmarks
import MotionFusion
import Testing

/// The Swift BROAD metric against `shared/tools/broad_reference.py` on one trial.
///
/// Provenance of the expected numbers: computed on 2026-11-22 with `broad_reference.py`'s `errors()`
/// (NumPy 2, Python 3) on `36_disturbed_attached_magnet_5cm.csv` for the two deterministic estimates
/// built below, by this script (run from the project root):
///
/// ```python
/// import sys; sys.path.insert(0, '../shared/tools')
/// import numpy as np
/// from broad_reference import read_trial, errors
/// d = read_trial('../shared/data/broad/36_disturbed_attached_magnet_5cm.csv'); n = len(d['q']); i = np.arange(n)
/// u = np.array([0.3, -0.5, 0.8]); u = u / np.linalg.norm(u); a = 0.001 * i + 0.2
/// qa = np.column_stack([np.cos(a/2), u[0]*np.sin(a/2), u[1]*np.sin(a/2), u[2]*np.sin(a/2)])
/// v = np.column_stack([0.01*np.sin(i/500), np.full(n, 0.02), -0.015*np.cos(i/300)])
/// ang = np.linalg.norm(v, axis=1); k = np.sin(ang/2)/ang
/// dq = np.column_stack([np.cos(ang/2), v[:,0]*k, v[:,1]*k, v[:,2]*k])
/// t = np.where(np.isnan(d['q']).any(1)[:, None], np.array([1.0, 0, 0, 0]), d['q'])
/// qb = t ⊗ dq   # Hamilton product, row by row
/// print(errors(qa, d['q'], d['movement']), errors(qb, d['q'], d['movement']))
/// ```
@Suite struct BroadMetricTests {
    static let trialURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/data/broad/36_disturbed_attached_magnet_5cm.csv").standardized

    @Test func agreesWithTheReferenceScriptToAMicrodegree() throws {
        let trial = try BroadTrial(contentsOf: Self.trialURL)
        let u = Vector3(0.3, -0.5, 0.8).normalized!
        let a = (0..<trial.count).map { i -> Quaternion in
            let angle = 0.001 * Double(i) + 0.2
            return Quaternion(axis: u, angle: angle)
        }
        let b = (0..<trial.count).map { i -> Quaternion in
            let x = Double(i)
            let v = Vector3(0.01 * sin(x / 500), 0.02, -0.015 * cos(x / 300))
            let t = trial.truth[i].isFinite ? trial.truth[i] : .identity
            return t * Quaternion(rotationVector: v)
        }
        let ea = try BroadErrors(estimates: a, trial: trial)
        #expect(abs(ea.total - 115.31947660617298) < 1e-6)
        #expect(abs(ea.heading - 102.97204622123587) < 1e-6)
        #expect(abs(ea.inclination - 63.19653606368396) < 1e-6)
        let eb = try BroadErrors(estimates: b, trial: trial)
        #expect(abs(eb.total - 1.3585144104281712) < 1e-6)
        #expect(abs(eb.heading - 0.8138522705206543) < 1e-6)
        #expect(abs(eb.inclination - 1.0877584616676494) < 1e-6)
    }

    @Test func loaderConvertsToCoreMotionUnits() throws {
        let trial = try BroadTrial(contentsOf: Self.trialURL)
        #expect(abs(trial.sampleRate - 285.7142857142857) < 1e-9)
        #expect(trial.count > 10_000)
        // At rest at the start the board lies roughly face up: Core Motion reads z ≈ −1 g.
        #expect(abs(trial.accelerometer[0].z + 1) < 0.1)
        #expect(trial.movement.contains(true) && trial.movement.contains(false))
        #expect(trial.truth.contains { !$0.isFinite })
    }

    @Test func lengthMismatchIsAnError() throws {
        let trial = try BroadTrial(contentsOf: Self.trialURL)
        #expect(throws: BroadError.self) { try BroadErrors(estimates: [.identity], trial: trial) }
    }
}
