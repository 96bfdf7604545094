import Foundation
import Testing

// The `orientation` command run as a process over a sysfs tree (moved from MotionSourcesLinuxTests,
// which no longer depends on the CLI).
@Suite struct OrientationCommandTests {
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

    @Test func onceOnATreeWithOneReadingPrintsItsOrientation() async throws {
        // The HP ENVY's reading (0, −9, −5): upright.
        let a = try Self.tree((0, -9, -5))
        defer { try? FileManager.default.removeItem(at: a) }
        let r = try await CLI.run(["orientation", "--sysfs-root", a.appendingPathComponent("sys").path, "--dev-root", a.path, "--once"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "portrait\n")
        // Lying on its left edge (x down), through the environment variable.
        let b = try Self.tree((-600, 0, 0))
        defer { try? FileManager.default.removeItem(at: b) }
        let r2 = try await CLI.run(["orientation", "--once"], environment: ["COREMOTION_SYSFS_ROOT": b.appendingPathComponent("sys").path])
        #expect(r2.stdout == "landscapeLeft\n")
        // Face up.
        let c = try Self.tree((0, 3, -100))
        defer { try? FileManager.default.removeItem(at: c) }
        #expect(try await CLI.run(["orientation", "--sysfs-root", c.appendingPathComponent("sys").path, "--once"]).stdout == "faceUp\n")
    }

    @Test func noSensorIsAClearError() async throws {
        let r = try await CLI.run(["orientation", "--sysfs-root", "/nonexistent", "--dev-root", "/nonexistent", "--once"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("no motion sensor found under /nonexistent"))
    }

    @Test func theOrientationCommandDecidesWithAZeroScale() async throws {
        let root = try Self.tree((0, -919, -385), scale: "0")
        defer { try? FileManager.default.removeItem(at: root) }
        let r = try await CLI.run(["orientation", "--sysfs-root", root.appendingPathComponent("sys").path, "--dev-root", root.path, "--once"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "portrait\n")
    }
}
