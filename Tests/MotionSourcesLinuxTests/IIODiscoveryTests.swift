import MotionSourcesLinuxTesting
import Testing
import Foundation
import MotionSources
import MotionFusion
@testable import MotionSourcesLinux

@Suite struct IIODiscoveryTests {
    func options(_ fs: InMemoryLinuxFileSystem, overrides: [String: MountMatrix] = [:]) -> LinuxDiscoveryOptions {
        LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: Fixtures.hwdb, mountMatrixOverrides: overrides, fileSystem: fs)
    }

    @Test func hpEnvyGroupsThreeHIDSensorsIntoOneMotionDevice() throws {
        let fs = try Fixtures.hpEnvyTwin()
        let reports = LinuxSensorDiscovery.discover(options: options(fs))
        #expect(reports.count == 1)
        let r = try #require(reports.first)
        #expect(r.status == .usable)
        let source = try #require(r.source as? IIOSource)
        #expect(Set(source.info.sensors.keys) == [.accelerometer, .gyro, .magnetometer])
        #expect(source.info.identifier == "iio:iio:device2")
        #expect(source.devices.map(\.name) == ["accel_3d", "gyro_3d", "magn_3d"])
        let accel = try #require(source.devices[0].sensors[.accelerometer])
        #expect(accel.axes.map(\.scale) == [0.0980665, 0.0980665, 0.0980665])
        #expect(accel.currentRate == 12.5)
        #expect(accel.availableRates == .unknown)
        #expect(source.devices[0].bufferAccess == .unsupported("no scan elements for every axis"))
        let details = Dictionary(r.description.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(details["accelerometer scale"] == "0.0980665 m/s² per count")
        #expect(details["accelerometer mount matrix"] == "1, 0, 0; 0, 1, 0; 0, 0, 1 [none (identity)]")
        #expect(details["magnetometer channels"] == "in_magn_x_raw, in_magn_y_raw, in_magn_z_raw")
        #expect(details["accelerometer rate now"] == "12.5 Hz (writable)")
    }

    @Test func hpEnvyPollsRealValuesInCoreMotionUnits() async throws {
        let fs = try Fixtures.hpEnvyTwin()
        let source = try LinuxSensorDiscovery.source(forSpec: "iio:accel_3d", options: options(fs))
        let got = Collected()
        let before = LinuxClock.monotonic()
        let rates = try source.apply(SensorDemand(rates: [.accelerometer: 50, .gyro: 50, .magnetometer: 10]), sink: got.sink)
        try await waitUntil { Set(got.samples.map(\.sensor)).count == 3 }
        _ = try source.apply(.none, sink: got.sink)
        let count = got.samples.count
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(got.samples.count == count, "no sample after apply(.none) returned")
        // No list of rates: the demand is written and read back (the twin stores what is written).
        #expect(rates[.accelerometer] == 50)
        #expect(rates[.magnetometer] == 10)
        let a = try #require(got.samples.first { $0.sensor == .accelerometer })
        // (0, −9, −5) × 0.0980665 m/s² = (0, −0.09, −0.05) g.
        #expect(abs(a.value.x) < 1e-12 && abs(a.value.y + 0.09) < 1e-12 && abs(a.value.z + 0.05) < 1e-12)
        let m = try #require(got.samples.first { $0.sensor == .magnetometer })
        // (40, −14, −16) × 1e-6 Gauss × 100 µT/Gauss.
        #expect(abs(m.value.x - 0.004) < 1e-12 && abs(m.value.y + 0.0014) < 1e-12)
        let g = try #require(got.samples.first { $0.sensor == .gyro })
        #expect(g.value == .zero)
        // On the monotonic clock, within the test (was "within the last 5 s", which a test resumed late
        // on a loaded machine outlived: 9.8 s in a full run beside a build).
        let now = LinuxClock.monotonic()
        #expect(got.samples.allSatisfy { $0.timestamp <= now && $0.timestamp >= before })
    }

    @Test func perAxisScaleOffsetAndMatrixSources() throws {
        let fs = InMemoryLinuxFileSystem()
        let dir = "/sys/devices/platform/soc/1c2b000.i2c/i2c-1/1-0068/iio:device0"
        fs.setLink("/sys/bus/iio/devices/iio:device0", to: dir)
        fs.setFile("/sys/devices/platform/soc/1c2b000.i2c/i2c-1/1-0068/modalias", "of:NaccelerometerT_null_Cinvensense,mpu6050\n")
        fs.setFile(dir + "/name", "mpu6050\n")
        for (axis, raw) in [("x", "100"), ("y", "-200"), ("z", "16384")] {
            fs.setFile(dir + "/in_accel_\(axis)_raw", raw + "\n")
            fs.setFile(dir + "/in_anglvel_\(axis)_raw", "131\n")
        }
        fs.setFile(dir + "/in_accel_scale", "0.000598\n")
        fs.setFile(dir + "/in_accel_z_scale", "0.000599\n")        // per-axis wins
        fs.setFile(dir + "/in_accel_offset", "-100\n")
        fs.setFile(dir + "/in_anglvel_scale", "0.000133090\n")
        fs.setFile(dir + "/in_mount_matrix", "0, -1, 0; 1, 0, 0; 0, 0, 1\n")   // the PinePhone's
        fs.setFile(dir + "/sampling_frequency", "50\n", writable: true)
        fs.setFile(dir + "/sampling_frequency_available", "10 20 50 100 200 500 1000\n")
        var o = options(fs)
        let src = try #require(LinuxSensorDiscovery.firstAvailable(options: o) as? IIOSource)
        let accel = src.devices[0].sensors[.accelerometer]!
        #expect(accel.axes.map(\.scale) == [0.000598, 0.000598, 0.000599])
        #expect(accel.axes.map(\.offset) == [-100, -100, -100])
        #expect(accel.mountMatrixSource == "in_mount_matrix")
        #expect(src.devices[0].sensors[.gyro]?.mountMatrixSource == "in_mount_matrix")
        let v = accel.coreMotionValue(raw: (100, -200, 16384))
        // chip (0, −300·0.000598, 16284·0.000599) → device (−y, x, z), negated: the mpu6050 driver
        // reports specific force (face up +1 g), Core Motion the gravity vector.
        #expect(accel.accelerationSign == .specificForce)
        #expect(abs(v.x - (-300 * 0.000598 / 9.80665)) < 1e-12)
        #expect(abs(v.y) < 1e-12)
        #expect(abs(v.z - (-16284 * 0.000599 / 9.80665)) < 1e-12)
        // The gyroscope takes the rotation alone.
        let gyro = try #require(src.devices[0].sensors[.gyro])
        #expect(gyro.frame == MountMatrix(parsing: "0, -1, 0; 1, 0, 0; 0, 0, 1"))
        // The shared rate attribute gets the fastest demand, rounded up to the list.
        let got = Collected()
        let rates = try src.apply(SensorDemand(rates: [.accelerometer: 60, .gyro: 150]), sink: got.sink)
        _ = try src.apply(.none, sink: got.sink)
        #expect(rates == [.accelerometer: 200, .gyro: 200])
        #expect(fs.writes.contains { $0.path.hasSuffix("sampling_frequency") && $0.text == "200" })
        // An override wins over everything; a hwdb/udev matrix wins over the attribute.
        o.mountMatrixOverrides = ["mpu6050": .identity]
        let overridden = try #require(LinuxSensorDiscovery.firstAvailable(options: o) as? IIOSource)
        #expect(overridden.devices[0].sensors[.accelerometer]?.mountMatrixSource == "override")
        fs.setFile(dir + "/dev", "250:0\n")
        fs.setFile("/run/udev/data/c250:0", "E:ID_PATH=platform\nE:ACCEL_MOUNT_MATRIX=-1, 0, 0; 0, -1, 0; 0, 0, 1\n")
        let udev = try #require(LinuxSensorDiscovery.firstAvailable(options: options(fs)) as? IIOSource)
        #expect(udev.devices[0].sensors[.accelerometer]?.mountMatrixSource == "udev ACCEL_MOUNT_MATRIX")
        // The gyro has no matrix of its own (only the shared in_mount_matrix): it follows udev's.
        #expect(udev.devices[0].sensors[.gyro]?.mountMatrix == MountMatrix(parsing: "-1, 0, 0; 0, -1, 0; 0, 0, 1"))
        // udev's matrix is tuned for iio-sensor-proxy (upright reads y < 0): its x and y rows flip the
        // chip's specific force already; the z row follows the frame's handedness (a reflection for a
        // chip), and the gyro takes the rotation it implies: none (the chip lies as the device does).
        #expect(udev.devices[0].sensors[.accelerometer]?.frame == MountMatrix(parsing: "-1, 0, 0; 0, -1, 0; 0, 0, -1"))
        #expect(udev.devices[0].sensors[.gyro]?.frame == .identity)
    }

    @Test func hwdbMatrixAppliesByModaliasAndDMI() throws {
        let fs = InMemoryLinuxFileSystem()
        let parent = "/sys/devices/pci0000:00/0000:00:16.0/i2c_designware.0/i2c-1/i2c-BOSC0200:00"
        fs.setLink("/sys/bus/iio/devices/iio:device0", to: parent + "/iio:device0")
        fs.setFile(parent + "/modalias", "acpi:BOSC0200:BOSC0200:\n")
        fs.setFile("/sys/class/dmi/id/modalias", "dmi:bvnLENOVO:bvr5HCN31WW:bd07/05/2017:br1.31:svnLENOVO:pn80XF:pvrLenovoMIIX320-10ICR:rvnLENOVO:rnLenovoMIIX320:\n")
        fs.setFile(parent + "/iio:device0/name", "bmc150_accel\n")
        for a in ["x", "y", "z"] { fs.setFile(parent + "/iio:device0/in_accel_\(a)_raw", "0\n") }
        fs.setFile(parent + "/iio:device0/in_accel_scale", "0.009582\n")
        fs.setFile(parent + "/iio:device0/in_accel_mount_matrix", "1, 0, 0; 0, 1, 0; 0, 0, 1\n")
        let src = try #require(LinuxSensorDiscovery.firstAvailable(options: options(fs)) as? IIOSource)
        let s = src.devices[0].sensors[.accelerometer]!
        #expect(s.mountMatrixSource == "hwdb ACCEL_MOUNT_MATRIX")
        #expect(s.mountMatrix == MountMatrix(parsing: "0, -1, 0; -1, 0, 0; 0, 0, 1"))
    }

    @Test func unparsableValuesSkipTheDeviceWithAReason() throws {
        let fs = try Fixtures.hpEnvyTwin()
        let dir = "/sys/bus/iio/devices/iio:device0"
        fs.setFile(dir + "/in_anglvel_scale", "0,000174532\n")   // a comma: not a sysfs number
        let reports = LinuxSensorDiscovery.discover(options: options(fs))
        let bad = try #require(reports.first { $0.identifier == "iio:iio:device0" })
        #expect(bad.status == .malformed)
        #expect(bad.problem?.message == "'0,000174532' is not a number")
        #expect(bad.problem?.path?.hasSuffix("in_anglvel_scale") == true)
        // The others still form a motion device, without the gyro.
        let good = try #require(reports.first { $0.status == .usable })
        #expect(good.source?.info.sensors[.gyro] == nil)
        #expect(good.source?.info.sensors[.accelerometer] != nil)
    }

    @Test func unreadableRawIsPermissionDeniedWithTheFix() throws {
        let fs = try Fixtures.hpEnvyTwin()
        fs.setReadError("/sys/bus/iio/devices/iio:device2/in_accel_x_raw", EACCES)
        let r = try #require(LinuxSensorDiscovery.discover(options: options(fs)).first { $0.identifier == "iio:iio:device2" })
        #expect(r.status == .permissionDenied)
        #expect(r.problem?.message.contains("udev rule") == true)
        #expect(r.problem?.path == "/sys/bus/iio/devices/iio:device2/in_accel_x_raw")
    }

    @Test func ratesListsAndRanges() {
        let list = IIOAvailableRates(parsing: "12.500000 25 50 100 200\n")!
        #expect(list.choose(atLeast: 30) == 50)
        #expect(list.choose(atLeast: 12.5) == 12.5)
        #expect(list.choose(atLeast: 1000) == 200)
        let range = IIOAvailableRates(parsing: "[1 2 400]")!
        #expect(range == .range(min: 1, step: 2, max: 400))
        #expect(range.choose(atLeast: 60) == 61)
        #expect(range.choose(atLeast: 0.5) == 1)
        #expect(range.choose(atLeast: 1000) == 400)
        #expect(range.description == "[1 2 400]")
        #expect(IIOAvailableRates(parsing: "[1 2]") == nil)
        #expect(IIOAvailableRates(parsing: "fast") == nil)
    }

    @Test func numbersParseTheSameUnderACommaLocale() {
        let old = String(cString: setlocale(LC_ALL, nil))
        defer { setlocale(LC_ALL, old) }
        _ = setlocale(LC_ALL, "de_DE.UTF-8") ?? setlocale(LC_ALL, "fr_FR.UTF-8")
        #expect(SysfsValue.double("0.098066500\n") == 0.0980665)
        #expect(SysfsValue.double("-0") == 0)
        #expect(SysfsValue.double("0,5") == nil)
        #expect(SysfsValue.double("") == nil)
        #expect(SysfsValue.integer("-919\n") == -919)
    }
}

