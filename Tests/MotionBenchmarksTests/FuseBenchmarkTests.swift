import Foundation
import MotionBenchmarks
import Testing

/// The recording `bench fuse` times: the simulated handheld device in the layout `stream --sensor raw`
/// writes (0.1 s blocks per sensor), the same bytes every time.
@Suite struct FuseBenchmarkTests {
    static func write(bytes: Int) throws -> (text: String, samples: Int) {
        let path = NSTemporaryDirectory() + "fuse-bench-\(UUID().uuidString).csv"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let samples = try FuseBenchmark.writeRecording(path: path, bytes: bytes)
        return (try String(contentsOfFile: path, encoding: .utf8), samples)
    }

    @Test func theRecordingHoldsBlocksOfEachSensorAt100Hz() throws {
        let (text, samples) = try Self.write(bytes: 200_000)
        #expect(text.utf8.count >= 200_000 && text.utf8.count < 210_000)
        let lines = text.split(separator: "\n")
        #expect(lines.first == "timestamp,sensor,x,y,z")
        let rows = lines.dropFirst().map { $0.split(separator: ",") }
        #expect(rows.count == samples)
        var last: [Substring: Double] = [:]
        var runs: [(sensor: Substring, length: Int)] = []
        for row in rows {
            #expect(row.count == 5)
            let t = try #require(Double(row[0]))
            let sensor = row[1]
            if let l = last[sensor] { #expect(abs(t - l - 0.01) < 1e-9, "\(sensor) at \(t)") } else { #expect(t == 1000) }
            last[sensor] = t
            if runs.last?.sensor == sensor { runs[runs.count - 1].length += 1 } else { runs.append((sensor, 1)) }
        }
        #expect(Set(last.keys) == ["accelerometer", "gyro", "magnetometer"])
        // Whole 0.1 s blocks, each sensor's ten rows together (give or take the sample on a boundary),
        // in the sensors' order.
        #expect(runs.count % 3 == 0 && runs.count >= 30)
        for (i, run) in runs.enumerated() {
            #expect(run.sensor == ["accelerometer", "gyro", "magnetometer"][i % 3])
            #expect((9...11).contains(run.length), "run \(i): \(run.length) rows of \(run.sensor)")
        }
    }

    @Test func theRecordingIsTheSameEveryTime() throws {
        let a = try Self.write(bytes: 50_000), b = try Self.write(bytes: 50_000)
        #expect(a.text == b.text && a.samples == b.samples)
    }
}
