import Foundation
import MotionTestSupport
import Testing

@Suite(.serialized) struct StreamCommandTests {
    func temp(_ name: String) -> String {
        NSTemporaryDirectory() + "cm-\(UUID().uuidString)-\(name)"
    }

    @Test func oneSensorCSVStartsWithItsHeaderThenNamesTheSensor() async throws {
        let before = ProcessInfo.processInfo.systemUptime
        let r = try await CLI.run(["stream", "--source", "sim:still", "--sensor", "gyro", "--interval", "0.01", "--duration", "0.3"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "timestamp,x,y,z")
        #expect(lines.dropFirst().first == "# sensor=gyro")
        let rows = lines.dropFirst(2).map { $0.split(separator: ",").compactMap { Double($0) } }
        #expect(rows.count >= 20 && rows.count <= 40, "about 30 rows at 100 Hz in 0.3 s, got \(rows.count)")
        #expect(rows.allSatisfy { $0.count == 4 })
        let times = rows.map { $0[0] }
        #expect(times == times.sorted())
        let after = ProcessInfo.processInfo.systemUptime
        #expect(times.first! >= before && times.last! <= after, "timestamps are seconds since boot, within the run: \(before)…\(after)")
    }

    @Test func deviceMotionCSVHasTheDocumentedColumnsAndJSONLParses() async throws {
        let csv = try await CLI.run(["stream", "--source", "sim:handheld", "--sensor", "device-motion", "--duration", "0.3"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdout.split(separator: "\n")
        #expect(lines.first == "timestamp,q_w,q_x,q_y,q_z,roll,pitch,yaw,gravity_x,gravity_y,gravity_z,user_acceleration_x,user_acceleration_y,user_acceleration_z,rotation_rate_x,rotation_rate_y,rotation_rate_z,magnetic_field_x,magnetic_field_y,magnetic_field_z,magnetic_field_accuracy,heading")
        let row = lines.dropFirst().first.map { $0.split(separator: ",").compactMap { Double($0) } } ?? []
        #expect(row.count == 22)
        if row.count == 22 {
            let gravityNorm = (row[8] * row[8] + row[9] * row[9] + row[10] * row[10]).squareRoot()
            #expect(abs(gravityNorm - 1) < 1e-6)
            #expect(row[21] == -1, "no heading in the arbitrary frame")
        }

        let jsonl = try await CLI.run(["stream", "--source", "sim:still", "--sensor", "accelerometer", "--format", "jsonl", "--duration", "0.2"])
        #expect(jsonl.status == 0)
        let first = try #require(jsonl.stdout.split(separator: "\n").first)
        let object = try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any]
        #expect((object?["z"] as? Double).map { abs($0 + 1) < 0.02 } == true, "face up reads z ≈ −1 g")
        #expect(object?["sensor"] as? String == "accelerometer")
        #expect(object?.keys.sorted() == ["sensor", "timestamp", "x", "y", "z"], "the sensor is named, so replay: reads it back")
    }

    @Test func aRawRecordingReplaysAsTheSameSamples() async throws {
        let path = temp("raw.csv")
        let rec = try await CLI.run(["stream", "--source", "sim:walk", "--sensor", "raw", "--duration", "0.4", "--output", path])
        #expect(rec.status == 0, "\(rec.stderr)")
        let recorded = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(recorded.first == "timestamp,sensor,x,y,z")
        let recordedAccel = recorded.dropFirst().filter { $0.contains(",accelerometer,") }.map { $0.split(separator: ",").dropFirst(2).joined(separator: ",") }
        #expect(recordedAccel.count >= 20)

        let play = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", "accelerometer"])
        #expect(play.status == 0, "\(play.stderr)")
        let replayed = play.stdout.split(separator: "\n").dropFirst(2).map { $0.split(separator: ",").dropFirst().joined(separator: ",") }
        #expect(replayed == Array(recordedAccel), "the replay ends with the recording and keeps every value")
    }

    @Test func aMalformedReplayNamesTheLineAndExitsNonZeroAfterTheGoodRows() async throws {
        let path = temp("bad.csv")
        try "timestamp,sensor,x,y,z\n1.00,gyro,0,0,0\n1.01,gyro,0,0,0\n1.02,gyro,0,zero,0\n1.03,gyro,0,0,0\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["stream", "--source", "replay:\(path)", "--sensor", "gyro"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("\(path):4:"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "one clear line")
        #expect(r.stdout.split(separator: "\n").count == 4, "header, sensor comment, and the two good rows")
    }

    @Test(arguments: [
        (["stream", "--source", "nowhere", "--sensor", "gyro"], "unknown source"),
        (["stream", "--source", "sim", "--sensor", "compass"], "compass"),
        (["stream", "--source", "sim", "--sensor", "gyro", "--duration", "-1"], "--duration"),
        (["stream", "--source", "replay:/nonexistent.csv", "--sensor", "gyro"], "no such file or folder"),
        (["stream", "--source", "sim", "--sensor", "device-motion", "--reference-frame", "x-true-north-z-vertical", "--duration", "0.2"], "true north"),
    ])
    func badInputPrintsOneLineAndExitsNonZero(arguments: [String], mention: String) async throws {
        let r = try await CLI.run(arguments)
        #expect(r.status != 0)
        #expect(r.stderr.contains(mention), "\(r.stderr)")
    }
}

@Suite struct SensorsCommandTests {
    @Test func listsTheSimulatorWithItsRatesAndRanges() async throws {
        let r = try await CLI.run(["sensors", "--source", "sim:rotate"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "sim:rotate  Simulated rotate device" || lines.first?.hasPrefix("sim:rotate  ") == true)
        #expect(lines.contains("  accelerometer  1–1000 Hz  ±16 g  step 0.0004883 g"))
        #expect(lines.contains { $0.hasPrefix("  gyro           1–1000 Hz  ±34.91 rad/s") })
        #expect(lines.contains { $0.hasPrefix("  magnetometer   1–100 Hz") })
    }
}

@Suite struct DemoCommandTests {
    @Test func demoShowsDeviceMotionFromTheSimulatorAndStopsAfterItsDuration() async throws {
        let r = try await CLI.run(["demo", "--duration", "1.5", "--port", "0"], timeout: 20)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("OpenCoreMotion demo: Simulated handheld device (sim:handheld)"))
        #expect(r.stdout.contains("roll"))
        #expect(r.stdout.contains("gravity"))
        #expect(r.stdout.contains("rotation rate"))
        #expect(r.stdout.contains("heading"))
        #expect(r.stdout.contains("Dashboard: http://127.0.0.1:"), "the demo serves the dashboard and prints its URL")
    }

    /// A reader that goes away (`coremotion demo | head`) ends the demo as a closed pipe ends any command,
    /// with SIGPIPE, even though the dashboard's networking ignores that signal: no crash report.
    @Test func aClosedPipeEndsTheDemoWithSIGPIPE() async throws {
        let p = Process()
        p.executableURL = CLI.executable
        p.arguments = ["demo", "--duration", "20", "--port", "0"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try out.fileHandleForReading.close()
        try p.run()
        let errText = PipeDrain(err.fileHandleForReading)
        await exited(p)
        let stderr = await errText.text()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGPIPE, "\(p.terminationReason) \(p.terminationStatus): \(stderr)")
        #expect(!stderr.contains("Fatal error") && !stderr.contains("crashed"), "\(stderr)")
    }
}