@Suite struct IIOTwoInOneTests {
    /// A Trekstor Primebook C11B has a base (KIOX020A) and a display (KIOX010A) accelerometer; the
    /// hwdb gives each its matrix and location. The display one comes first: orientation is the screen's.
    @Test func displaySensorFirstWithItsOwnMatrix() throws {
        let fs = InMemoryLinuxFileSystem()
        fs.setFile("/sys/class/dmi/id/modalias", "dmi:bvnINSYDECorp.:bvrCFALKSW05_BIOS_V1.1.2:svnTREKSTOR:pnPrimebookC11B:pvrDefaultstring:\n")
        for (n, hid) in [(0, "KIOX020A"), (1, "KIOX010A")] {
            let parent = "/sys/devices/pci0000:00/808622C1:00/i2c-0/i2c-\(hid):00"
            fs.setLink("/sys/bus/iio/devices/iio:device\(n)", to: parent + "/iio:device\(n)")
            fs.setFile(parent + "/modalias", "acpi:\(hid):\(hid):\n")
            fs.setFile(parent + "/iio:device\(n)/name", "kxcjk1013\n")
            for a in ["x", "y", "z"] { fs.setFile(parent + "/iio:device\(n)/in_accel_\(a)_raw", "0\n") }
            fs.setFile(parent + "/iio:device\(n)/in_accel_scale", "0.019163\n")
        }
        let o = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: Fixtures.hwdb, fileSystem: fs)
        let reports = LinuxSensorDiscovery.discover(options: o)
        #expect(reports.map(\.identifier) == ["iio:iio:device1", "iio:iio:device0"])
        #expect(reports.map { $0.details.first { $0.0 == "location" }?.1 } == ["display", "base"])
        let display = try #require(reports[0].source as? IIOSource)
        #expect(display.devices[0].sensors[.accelerometer]?.mountMatrix == MountMatrix(parsing: "-1, 0, 0; 0, -1, 0; 0, 0, -1"))
        let base = try #require(reports[1].source as? IIOSource)
        #expect(base.devices[0].sensors[.accelerometer]?.mountMatrix == MountMatrix(parsing: "0, 1, 0; 1, 0, 0; 0, 0, 1"))
        #expect((LinuxSensorDiscovery.firstAvailable(options: o) as? IIOSource)?.devices[0].id == "iio:device1")
    }
}

