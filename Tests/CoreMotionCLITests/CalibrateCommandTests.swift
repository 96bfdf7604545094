@testable import CoreMotionCLI
import Foundation
import MotionFusion
import OpenCoreMotion
import Testing

@Suite struct CalibrateCommandTests {
    static func tempDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let hardIron = Vector3(-310, 420, 150)
    static let softIron = Matrix3(rows: Vector3(1.08, 0.04, 0), Vector3(0.04, 0.93, 0.02), Vector3(0, 0.02, 1.0))
    static let bias = Vector3(0.08, -0.06, 0.1)

    /// A raw recording of a phone-like device: 2 s still face up, then still on each of its six faces,
    /// then turned around all axes; gyroscope bias about 5 °/s, hard iron 310–420 µT, soft iron.
    static func phoneRecording() -> String {
        var text = "timestamp,sensor,x,y,z\n"
        var seed: UInt64 = 42
        func noise() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return (Double(seed >> 11) / Double(1 << 53) - 0.5) * 0.01
        }
        let field = Vector3(20, 0, -43)
        var t = 500.0
        func row(_ q: Quaternion, rate: Vector3) {
            let a = q.inverseRotate(Vector3(0, 0, -1))
            let m = softIron * q.inverseRotate(field) + hardIron
            let g = rate + bias
            text += "\(t),accelerometer,\(a.x + noise()),\(a.y + noise()),\(a.z + noise())\n"
            text += "\(t),gyro,\(g.x + noise()),\(g.y + noise()),\(g.z + noise())\n"
            text += "\(t),magnetometer,\(m.x + 20 * noise()),\(m.y + 20 * noise()),\(m.z + 20 * noise())\n"
            t += 0.01
        }
        let faces = [Quaternion.identity, Quaternion(axis: Vector3(1, 0, 0), angle: .pi),
                     Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2), Quaternion(axis: Vector3(1, 0, 0), angle: -.pi / 2),
                     Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2), Quaternion(axis: Vector3(0, 1, 0), angle: -.pi / 2)]
        for _ in 0..<200 { row(.identity, rate: .zero) }
        for face in faces {
            for _ in 0..<150 { row(face, rate: .zero) }
            for i in 0..<50 { row(Quaternion(axis: Vector3(0.6, 0.8, 0), angle: Double(i) * 0.05) * face, rate: Vector3(1, 1, 0)) }
        }
        // Turned around all axes: a slow tumble through every orientation.
        for i in 0..<2000 {
            let s = Double(i) * 0.01
            let q = Quaternion(axis: Vector3(0, 0, 1), angle: 1.3 * s) * Quaternion(axis: Vector3(1, 0, 0), angle: 0.7 * s)
                * Quaternion(axis: Vector3(0, 1, 0), angle: 0.45 * s)
            row(q, rate: Vector3(0.7, 0.45, 1.3))
        }
        return text
    }

    @Test("calibrate REC stores the calibration per identity; fuse --calibration applies it; the fused field is calibrated from the first row")
    func storeAndUse() async throws {
        let dir = try Self.tempDirectory()
        let rec = dir.appendingPathComponent("phone.csv")
        try Self.phoneRecording().write(to: rec, atomically: true, encoding: .utf8)
        let env = ["COREMOTION_CALIBRATION_DIR": dir.appendingPathComponent("store").path]
        let r = try await CLI.run(["calibrate", rec.path, "--identity", "sensorlogger://phone"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("stored for sensorlogger://phone in "))
        let store = DeviceCalibrationStore(directory: dir.appendingPathComponent("store").path)
        let record = try #require(try store.load("sensorlogger://phone"))
        let c = record.calibration
        #expect((try #require(c.magnetometerOffset) - Self.hardIron).length < 1.5, "offset \(String(describing: c.magnetometerOffset))")
        #expect((try #require(c.gyroBias) - Self.bias).length < 0.002)
        #expect(try #require(c.accelerometerOffset).length < 0.005)
        #expect(c.magnetometerAccuracy >= .medium)
        #expect(record.origin == "recording \(rec.path)")

        let fused = try await CLI.run(["fuse", rec.path, "--calibration", "sensorlogger://phone", "--format", "jsonl"], environment: env)
        #expect(fused.status == 0, "\(fused.stderr)")
        // The second row, the first after a magnetometer sample: the calibrated field (|m| ≈ 47 µT, not the
        // raw 500 µT) with the stored accuracy.
        let first = try #require(fused.stdout.split(separator: "\n").dropFirst().first)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        let m = Vector3(json["magnetic_field_x"] as? Double ?? 0, json["magnetic_field_y"] as? Double ?? 0, json["magnetic_field_z"] as? Double ?? 0)
        #expect(abs(m.length - 47) < 3, "first field \(m)")
        #expect((json["magnetic_field_accuracy"] as? Double ?? -1) >= 1, "\(first)")

        let missing = try await CLI.run(["fuse", rec.path, "--calibration", "i2c:/dev/i2c-9:0x68"], environment: env)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no stored calibration for i2c:/dev/i2c-9:0x68"))
        let noIdentity = try await CLI.run(["calibrate", rec.path], environment: env)
        #expect(noIdentity.status == 1)
        #expect(noIdentity.stderr.contains("--identity"))
    }

    @Test("calibrate --print on BROAD trial 01: the exact report, nothing stored")
    func printBroadTrial() async throws {
        let dir = try Self.tempDirectory()
        let r = try await CLI.run(["calibrate", "../shared/data/broad/01_undisturbed_slow_rotation_A.csv", "--print"],
                                  environment: ["COREMOTION_CALIBRATION_DIR": dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            calibration of ../shared/data/broad/01_undisturbed_slow_rotation_A.csv
            samples: accelerometer 56940, gyroscope 56940, magnetometer 56940
            gyroscope bias: -0.079 -0.076 0.470 °/s (rest 73.0 s, standard error 0.001 °/s)
            accelerometer: not calibrated: 1 distinct rest poses, reading 1 g along -z (lay the device still on each of its six faces)
            magnetometer offset: -0.39 0.16 0.62 µT
            magnetometer soft iron: not fitted (hard iron only: too few orientations for it, or none found; turn the device around all axes)
            magnetometer field 43.44 µT, residual 3.31 %, coverage 0.18, 24274 readings, accuracy low

            """)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("live calibrate on the simulator finds its hard iron (14, −9, 22) µT; sensors shows it; stream uses it unless --no-calibration")
    func liveOnTheSimulator() async throws {
        let dir = try Self.tempDirectory()
        let env = ["COREMOTION_CALIBRATION_DIR": dir.path]
        let r = try await CLI.run(["calibrate", "--source", "sim:rotate", "--step-seconds", "1"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("step 1 of 3, 1 s: Hold the device still."))
        #expect(r.stderr.contains("step 3 of 3, 3 s: Turn the device around all axes"))
        let record = try #require(try DeviceCalibrationStore(directory: dir.path).load("sim:rotate"))
        let offset = try #require(record.calibration.magnetometerOffset)
        #expect((offset - Vector3(14, -9, 22)).length < 0.5, "offset \(offset)")
        #expect(record.origin == "live sim:rotate")

        let sensors = try await CLI.run(["sensors", "--source", "sim:rotate"], environment: env)
        #expect(sensors.stdout.contains("  calibration: magnetometer hard and soft iron (accuracy "), "\(sensors.stdout)")

        func accuracy(_ extra: [String]) async throws -> String? {
            let s = try await CLI.run(["stream", "--source", "sim:rotate", "--sensor", "device-motion", "--duration", "0.05",
                                       "--reference-frame", "xMagneticNorthZVertical"] + extra, environment: env)
            // The third line: the second update, the first after a magnetometer sample.
            let line = s.stdout.split(separator: "\n").dropFirst(2).first
            return line.map { String($0.split(separator: ",", omittingEmptySubsequences: false)[20]) }
        }
        #expect(try await accuracy([]) == "2")
        #expect(try await accuracy(["--no-calibration"]) == "-1")
    }
}
