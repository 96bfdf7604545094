import Foundation
import MotionBenchmarks
import MotionFusion
import Testing

/// The activity classifier on real labelled recordings in `../shared`: Oxford walks (walking) and a
/// BROAD trial's rest phases (stationary).
@Suite struct ActivityOnRecordingsTests {
    static let shared = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/data").standardized

    /// The accelerometer samples of an Oxford walk (`timestamp,sensor,x,y,z`, g).
    static func walk(_ name: String) throws -> [(t: Double, a: Vector3)] {
        let text = try String(contentsOf: shared.appendingPathComponent("steps/\(name).csv"), encoding: .utf8)
        var out: [(t: Double, a: Vector3)] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("timestamp") {
            let f = line.split(separator: ",")
            guard f.count == 5, f[1] == "accelerometer", let t = Double(f[0]), let x = Double(f[2]),
                  let y = Double(f[3]), let z = Double(f[4]) else { continue }
            out.append((t, Vector3(x, y, z)))
        }
        return out
    }

    @Test(arguments: ["Pixel_Jamie_Hard_Armband_1", "Pixel_Jamie_Hard_BackPocket_1", "Pixel_Jamie_Hard_FrontPocket_1",
                      "Nexus_Jamie_Hard_InHand_1", "Pixel_Jamie_Carpet_InHand_1"])
    func oxfordWalksAreWalking(_ name: String) throws {
        let samples = try Self.walk(name)
        #expect(samples.count > 500)
        let confusion = ActivityBenchmark.evaluate(accelerometer: samples) { _ in .walking }
        let recall = try #require(confusion.recall(.walking))
        #expect(recall > 0.9, "\(name): \(confusion.seconds)")
        #expect((confusion.fraction(.walking, as: .running) ?? 1) < 0.05)
    }

    @Test func broadRestPhasesAreStationary() throws {
        let trial = try BroadTrial(contentsOf: Self.shared.appendingPathComponent("broad/10_undisturbed_slow_translation_A.csv"))
        let dt = trial.timeStep
        var lastMove = -Double.infinity
        var settled = [Bool](repeating: false, count: trial.count)
        for i in 0..<trial.count {
            if trial.movement[i] { lastMove = Double(i) * dt }
            settled[i] = !trial.movement[i] && Double(i) * dt - lastMove >= 5
        }
        let acc = trial.accelerometer.enumerated().map { (t: Double($0.offset) * dt, a: $0.element) }
        let gyr = trial.gyro.enumerated().map { (t: Double($0.offset) * dt, w: $0.element) }
        let confusion = ActivityBenchmark.evaluate(accelerometer: acc, gyro: gyr) { t in
            let i = min(max(Int((t / dt).rounded()), 0), trial.count - 1)
            return settled[i] ? .stationary : nil
        }
        #expect(confusion.total(.stationary) > 20)
        #expect((confusion.recall(.stationary) ?? 0) > 0.85, "\(confusion.seconds)")
    }

    @Test func theConfusionTableAddsUp() {
        var a = ActivityConfusion()
        a.add(truth: .walking, predicted: .walking, duration: 3)
        a.add(truth: .walking, predicted: .unknown, duration: 1)
        a.add(truth: .walking, predicted: .running, duration: .nan)
        var b = ActivityConfusion()
        b.add(truth: .stationary, predicted: .stationary, duration: 2)
        a.merge(b)
        #expect(a.total(.walking) == 4 && a.recall(.walking) == 0.75 && a.fraction(.walking, as: .unknown) == 0.25)
        #expect(a.recall(.stationary) == 1 && a.recall(.cycling) == nil)
    }
}