@Suite struct SourceSharingTests {
    @Test func theSameDeviceGivesTheSameSourceWhileItLives() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cm-share-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let dev = root.appendingPathComponent("sys/bus/iio/devices/iio:device0")
        try FileManager.default.createDirectory(at: dev, withIntermediateDirectories: true)
        for (n, v) in [("name", "accel_3d"), ("in_accel_x_raw", "0"), ("in_accel_y_raw", "-9"), ("in_accel_z_raw", "0")] {
            try (v + "\n").write(to: dev.appendingPathComponent(n), atomically: true, encoding: .utf8)
        }
        let sys = root.appendingPathComponent("sys").path
        let a = try LinuxSensorDiscovery.source(forSpec: "iio", sysfsRoot: sys, devRoot: root.path)
        let b = try LinuxSensorDiscovery.source(forSpec: "iio:accel_3d", sysfsRoot: sys, devRoot: root.path)
        #expect(a === b)
    }
}

/// The sign rule of ``IIOUnits``: chip drivers report specific force and are negated, HID sensor hubs
/// report the gravity vector and are not; udev/hwdb matrices keep their x and y rows and take the z
/// row's sign from the frame's handedness.
@Suite struct IIOSignRuleTests {
    @Test func driverFamilies() {
        #expect(IIOAccelerationSign(name: "accel_3d", parentModalias: "platform:HID-SENSOR-200073", canonicalPath: "/sys/devices/x/HID-SENSOR-200073.3.auto/iio:device0") == .gravity)
        #expect(IIOAccelerationSign(name: "gyro_3d", parentModalias: nil, canonicalPath: "/sys/devices/iio:device1") == .gravity)
        for chip in ["mpu6050", "mpu6500", "bmi160", "lsm6dsl", "bmc150_accel", "kxcjk1013", "mma8452", "lis3dh", "cros-ec-accel"] {
            #expect(IIOAccelerationSign(name: chip, parentModalias: "i2c:\(chip)", canonicalPath: "/sys/devices/i2c-0/0-0068/iio:device0") == .specificForce, "\(chip)")
        }
    }

