@testable import CoreMotionCLI
import Foundation
import MotionBenchmarks
import MotionFusion
import MotionRecordingFormats
import OpenCoreMotion
import Testing

/// `coremotion fuse` through MotionRecordingFormats: equal to live (replayed) device motion, independent of
/// how the recording orders its sensors, and strict about bad input.
@Suite struct FuseRecordingTests {
    static func temp(_ name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fuse-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }

    /// A simulated handheld recording in the layout `stream --sensor raw` writes: 0.1 s per-sensor blocks.
    static func blockRecording(bytes: Int = 120_000) throws -> String {
        let path = try temp("blocks.csv")
        _ = try FuseBenchmark.writeRecording(path: path, bytes: bytes)
        return path
    }

    /// The same rows sorted by time (ties: accelerometer, gyroscope, magnetometer).
    static func interleaved(_ path: String) throws -> String {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let rank = ["accelerometer": 0, "gyro": 1, "magnetometer": 2]
        let rows = lines.dropFirst().map { line -> (Double, Int, Substring) in
            let f = line.split(separator: ",")
            return (Double(f[0])!, rank[String(f[1])]!, line)
        }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        let out = try temp("interleaved.csv")
        try ([String(lines[0])] + rows.map { String($0.2) }).joined(separator: "\n").appending("\n")
            .write(toFile: out, atomically: true, encoding: .utf8)
        return out
    }

    static func table(_ text: String) -> (header: [String], rows: [[Double]]) {
        let lines = text.split(separator: "\n")
        guard let first = lines.first else { return ([], []) }
        return (first.split(separator: ",").map(String.init), lines.dropFirst().map { $0.split(separator: ",").map { Double($0)! } })
    }

    @Test(arguments: [("xArbitraryZVertical", CMAttitudeReferenceFrame.xArbitraryZVertical),
                      ("xMagneticNorthZVertical", .xMagneticNorthZVertical),
                      ("xArbitraryCorrectedZVertical", .xArbitraryCorrectedZVertical)])
    func fuseEqualsReplayedDeviceMotionSampleForSample(name: String, frame: CMAttitudeReferenceFrame) async throws {
        let path = try Self.blockRecording()
        let out = try Self.temp("fused.csv")
        let r = try await CLI.run(["fuse", path, "--reference-frame", name, "-o", out])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        let fused = Self.table(try String(contentsOfFile: out, encoding: .utf8))
        #expect(fused.header == DeviceMotionWriter.fields)

        // Live device motion of the same recording, replayed on the virtual clock (recorded timestamps).
        let manager = CMMotionManager(source: try ReplaySource(path: path, clock: .virtual))
        var replayed: [[Double]] = []
        for try await m in manager.deviceMotionUpdates(using: frame, interval: 0.01) {
            let line = DeviceMotionWriter.line(FusedMotion(m), format: .csv)
            replayed.append(line.split(separator: ",").map { Double($0)! })
        }
        #expect(fused.rows.count > 500)
        #expect(replayed.count == fused.rows.count)
        var worst = 0.0
        for (a, b) in zip(fused.rows, replayed) {
            for (x, y) in zip(a, b) { worst = max(worst, abs(x - y)) }
        }
        // Both are printed with 9 decimals: equal, or one unit of the last decimal apart at a rounding edge.
        #expect(worst <= 1e-9 + 1e-12, "largest difference \(worst)")
    }

    @Test func perSensorBlocksAndInterleavedRowsFuseToTheSameOutput() async throws {
        let blocks = try Self.blockRecording()
        let rows = try Self.interleaved(blocks)
        for extra in [[String](), ["--offline"], ["--no-magnetometer"]] {
            let a = try await CLI.run(["fuse", blocks] + extra), b = try await CLI.run(["fuse", rows] + extra)
            #expect(a.status == 0 && b.status == 0, "\(a.stderr)\(b.stderr)")
            #expect(a.stdout == b.stdout, "\(extra)")
            #expect(a.stdout.split(separator: "\n").count > 500)
        }
    }

