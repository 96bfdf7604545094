@testable import CoreMotionCLI
import Foundation
import MotionFusion
import MotionRecordingFormats
import OpenCoreMotion
import Testing

@Suite struct FuseCommandTests {
    /// A temporary directory for one test.
    static func tempDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fuse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A raw recording (`timestamp,sensor,x,y,z`) of a device lying still, face up, its top edge (y)
    /// pointing to magnetic north-east (heading 45°): gyro and accelerometer at 100 Hz, magnetometer at 50 Hz.
    static func rawRecording(seconds: Double = 3) -> String {
        var text = "timestamp,sensor,x,y,z\n"
        // Device → NWU: rotation about z by −135° takes the device y axis to (0.707, −0.707, 0), north-east.
        let q = Quaternion.aboutZ(-3 * Double.pi / 4)
        let field = q.inverseRotate(Vector3(20, 0, -45))
        let n = Int(seconds * 100)
        for i in 0..<n {
            let t = 1000 + Double(i) * 0.01
            text += "\(t),gyro,0.001,-0.002,0.0005\n"
            text += "\(t),accelerometer,0.0,0.0,-1.0\n"
            if i % 2 == 0 { text += "\(t),magnetometer,\(field.x),\(field.y),\(field.z)\n" }
        }
        return text
    }

    static func run(_ args: [String]) throws {
        var cmd = try FuseCommand.parseAsRoot(Array(args.dropFirst()))
        try cmd.run()
    }

    static func rows(_ url: URL) throws -> (header: [String], rows: [[Double]]) {
        let text = try String(contentsOf: url, encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline)
        let header = lines[0].split(separator: ",").map(String.init)
        return (header, lines.dropFirst().map { $0.split(separator: ",").map { Double($0)! } })
    }

    @Test func fusesARawRecordingInTheMagneticNorthFrame() throws {
        let dir = try Self.tempDirectory()
        let input = dir.appendingPathComponent("raw.csv"), output = dir.appendingPathComponent("out.csv")
        try Self.rawRecording().write(to: input, atomically: true, encoding: .utf8)
        try Self.run(["fuse", input.path, "--format", "csv", "--output", output.path])
        let (header, rows) = try Self.rows(output)
        #expect(header == DeviceMotionWriter.fields)
        #expect(rows.count == 300) // one row per fused update: per gyroscope sample
        let last = rows.last!
        let heading = last[header.firstIndex(of: "heading")!]
        #expect(abs(heading - 45) < 1)
        #expect(abs(last[header.firstIndex(of: "gravity_z")!] + 1) < 1e-3)
    }

    @Test func arbitraryFramesReportNegativeHeading() throws {
        let dir = try Self.tempDirectory()
        let input = dir.appendingPathComponent("raw.csv"), output = dir.appendingPathComponent("out.csv")
        try Self.rawRecording().write(to: input, atomically: true, encoding: .utf8)
        try Self.run(["fuse", input.path, "--no-magnetometer", "--output", output.path])
        let (header, rows) = try Self.rows(output)
        #expect(rows.allSatisfy { $0[header.firstIndex(of: "heading")!] < 0 })
        try Self.run(["fuse", input.path, "--reference-frame", "xArbitraryCorrectedZVertical", "--output", output.path])
        let corrected = try Self.rows(output)
        #expect(corrected.rows.allSatisfy { $0[header.firstIndex(of: "heading")!] < 0 })
    }

    @Test func trueNorthNeedsALocationAndAddsTheDeclination() throws {
        let dir = try Self.tempDirectory()
        let input = dir.appendingPathComponent("raw.csv"), output = dir.appendingPathComponent("out.csv")
        try Self.rawRecording().write(to: input, atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) {
            try Self.run(["fuse", input.path, "--reference-frame", "xTrueNorthZVertical", "--output", output.path])
        }
        // Berlin: declination ≈ +5° (east), so the true heading is larger than the magnetic one.
        try Self.run(["fuse", input.path, "--reference-frame", "xTrueNorthZVertical", "--location", "52.5,13.4",
                      "--output", output.path])
        let (header, rows) = try Self.rows(output)
        let declination = try #require(MagneticModelResource.declinationDegrees(latitude: 52.5, longitude: 13.4))
        #expect(declination > 3 && declination < 8)
        #expect(abs(rows.last![header.firstIndex(of: "heading")!] - (45 + declination)) < 1)
    }