    @Test func kernelMatricesAreRotationsAndTheAccelerometerTakesTheDriversSign() throws {
        let pinephone = try #require(MountMatrix(parsing: "0, -1, 0; 1, 0, 0; 0, 0, 1"))
        #expect(IIOUnits.frame(kind: .accelerometer, matrix: pinephone, gravityTuned: false, sign: .specificForce) == pinephone.scaled(by: -1))
        #expect(IIOUnits.frame(kind: .gyro, matrix: pinephone, gravityTuned: false, sign: .specificForce) == pinephone)
        #expect(IIOUnits.frame(kind: .accelerometer, matrix: pinephone, gravityTuned: false, sign: .gravity) == pinephone)
        // A chip lying face up reads +1 g on z: Core Motion's −1 g.
        let faceUp = IIOUnits.frame(kind: .accelerometer, matrix: .identity, gravityTuned: false, sign: .specificForce).apply(Vector3(0, 0, 9.80665))
        #expect(faceUp == Vector3(0, 0, -9.80665))
    }

    @Test func hwdbMatricesKeepXAndYAndTakeZFromHandedness() throws {
        // 153 of the 202 chip entries of systemd 252's hwdb are reflections like this one (BOSC0200,
        // Lenovo Miix 320): consistent with a chip's specific force as it stands.
        let reflection = try #require(MountMatrix(parsing: "0, -1, 0; -1, 0, 0; 0, 0, 1"))
        #expect(IIOUnits.frame(kind: .accelerometer, matrix: reflection, gravityTuned: true, sign: .specificForce) == reflection)
        // …and the gyroscope of that chip turns by the rotation it implies (det +1).
        let gyro = IIOUnits.frame(kind: .gyro, matrix: reflection, gravityTuned: true, sign: .specificForce)
        #expect(gyro == reflection.scaled(by: -1) && gyro.determinant > 0)
        // A rotation on a chip: x and y flip as iio-sensor-proxy needs; z did not matter to it and
        // would read +1 g face up: it is negated.
        let rotation = try #require(MountMatrix(parsing: "-1, 0, 0; 0, -1, 0; 0, 0, 1"))
        #expect(IIOUnits.frame(kind: .accelerometer, matrix: rotation, gravityTuned: true, sign: .specificForce)
                == MountMatrix(parsing: "-1, 0, 0; 0, -1, 0; 0, 0, -1"))
        // On a HID hub the same rotation is right as it stands.
        #expect(IIOUnits.frame(kind: .accelerometer, matrix: rotation, gravityTuned: true, sign: .gravity) == rotation)
    }
}

