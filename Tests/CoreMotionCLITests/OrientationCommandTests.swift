import Foundation
import Testing

// The `orientation` command run as a process over a sysfs tree (moved from MotionSourcesLinuxTests,
// which no longer depends on the CLI).
@Suite struct OrientationCommandTests {
    /// The `coremotion` executable next to the test bundle.
    static var executable: URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("coremotion").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("coremotion")
    }

    static func run(_ args: [String], env: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        var e = ProcessInfo.processInfo.environment
        e.removeValue(forKey: "COREMOTION_SOURCE")
        for (k, v) in env { e[k] = v }
        p.environment = e
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// A sysfs tree holding one accelerometer reading.
    static func tree(_ raw: (Int, Int, Int), scale: String = "0.098066500") throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cm-orient-\(UUID().uuidString)")
        let dev = root.appendingPathComponent("sys/bus/iio/devices/iio:device0")
        try FileManager.default.createDirectory(at: dev, withIntermediateDirectories: true)
        for (name, value) in [("name", "accel_3d"), ("in_accel_x_raw", "\(raw.0)"), ("in_accel_y_raw", "\(raw.1)"),
                              ("in_accel_z_raw", "\(raw.2)"), ("in_accel_scale", scale)] {
            try (value + "\n").write(to: dev.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test func onceOnATreeWithOneReadingPrintsItsOrientation() throws {
        // The HP ENVY's reading (0, −9, −5): upright.
        let a = try Self.tree((0, -9, -5))
        defer { try? FileManager.default.removeItem(at: a) }
        let r = try Self.run(["orientation", "--sysfs-root", a.appendingPathComponent("sys").path, "--dev-root", a.path, "--once"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == "portrait\n")
        // Lying on its left edge (x down), through the environment variable.
        let b = try Self.tree((-600, 0, 0))
        defer { try? FileManager.default.removeItem(at: b) }
        let r2 = try Self.run(["orientation", "--once"], env: ["COREMOTION_SYSFS_ROOT": b.appendingPathComponent("sys").path])
        #expect(r2.out == "landscapeLeft\n")
        // Face up.
        let c = try Self.tree((0, 3, -100))
        defer { try? FileManager.default.removeItem(at: c) }
        #expect(try Self.run(["orientation", "--sysfs-root", c.appendingPathComponent("sys").path, "--once"]).out == "faceUp\n")
    }

    @Test func noSensorIsAClearError() throws {
        let r = try Self.run(["orientation", "--sysfs-root", "/nonexistent", "--dev-root", "/nonexistent", "--once"])
        #expect(r.status == 1)
        #expect(r.err.contains("no motion sensor found under /nonexistent"))
    }

    @Test func theOrientationCommandDecidesWithAZeroScale() throws {
        let root = try Self.tree((0, -919, -385), scale: "0")
        defer { try? FileManager.default.removeItem(at: root) }
        let r = try Self.run(["orientation", "--sysfs-root", root.appendingPathComponent("sys").path, "--dev-root", root.path, "--once"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == "portrait\n")
    }
}
