import Foundation
import Testing

/// `coremotion batches`: CMBatchedSensorManager's batches, one line each.
@Suite struct BatchesCommandTests {
    func temp(_ name: String) -> String {
        NSTemporaryDirectory() + "cm-\(UUID().uuidString)-\(name)"
    }

    /// A recording at 100 Hz whose x grows 0.001 g a sample: two one-second batches of exactly 100
    /// samples, 0.99 s from first to last, and means computed by hand (x 0.0495 = 0.001 × 49.5, then
    /// 0.1495). Replay plays in real time with its timestamps moved to now, so the timestamps are
    /// checked for their spacing and for being seconds since boot within the run; every other
    /// character is exact.
    @Test func aRecordingAt100HzGivesOneSecondBatchesWithTheirMeans() async throws {
        let path = temp("acc.csv")
        let rows = (0..<250).map { k in String(format: "%.2f,accelerometer,%.3f,0,-1", 100 + Double(k) * 0.01, Double(k) * 0.001) }
        try (["timestamp,sensor,x,y,z"] + rows).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let before = ProcessInfo.processInfo.systemUptime
        let r = try await CLI.run(["batches", "--source", "replay:\(path)", "--count", "2"])
        let after = ProcessInfo.processInfo.systemUptime
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count == 5, "\(r.stdout)")
        #expect(lines[0] == "# accelerometer batches at 100 Hz")
        #expect(lines[1] == "batch,count,first,last,min_step,max_step,x,y,z")
        #expect(lines[4] == "")
        let cells = lines[2...3].map { $0.split(separator: ",").map(String.init) }
        #expect(cells[0].count == 9 && cells[1].count == 9)
        // Everything but the timestamps, exactly.
        #expect(cells[0].prefix(2) + cells[0].dropFirst(4) == ["1", "100", "0.010000", "0.010000", "0.049500", "0.000000", "-1.000000"])
        #expect(cells[1].prefix(2) + cells[1].dropFirst(4) == ["2", "100", "0.010000", "0.010000", "0.149500", "0.000000", "-1.000000"])
        let t = cells.map { [Double($0[2]) ?? 0, Double($0[3]) ?? 0] }
        #expect(abs(t[0][1] - t[0][0] - 0.99) < 2e-6 && abs(t[1][1] - t[1][0] - 0.99) < 2e-6, "\(t)")
        #expect(abs(t[1][0] - t[0][1] - 0.01) < 2e-6, "the second batch starts one sample after the first ends: \(t)")
        #expect(t[0][0] >= before && t[1][1] <= after, "seconds since boot, within the run: \(before)…\(after), \(t)")
    }

    @Test func deviceMotionBatchesOfTheSimulatorHoldGravity() async throws {
        let r = try await CLI.run(["batches", "--source", "sim:still", "--sensor", "device-motion", "--count", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(r.stdout)")
        #expect(lines[0] == "# device-motion batches at 200 Hz")
        let v = lines[2].split(separator: ",").compactMap { Double($0) }
        try #require(v.count == 9)
        #expect(v[0] == 1 && v[1] == 200, "one second at 200 Hz: \(lines[2])")
        #expect(abs(v[4] - 0.005) < 2e-6 && abs(v[5] - 0.005) < 2e-6)
        #expect(abs((v[6] * v[6] + v[7] * v[7] + v[8] * v[8]).squareRoot() - 1) < 1e-3, "gravity is 1 g: \(lines[2])")
    }

    @Test(arguments: [
        (["batches", "--source", "replay:/nonexistent.csv"], "no such file"),
        (["batches", "--source", "sim", "--sensor", "gyro"], "gyro"),
        (["batches", "--source", "sim", "--count", "0"], "count"),
    ])
    func badInputEndsWithOneLineAndStatusOne(arguments: [String], mention: String) async throws {
        let r = try await CLI.run(arguments)
        #expect(r.status != 0)
        #expect(r.stderr.lowercased().contains(mention), "\(r.stderr)")
        #expect(r.stdout.isEmpty, "\(r.stdout)")
    }
}

extension BatchesCommandTests {
    @Test func aSourceWithoutTheSensorSaysSoBeforeAnyOutput() async throws {
        let path = temp("gyro.csv")
        let rows = (0..<50).map { k in String(format: "%.2f,gyro,0,0,0.5", 100 + Double(k) * 0.01) }
        try (["timestamp,sensor,x,y,z"] + rows).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try await CLI.run(["batches", "--source", "replay:\(path)", "--count", "1"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty, "\(r.stdout)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("has no accelerometer"), "\(r.stderr)")
    }
}
