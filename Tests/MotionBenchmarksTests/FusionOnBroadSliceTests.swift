import Foundation
import MotionBenchmarks
import MotionFusion
import Testing

/// The filter on a slice of real data (the first 20 s of one BROAD trial, which starts at rest): the
/// attitude follows the optical ground truth.
@Suite struct FusionOnBroadSliceTests {
    @Test func followsTheGroundTruthOnARealRecording() throws {
        var trial = try BroadTrial(contentsOf: BroadMetricTests.trialURL)
        let n = min(trial.count, Int(40 * trial.sampleRate))
        trial = BroadTrial(name: trial.name, sampleRate: trial.sampleRate,
                           accelerometer: Array(trial.accelerometer[..<n]), gyro: Array(trial.gyro[..<n]),
                           magnetometer: Array(trial.magnetometer[..<n]), truth: Array(trial.truth[..<n]),
                           movement: Array(trial.movement[..<n]))
        let nine = try BroadRunner(usesMagnetometer: true).score(trial)
        let six = try BroadRunner(usesMagnetometer: false).score(trial)
        #expect(six.inclination < 2)
        #expect(nine.total < 6)
    }

    @Test func throughputBenchmarkRuns() {
        let r = FusionThroughput.measure(count: 2_000, repetitions: 1)
        #expect(r.samplesPerSecond9D > 0 && r.samplesPerSecond6D > 0)
        let json = try? JSONEncoder().encode(r)
        let text = json.map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(text.contains("samples_per_second_9d") && text.contains("samples_per_second_6d"))
    }
}