/// Another process changes the range while the source polls: the new scale is followed.
@Suite struct IIORangeChangeTests {
    @Test func aScaleChangedByAnotherProcessIsFollowedWhilePolling() async throws {
        let fs = InMemoryLinuxFileSystem()
        let dir = "/sys/devices/platform/i2c-0/0-0068/iio:device0"
        fs.setLink("/sys/bus/iio/devices/iio:device0", to: dir)
        fs.setFile(dir + "/name", "mpu6050\n")
        for (axis, raw) in [("x", "0"), ("y", "0"), ("z", "16384")] { fs.setFile(dir + "/in_accel_\(axis)_raw", raw + "\n") }
        fs.setFile(dir + "/in_accel_scale", "0.000598\n")
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try #require(LinuxSensorDiscovery.firstAvailable(options: options))
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: got.sink)
        defer { _ = try? source.apply(.none, sink: got.sink) }
        try await waitUntil { got.samples.count >= 3 }
        #expect(abs((got.samples.last?.value.z ?? 0) - (-16384 * 0.000598 / 9.80665)) < 1e-9)
        // ±2 g → ±4 g: the chip now reads 8192 for the same 1 g, and the scale doubles.
        fs.setFile(dir + "/in_accel_scale", "0.001196\n")
        fs.setFile(dir + "/in_accel_z_raw", "8192\n")
        let expected = -8192 * 0.001196 / 9.80665
        try await waitUntil { abs((got.samples.last?.value.z ?? 0) - expected) < 1e-9 }
        #expect(got.failure == nil)
    }
}