    @Test func offlineModeWritesEveryRow() throws {
        let dir = try Self.tempDirectory()
        let input = dir.appendingPathComponent("raw.csv"), output = dir.appendingPathComponent("out.csv")
        try Self.rawRecording().write(to: input, atomically: true, encoding: .utf8)
        try Self.run(["fuse", input.path, "--offline", "--output", output.path])
        let (header, rows) = try Self.rows(output)
        #expect(rows.count == 300)
        #expect(rows.allSatisfy { abs($0[header.firstIndex(of: "heading")!] - 45) < 1 })
    }

    @Test func broadFormatWritesENUQuaternions() throws {
        let dir = try Self.tempDirectory()
        let input = dir.appendingPathComponent("trial.csv"), output = dir.appendingPathComponent("est.csv")
        // Device lying face up with its x axis pointing magnetic north: sensor → ENU is a +90° turn about z.
        var text = "# BROAD trial T; sampling_rate_hz=100\n"
        text += "t,acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z,mag_x,mag_y,mag_z,q_w,q_x,q_y,q_z,movement\n"
        for i in 0..<500 { text += "\(Double(i) / 100),0,0,9.81,0,0,0,20,0,-45,,,,,0\n" }
        try text.write(to: input, atomically: true, encoding: .utf8)
        try Self.run(["fuse", input.path, "--format", "broad", "--output", output.path])
        let (header, rows) = try Self.rows(output)
        #expect(rows.count == 500)
        let r = rows.last!
        let q = Quaternion(w: r[header.firstIndex(of: "q_w")!], x: r[header.firstIndex(of: "q_x")!],
                           y: r[header.firstIndex(of: "q_y")!], z: r[header.firstIndex(of: "q_z")!])
        let expected = Quaternion.aboutZ(Double.pi / 2)
        #expect(abs(abs(q.w * expected.w + q.z * expected.z + q.x * expected.x + q.y * expected.y) - 1) < 1e-6)
    }

    @Test func missingInputAndBadFramesAreErrors() throws {
        #expect(throws: (any Error).self) { try Self.run(["fuse", "/nonexistent/file.csv"]) }
        let dir = try Self.tempDirectory()
        let input = dir.appendingPathComponent("raw.csv")
        try Self.rawRecording(seconds: 0.1).write(to: input, atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) { try Self.run(["fuse", input.path, "--reference-frame", "sideways"]) }
    }

    @Test func theBundledWMM2025ModelLoads() throws {
        let model = try #require(MagneticModelResource.worldMagneticModel2025)
        #expect(model.epoch == 2025)
    }

    @Test func broadGridWithoutCrossValidationIsAnErrorNotIgnored() async throws {
        let r = try await CLI.run(["bench", "broad", "../shared/data/broad", "--grid", "accelerometerTimeConstant=1,2"])
        #expect(r.status != 0 && r.stdout.isEmpty)
        #expect(r.stderr.contains("--grid chooses among values in --cross-validate"), "\(r.stderr)")
    }

    @Test func broadHardIronNeedsThreeComponentsAndNoCrossValidation() async throws {
        let short = try await CLI.run(["bench", "broad", "../shared/data/broad", "--hard-iron=20,-12"])
        #expect(short.status != 0 && short.stdout.isEmpty)
        #expect(short.stderr.contains("--hard-iron expects X,Y,Z"), "\(short.stderr)")
        let cv = try await CLI.run(["bench", "broad", "../shared/data/broad", "--cross-validate", "--hard-iron=20,-12,25"])
        #expect(cv.status != 0 && cv.stdout.isEmpty)
        #expect(cv.stderr.contains("--cross-validate does not take --hard-iron"), "\(cv.stderr)")
    }

    /// A phone's offsets have negative components: `--gyro-bias -2,5,-3` is read as the value, as
    /// `--gyro-bias=-2,5,-3` is (before, it was refused as an option with its value missing).
    @Test func broadOffsetsMayStartWithAMinusSign() throws {
        let command = try BenchBroadCommand.parse(["DIR", "--gyro-bias", "-2,5,-3", "--hard-iron", "-60,90,-40",
                                                   "--soft-iron", "1.1,0.9,1,-0.02,0,0.01"])
        #expect(try command.gyroBiasOffset() == Vector3(-2, 5, -3) * (Double.pi / 180))
        #expect(try command.hardIronOffset() == Vector3(-60, 90, -40))
        #expect(try command.softIronMatrix() == Matrix3(rows: Vector3(1.1, -0.02, 0), Vector3(-0.02, 0.9, 0.01), Vector3(0, 0.01, 1)))
    }

    @Test func benchCommandsAreRegistered() {
        let names = BenchCommand.configuration.subcommands.map { $0.configuration.commandName }
        #expect(names.contains("broad") && names.contains("fusion"))
        #expect(CoreMotionCommand.configuration.subcommands.contains { $0.configuration.commandName == "fuse" })
    }
}