    @Test func offlineWritesExactlyTheRowsOfTheCausalMode() async throws {
        let path = try Self.blockRecording()
        let causal = Self.table(try await CLI.run(["fuse", path]).stdout)
        let offline = Self.table(try await CLI.run(["fuse", path, "--offline"]).stdout)
        #expect(causal.rows.count > 500)
        #expect(causal.rows.map { $0[0] } == offline.rows.map { $0[0] })
    }

    @Test func noRowBeforeTheFirstAccelerometerAndGyroscopeSamples() async throws {
        let path = try Self.temp("late.csv")
        try """
            timestamp,sensor,x,y,z
            1.00,gyro,0,0,0
            1.01,gyro,0,0,0
            1.015,accelerometer,0,0,-1
            1.02,gyro,0,0,0
            1.03,accelerometer,0,0,-1
            1.03,gyro,0,0,0

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["fuse", path, "--no-magnetometer"])
        #expect(r.status == 0)
        let t = Self.table(r.stdout)
        #expect(t.rows.map { $0[0] } == [1.02, 1.03])
        let uz = t.header.firstIndex(of: "user_acceleration_z")!
        #expect(t.rows.allSatisfy { abs($0[uz]) < 1e-6 }, "user acceleration is never −gravity")
    }

    // MARK: Bad input: one line on stderr, status 1, good rows first

    static let header = "timestamp,sensor,x,y,z"

    @Test func crlfByteOrderMarkTrailingSpacesAndNoFinalNewlineAreAccepted() async throws {
        let path = try Self.temp("dos.csv")
        try Data([0xEF, 0xBB, 0xBF] + Array((Self.header + "\r\n1.00,accelerometer,0,0,-1 \r\n1.00,gyro,0,0,0\r\n1.01,accelerometer,0,0,-1\r\n1.01,gyro,0.1,0,0").utf8))
            .write(to: URL(fileURLWithPath: path))
        let r = try await CLI.run(["fuse", path, "--no-magnetometer"])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        #expect(Self.table(r.stdout).rows.map { $0[0] } == [1.0, 1.01])
    }

    @Test(arguments: [
        ("1.02,accelerometer,0,nan,-1", "'nan' is not a finite number", 6),
        ("1.02,accelerometer,0,inf,-1", "'inf' is not a finite number", 6),
        ("1.02,accelerometer,0,abc,-1", "'abc' is not a number", 6),
    ])
    func aBadValueIsAnErrorWithItsLineAfterTheGoodRows(row: String, message: String, line: Int) async throws {
        let path = try Self.temp("bad.csv")
        try (Self.header + "\r\n1.00,accelerometer,0,0,-1\r\n1.00,gyro,0,0,0\r\n1.01,accelerometer,0,0,-1\r\n1.01,gyro,0.1,0,0\r\n\(row)\r\n1.03,gyro,0,0,0\r\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let out = try Self.temp("out.csv")
        let r = try await CLI.run(["fuse", path, "--no-magnetometer", "-o", out])
        #expect(r.status == 1)
        #expect(r.stderr == "Error: \(path):\(line): \(message)\n")
        #expect(Self.table(try String(contentsOfFile: out, encoding: .utf8)).rows.map { $0[0] } == [1.0, 1.01], "the good rows are written")
    }

    @Test func aTimestampBackBeyondTheReorderWindowIsAnError() async throws {
        let path = try Self.temp("back.csv")
        try (Self.header + "\n5.00,accelerometer,0,0,-1\n5.00,gyro,0,0,0\n5.01,gyro,0,0,0\n3.00,accelerometer,0,0,-1\n5.02,gyro,0,0,0\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["fuse", path, "--no-magnetometer"])
        #expect(r.status == 1)
        #expect(r.stderr == "Error: \(path):5: timestamp 3 is 2.01 s before 5.01 (line 4), more than the merge's reorder window of 1 s\n")
        #expect(Self.table(r.stdout).rows.map { $0[0] } == [5.0, 5.01])
    }

    @Test func aFolderThatIsNoExportIsAClearError() async throws {
        let dir = (try Self.temp("x") as NSString).deletingLastPathComponent + "/notes"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "hello".write(toFile: dir + "/notes.txt", atomically: true, encoding: .utf8)
        let r = try await CLI.run(["fuse", dir])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Error: \(dir): not a known export"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test func fuseRefusesToWriteOverItsInput() async throws {
        let path = try Self.blockRecording(bytes: 20_000)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let link = (path as NSString).deletingLastPathComponent + "/link.csv"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        for output in [path, link, (path as NSString).deletingLastPathComponent + "/./blocks.csv"] {
            let r = try await CLI.run(["fuse", path, "-o", output])
            #expect(r.status == 1)
            #expect(r.stderr == "Error: \(output): is the recording being read (\(path)): refusing to write over it; choose another output\n")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the recording is untouched")
    }

    @Test func missingSensorsAreClearErrorsWithNothingWritten() async throws {
        let accelerometerOnly = try Self.temp("acc.csv")
        try (Self.header + "\n" + (0..<50).map { "\(1 + Double($0) / 100),accelerometer,0,0,-1" }.joined(separator: "\n") + "\n")
            .write(toFile: accelerometerOnly, atomically: true, encoding: .utf8)
        let magnetic = try await CLI.run(["fuse", accelerometerOnly])
        #expect(magnetic.status == 1 && magnetic.stdout.isEmpty)
        #expect(magnetic.stderr == "Error: \(accelerometerOnly): the recording has no gyroscope samples: device motion needs an accelerometer and a gyroscope\n")
        let sixD = try await CLI.run(["fuse", accelerometerOnly, "--no-magnetometer"])
        #expect(sixD.status == 1 && sixD.stdout.isEmpty)
        #expect(sixD.stderr == magnetic.stderr)

        let noMagnetometer = try Self.temp("imu.csv")
        try (Self.header + "\n1,accelerometer,0,0,-1\n1,gyro,0,0,0\n1.01,gyro,0,0,0\n").write(toFile: noMagnetometer, atomically: true, encoding: .utf8)
        // Asked for a magnetic frame: an error, nothing written.
        let r = try await CLI.run(["fuse", noMagnetometer, "--reference-frame", "xMagneticNorthZVertical"])
        #expect(r.status == 1 && r.stdout.isEmpty)
        #expect(r.stderr == "Error: \(noMagnetometer): the recording has no magnetometer samples, which the reference frame xMagneticNorthZVertical needs: use --no-magnetometer or --reference-frame xArbitraryZVertical\n")
        // The default frame: 6D in xArbitraryZVertical, with a note, the same rows as --no-magnetometer.
        let fallback = try await CLI.run(["fuse", noMagnetometer])
        #expect(fallback.status == 0)
        #expect(fallback.stderr == "note: \(noMagnetometer) has no magnetometer samples: fused 6D, attitude in xArbitraryZVertical\n")
        let sixDRows = try await CLI.run(["fuse", noMagnetometer, "--no-magnetometer"])
        #expect(sixDRows.status == 0 && sixDRows.stderr.isEmpty)
        #expect(fallback.stdout == sixDRows.stdout)
        #expect(fallback.stdout.split(separator: "\n").count == 3, "header and one row per gyro sample")
    }

    @Test func replayWritesEveryGoodRowOfEverySensorBeforeTheErrorEveryTime() async throws {
        let path = try Self.temp("bad-raw.csv")
        var text = Self.header + "\n"
        for i in 0..<40 {
            let t = 2 + Double(i) * 0.001
            text += "\(t),accelerometer,0,0,-1\n\(t),gyro,0,0,0\n\(t),magnetometer,20,0,-40\n"
        }
        text += "2.04,gyro,0,oops,0\n2.041,accelerometer,0,0,-1\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        for _ in 0..<3 {
            let r = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", "raw", "--interval", "0"])
            #expect(r.status == 1)
            #expect(r.stderr == "Error: \(path):122: 'oops' is not a number\n", "\(r.stderr)")
            #expect(r.stdout.split(separator: "\n").count == 1 + 120, "header and every good row")
        }
    }

    /// A timestamp of 1e308 (a damaged row): `fuse` rejects its line with exit status 1, and a
    /// real-time replay, raw or device motion, rejects the same line with the same message, at once,
    /// after every good row before it, instead of waiting for it forever.
    @Test func aHugeReplayTimestampIsRejectedAsFuseRejectsIt() async throws {
        let path = try Self.temp("huge.csv")
        var text = Self.header + "\n"
        for i in 0..<50 {
            let t = 1 + Double(i) * 0.01
            text += "\(t),accelerometer,0,0,-1\n\(t),gyro,0,0,0\n"
        }
        text += "1e308,gyro,0,0,0\n1.5,gyro,0,0,0\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let fuse = try await CLI.run(["fuse", path, "--no-magnetometer"], timeout: 30)
        #expect(fuse.status == 1)
        let rejection = fuse.stderr.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
        #expect(rejection.count == 1 && rejection.first?.hasPrefix("Error: \(path):102: timestamp 1e+308 is out of range") == true, "\(fuse.stderr)")
        for sensor in ["raw", "device-motion", "gyro"] {
            let r = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", sensor], timeout: 60)
            #expect(r.status == 1, "\(sensor): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").filter { $0.hasPrefix("Error: ") } == rejection, "\(sensor): \(r.stderr)")
            #expect(!r.timedOut, "\(sensor): it ended by itself, not killed after 60 s")
        }
        let raw = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", "raw", "--interval", "0"], timeout: 20)
        #expect(raw.stdout.split(separator: "\n").count == 1 + 100, "header and every good row")
    }

    /// A recording paused for two hours replays in real time without sleeping through the pause: the
    /// gap plays as one sample period, with a note on stderr naming the line.
    @Test func aLongGapInAReplayIsCompressedWithANote() async throws {
        let path = try Self.temp("paused.csv")
        var text = Self.header + "\n"
        for start in [1.0, 7201.0] {
            for i in 0..<20 {
                let t = start + Double(i) * 0.01
                text += "\(t),accelerometer,0,0,-1\n\(t),gyro,0,0,0\n"
            }
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", "raw", "--interval", "0"], timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.timedOut, "it ended by itself, not killed after 60 s (the gap plays as 2 h otherwise)")
        #expect(r.stdout.split(separator: "\n").count == 1 + 80, "header and every row")
        #expect(r.stderr == "note: \(path):42: a gap of 7199.81 s in the recording plays as 0.01 s (gaps over 10 s are compressed to one sample period)\n", "\(r.stderr)")
    }

    /// The issue's own steps: a live recording with default options (0.1 s per-sensor blocks), fused and
    /// replayed in real time: equal on every field; timestamps by a constant offset (replay starts now).
    @Test func fuseOfALiveRecordingEqualsItsRealTimeReplay() async throws {
        let path = try Self.temp("live.csv")
        let rec = try await CLI.run(["stream", "--source", "sim:handheld", "--sensor", "raw", "--duration", "1", "-o", path])
        #expect(rec.status == 0, "\(rec.stderr)")
        for (fuseFrame, streamFrame) in [("xArbitraryZVertical", "x-arbitrary-z-vertical"), ("xMagneticNorthZVertical", "x-magnetic-north-z-vertical")] {
            let fused = Self.table(try await CLI.run(["fuse", path, "--reference-frame", fuseFrame]).stdout)
            let replay = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", "device-motion", "--reference-frame", streamFrame])
            #expect(replay.status == 0, "\(replay.stderr)")
            let replayed = Self.table(replay.stdout)
            #expect(fused.header == replayed.header)
            #expect(fused.rows.count >= 80 && fused.rows.count == replayed.rows.count)
            guard let a0 = fused.rows.first?[0], let b0 = replayed.rows.first?[0] else { continue }
            var worst = 0.0
            for (a, b) in zip(fused.rows, replayed.rows) {
                worst = max(worst, abs((b[0] - b0) - (a[0] - a0)))
                for i in 1..<a.count { worst = max(worst, abs(a[i] - b[i])) }
            }
            #expect(worst <= 1e-9 + 1e-12, "\(fuseFrame): largest difference \(worst)")
        }
    }

    @Test func benchFusePrintsMachineReadableFigures() async throws {
        let r = try await CLI.run(["bench", "fuse", "--megabytes", "1", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let samples = try #require(object["samples"] as? Int), rows = try #require(object["rows"] as? Int)
        #expect(samples > 10_000 && rows > 0)
        // Three sensors at the same rate: one row per gyroscope sample.
        #expect(abs(Double(rows) - Double(samples) / 3) <= 3)
        #expect((object["input_bytes"] as? Int).map { abs($0 - 1_000_000) < 10_000 } == true)
        #expect((object["peak_rss_mb"] as? Double).map { $0 > 0 } == true)
        #expect((object["seconds"] as? Double).map { $0 > 0 } == true)
    }

    /// A phone export (HyperIMU: epoch milliseconds, m/s² with Android's sign) is fused and replayed
    /// directly, with Core Motion's units and signs, and the two agree.
    @Test func aPhoneExportIsFusedAndReplayedDirectly() async throws {
        let path = try Self.temp("HIMU-2024.csv")
        var text = "@ HyperIMU - ianovir - 2017\r\n@ Sampling Time: 20ms\r\n\r\n"
            + "timestamp,BMI160_Accelerometer.x,BMI160_Accelerometer.y,BMI160_Accelerometer.z,BMI160_Gyroscope.x,BMI160_Gyroscope.y,BMI160_Gyroscope.z,"
            + "AK09915_Magnetometer.x,AK09915_Magnetometer.y,AK09915_Magnetometer.z\r\n"
        for i in 0..<150 {
            // Lying face up (Android reads +9.81 on z), still.
            text += "\(1_704_103_200_000 + i * 20),0.0,0.0,9.80665,0.001,-0.002,0.0005,20,-5,-40\r\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let fused = Self.table(try await CLI.run(["fuse", path, "--no-magnetometer"]).stdout)
        #expect(fused.rows.count == 150)
        let gz = fused.header.firstIndex(of: "gravity_z")!
        #expect(fused.rows.allSatisfy { abs($0[gz] + 1) < 1e-3 }, "face up: gravity (0, 0, −1) g")
        #expect(abs(fused.rows[0][0] - 1_704_103_200) < 1e-6, "epoch seconds")
        let replay = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", "device-motion", "--interval", "0.02"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let replayed = Self.table(replay.stdout)
        #expect(replayed.rows.count == fused.rows.count)
        var worst = 0.0
        for (a, b) in zip(fused.rows, replayed.rows) {
            for i in 1..<a.count { worst = max(worst, abs(a[i] - b[i])) }
        }
        #expect(worst <= 1e-9 + 1e-12, "largest difference \(worst)")
    }

    /// What `stream` writes, in CSV and JSON Lines, one sensor or all, `replay:` and `fuse` read back.
    @Test func streamOutputInEveryLayoutReadsBack() async throws {
        for format in ["csv", "jsonl"] {
            let one = try Self.temp("gyro.\(format)")
            #expect(try await CLI.run(["stream", "--source", "sim:still", "--sensor", "gyro", "--format", format, "--duration", "0.3", "-o", one]).status == 0)
            let written = try String(contentsOfFile: one, encoding: .utf8).split(separator: "\n").count
            let back = try await CLI.run(["stream", "--source", "replay:\(one)", "--sensor", "gyro", "--format", format])
            #expect(back.status == 0, "\(back.stderr)")
            #expect(back.stdout.split(separator: "\n").count == written, "\(format): every sample played back")

            let all = try Self.temp("raw.\(format)")
            #expect(try await CLI.run(["stream", "--source", "sim:still", "--sensor", "raw", "--format", format, "--duration", "0.3", "-o", all]).status == 0)
            let fused = try await CLI.run(["fuse", all, "--format", format])
            #expect(fused.status == 0, "\(fused.stderr)")
            #expect(fused.stdout.split(separator: "\n").count > 10)
        }
    }
}
