import MotionSourcesLinuxTesting
import Testing
import Foundation
import MotionSources
import MotionFusion
@testable import MotionSourcesLinux
import OpenCoreMotion

/// Mount matrices and scales that iio-sensor-proxy refuses or tolerates, handled the same way:
/// an invalid matrix is refused with a warning and the next source is used (override → udev
/// ACCEL_MOUNT_MATRIX → hwdb ACCEL_MOUNT_MATRIX → in_<type>_mount_matrix → in_mount_matrix →
/// mount_matrix → identity); an empty matrix means the identity; a trailing `;` is tolerated;
/// a scale of 0 is missing.
@Suite struct LinuxEdgeCaseTests {
    static let dir = "/sys/devices/platform/i2c-BOSC0200:00/iio:device0"

    /// One chip accelerometer (bmc150) upright and leaning back, with the given attributes. A chip reads
    /// specific force: up is positive, so the raw counts are (0, 919, 385).
    static func tree(_ attributes: [String: String] = [:], udev: String? = nil, hwdb: String = "") -> LinuxDiscoveryOptions {
        let fs = InMemoryLinuxFileSystem()
        fs.setLink("/sys/bus/iio/devices/iio:device0", to: dir)
        fs.setFile("/sys/devices/platform/i2c-BOSC0200:00/modalias", "acpi:BOSC0200:BOSC0200:\n")
        fs.setFile("/sys/class/dmi/id/modalias", "dmi:bvnTEST:svnTEST:pnEDGE:\n")
        fs.setFile(dir + "/name", "bmc150_accel\n")
        for (a, v) in [("x", "0"), ("y", "919"), ("z", "385")] { fs.setFile(dir + "/in_accel_\(a)_raw", v + "\n") }
        fs.setFile(dir + "/in_accel_scale", "0.0098\n")
        for (k, v) in attributes { fs.setFile(dir + "/" + k, v) }
        if let udev {
            fs.setFile(dir + "/dev", "250:0\n")
            fs.setFile("/run/udev/data/c250:0", "E:ACCEL_MOUNT_MATRIX=\(udev)\n")
        }
        return LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: hwdb), fileSystem: fs)
    }

    static func accelerometer(_ o: LinuxDiscoveryOptions) throws -> IIOSensorChannels {
        let outcomes = IIODiscovery.scan(o)
        guard case .device(let d)? = outcomes.first else { Issue.record("no device: \(outcomes)"); throw CancellationError() }
        return try #require(d.sensors[.accelerometer])
    }

    static let hwdbKey = "sensor:modalias:acpi:BOSC0200*:dmi:*svnTEST*\n"

    @Test func invalidMatricesAreRefusedWithTheReason() throws {
        let cases: [(String, String)] = [
            ("0, 0, 0; 0, 1, 0; 0, 0, 1", "row x is all zeros"),
            ("1, 0, 0; 0, 1, 0; 0, 0, 0", "row z is all zeros"),
            ("0, 1, 0; 0, 1, 0; 0, 0, 1", "rows x and y repeat"),
            ("1, 1, 0; 0, 1, 0; 1, 2, 0", "not invertible"),
            ("1, 0, 0; 0, 1, 0", "not nine numbers"),
            ("1, 0, 0; 0, 1, 0; 0, 0, 1, 0", "not nine numbers"),
            ("1, 0, 0; 0, 1, 0; 0, 0, nan", "not nine numbers"),
        ]
        for (text, reason) in cases {
            switch MountMatrix.resolving(text) {
            case .success(let m): Issue.record("\(text) accepted as \(m)")
            case .failure(let why): #expect(why.reason.contains(reason), "\(text): \(why)")
            }
        }
        #expect(try MountMatrix.resolving("").get() == .identity)
        #expect(try MountMatrix.resolving(" \n").get() == .identity)
        #expect(try MountMatrix.resolving("0, -1, 0; 1, 0, 0; 0, 0, 1;").get() == MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1)))
        #expect(try MountMatrix.resolving("0.7071, -0.7071, 0; 0.7071, 0.7071, 0; 0, 0, 1").get().isOrthonormal)
    }

    @Test func aZeroRowFromUdevFallsBackToSysfsThenIdentity() throws {
        // The issue's case: iio-sensor-proxy refuses it and says "normal" (upright).
        let zeroRow = "0, 0, 0; 0, 1, 0; 0, 0, 1"
        let sysfs = try Self.accelerometer(Self.tree(["in_accel_mount_matrix": "-1, 0, 0; 0, -1, 0; 0, 0, 1\n"], udev: zeroRow))
        #expect(sysfs.mountMatrix == MountMatrix(parsing: "-1, 0, 0; 0, -1, 0; 0, 0, 1"))
        #expect(sysfs.mountMatrixSource.hasPrefix("in_accel_mount_matrix; refused: udev ACCEL_MOUNT_MATRIX '\(zeroRow)' (row x is all zeros)"),
                "\(sysfs.mountMatrixSource)")
        let identity = try Self.accelerometer(Self.tree(udev: zeroRow))
        #expect(identity.mountMatrix == .identity)
        #expect(identity.mountMatrixSource.hasPrefix("none (identity); refused: udev"))
        var estimator = DeviceOrientationEstimator()
        let v = identity.coreMotionValue(raw: (0, 919, 385))
        #expect(estimator.update(v) == .portrait, "upright: the chip's +y (up) is Core Motion's y < 0")
    }

    @Test func anInvalidHwdbMatrixFallsBackToSysfs() throws {
        let repeated = "0, 1, 0; 0, 1, 0; 0, 0, 1"
        let s = try Self.accelerometer(Self.tree(["in_accel_mount_matrix": "0, -1, 0; 1, 0, 0; 0, 0, 1\n"],
                                                 hwdb: Self.hwdbKey + " ACCEL_MOUNT_MATRIX=\(repeated)\n"))
        #expect(s.mountMatrix == MountMatrix(parsing: "0, -1, 0; 1, 0, 0; 0, 0, 1"))
        #expect(s.mountMatrixSource.contains("refused: hwdb ACCEL_MOUNT_MATRIX '\(repeated)' (rows x and y repeat)"))
        // A valid hwdb matrix still wins over sysfs.
        let valid = try Self.accelerometer(Self.tree(["in_accel_mount_matrix": "0, -1, 0; 1, 0, 0; 0, 0, 1\n"],
                                                     hwdb: Self.hwdbKey + " ACCEL_MOUNT_MATRIX=-1, 0, 0; 0, -1, 0; 0, 0, 1\n"))
        #expect(valid.mountMatrixSource == "hwdb ACCEL_MOUNT_MATRIX")
    }

    @Test func anInvalidSysfsMatrixNoLongerDropsTheDevice() throws {
        for bad in ["0, 0, 0; 0, 1, 0; 0, 0, 1\n", "1, 0; 0, 1\n", "1, 1, 0; 0, 1, 0; 1, 2, 0\n"] {
            let s = try Self.accelerometer(Self.tree(["in_accel_mount_matrix": bad]))
            #expect(s.mountMatrix == .identity, "\(bad)")
            #expect(s.mountMatrixSource.hasPrefix("none (identity); refused: in_accel_mount_matrix"), "\(s.mountMatrixSource)")
        }
        // The per-type attribute refused, the shared one is next.
        let shared = try Self.accelerometer(Self.tree(["in_accel_mount_matrix": "0, 0, 0; 0, 0, 0; 0, 0, 0\n",
                                                       "mount_matrix": "0, 1, 0; 1, 0, 0; 0, 0, 1\n"]))
        #expect(shared.mountMatrix == MountMatrix(parsing: "0, 1, 0; 1, 0, 0; 0, 0, 1"))
        #expect(shared.mountMatrixSource.hasPrefix("mount_matrix; refused: in_accel_mount_matrix"))
    }

    @Test func anEmptyMatrixIsTheIdentityAndATrailingSemicolonIsTolerated() throws {
        let empty = try Self.accelerometer(Self.tree(["in_accel_mount_matrix": "\n"]))
        #expect(empty.mountMatrix == .identity)
        #expect(empty.mountMatrixSource == "in_accel_mount_matrix (empty: identity)")
        let trailing = try Self.accelerometer(Self.tree(["in_accel_mount_matrix": "0, -1, 0; 1, 0, 0; 0, 0, 1;\n"]))
        #expect(trailing.mountMatrix == MountMatrix(parsing: "0, -1, 0; 1, 0, 0; 0, 0, 1"))
        #expect(trailing.mountMatrixSource == "in_accel_mount_matrix")
    }

    @Test func aZeroScaleIsMissingAndSaysSo() throws {
        let o = Self.tree(["in_accel_scale": "0\n"])
        let s = try Self.accelerometer(o)
        #expect(s.axes.map(\.scale) == [1, 1, 1])
        #expect(s.axes.allSatisfy { $0.scaleNote == "in_accel_scale is 0: treated as missing (1 per count)" })
        let v = s.coreMotionValue(raw: (0, 919, 385))
        #expect(abs(v.y - (-919 / 9.80665)) < 1e-9, "counts read as m/s², as iio-sensor-proxy does, negated as for every chip")
        var estimator = DeviceOrientationEstimator()
        #expect(estimator.update(v) == .portrait, "the orientation no longer stays unknown")
        // `coremotion sensors` shows it.
        let report = try #require(LinuxSensorDiscovery.discover(options: o).first)
        let details = Dictionary(report.description.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(details["accelerometer scale"] == "1 m/s² per count (in_accel_scale is 0: treated as missing (1 per count))",
                "\(details["accelerometer scale"] ?? "none")")
    }
}
