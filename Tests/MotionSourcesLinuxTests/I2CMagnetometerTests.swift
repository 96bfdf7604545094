import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import OpenCoreMotion
import Testing

/// The magnetometers read with an accelerometer-and-gyroscope chip: the AK8963 behind an MPU-9250's
/// I2C bypass and the LSM9DS1's magnetometer. Registers, values and sensitivities are the
/// datasheets' (AK8963 MS1526, MPU-9250 PS-MPU-9250A, LSM9DS1 DocID025715); the same code is checked
/// against the kernel's ak8975 and st_magn in the VM (Tests/LinuxKernelTests/I2CUserSpaceTests.swift).
@Suite struct I2CMagnetometerTests {
    /// Typical fuse-ROM sensitivity adjustments of real MPU-9250s, and their factors
    /// `(ASA − 128) · 0.5 / 128 + 1`.
    static let asa: [UInt8] = [0xB0, 0xB4, 0xA5]
    static let adjustment = [1.1875, 1.203125, 1.14453125]

    @Test func theAK8963IsIdentifiedAdjustedAndSetToSixteenBitContinuousMode() {
        var d = AK8963Driver(busPath: "/dev/i2c-1", rate: 50)
        #expect(d.start() == [.read(register: 0x00, count: 1)])
        #expect(d.received([0x48], at: 0) == [
            .write(register: 0x0A, value: 0x00), .pause(seconds: 0.0001), .write(register: 0x0A, value: 0x0F),
            .pause(seconds: 0.0001), .read(register: 0x10, count: 3),
        ])
        #expect(d.received(Self.asa, at: 0) == [
            .write(register: 0x0A, value: 0x00), .pause(seconds: 0.0001), .write(register: 0x0A, value: 0x16),
            .pause(seconds: 0.0001), .read(register: 0x0A, count: 1),
        ])
        #expect(d.adjustment == Vector3(1.1875, 1.203125, 1.14453125))
        #expect(!d.isStreaming)
        #expect(d.received([0x16], at: 0) == [.streaming])
        #expect(d.isStreaming && d.actualRate == 100 && d.dataRead == (0x02, 8))
        #expect(AK8963Driver(busPath: "/dev/i2c-1", rate: 8).control == 0x12, "8 Hz: continuous mode 1")
        #expect(AK8963Driver(busPath: "/dev/i2c-1", rate: .nan).control == 0x16)
    }

    /// HX 1000, HY −2000, HZ 300 counts: in the MPU's axes x = AK y, y = AK x, z = −AK z, each
    /// adjusted and 0.15 µT per count.
    @Test func theAK8963ReadsInTheMPUsAxes() throws {
        var d = AK8963Driver(busPath: "/dev/i2c-1", rate: 100)
        _ = d.start(); _ = d.received([0x48], at: 0); _ = d.received(Self.asa, at: 0); _ = d.received([0x16], at: 0)
        let bytes: [UInt8] = [0x01] + LSM6DSDriverTests.le([1000, -2000, 300]) + [0x10]
        guard case .deliver(let s)? = d.received(bytes, at: 5).first else { Issue.record("no sample"); return }
        let m = try #require(s.first)
        #expect(s.count == 1 && m.sensor == .magnetometer && m.timestamp == 5)
        #expect(abs(m.value.x - -2000 * 0.15 * Self.adjustment[1]) < 1e-9)
        #expect(abs(m.value.y - 1000 * 0.15 * Self.adjustment[0]) < 1e-9)
        #expect(abs(m.value.z - -300 * 0.15 * Self.adjustment[2]) < 1e-9)
        // No DRDY: nothing new. HOFL: the datasheet calls the reading invalid.
        #expect(d.received([0x00] + LSM6DSDriverTests.le([1, 2, 3]) + [0x10], at: 6) == [.deliver([])])
        #expect(d.received([0x01] + LSM6DSDriverTests.le([1, 2, 3]) + [0x18], at: 6) == [.deliver([])])
        guard case .fail(let short)? = d.received([1, 2], at: 7).first else { Issue.record("no failure"); return }
        #expect(short.kind == .malformedInput)
    }

    @Test func anotherChipAtTheAK8963sAddressIsRefused() {
        var d = AK8963Driver(busPath: "/dev/i2c-1", rate: 100)
        _ = d.start()
        #expect(d.received([0x12], at: 0) == [.fail(SourceError(.unavailable, "0x0c on /dev/i2c-1 answers WIA (0x00) 0x12: not an AK8963 (0x48)", path: "/dev/i2c-1"))])
        var e = AK8963Driver(busPath: "/dev/i2c-1", rate: 100)
        _ = e.start(); _ = e.received([0x48], at: 0); _ = e.received(Self.asa, at: 0)
        guard case .fail(let kept)? = e.received([0x00], at: 0).first else { Issue.record("no failure"); return }
        #expect(kept.message.contains("did not keep its mode"))
    }

    /// A mount matrix turns the magnetometer with its chip: the AK8963's axes into the MPU's first.
    @Test func theMountMatrixAppliesAfterTheAxisChange() {
        let quarterTurn = MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1))
        let frame = MountMatrix.product(quarterTurn, I2CMagnetometer.ak8963.toHostChip)
        // AK x → MPU y → device −x.
        #expect(frame.apply(Vector3(1, 0, 0)) == Vector3(-1, 0, 0))
        #expect(frame.apply(Vector3(0, 1, 0)) == Vector3(0, 1, 0))
        #expect(frame.apply(Vector3(0, 0, 1)) == Vector3(0, 0, -1))
        #expect(I2CMagnetometer.lsm9ds1.toHostChip.apply(Vector3(1, 2, 3)) == Vector3(-1, 2, 3))
        #expect(I2CMagnetometer.ak8963.toHostChip.determinant == 1, "a half turn about the MPU's x = y diagonal")
        #expect(I2CMagnetometer.lsm9ds1.toHostChip.determinant == -1, "the LSM9DS1's magnetometer axes are a mirror image of the accelerometer's")
    }

    @Test func theLSM9DS1MagnetometerIsConfiguredAndReadByteByByte() {
        var d = LSM9DS1MagnetometerDriver(address: 0x1C, busPath: "/dev/i2c-1", rate: 15)
        #expect(d.actualRate == 20)
        #expect(d.start() == [.read(register: 0x0F, count: 1)])
        #expect(d.received([0x3D], at: 0) == [
            .write(register: 0x20, value: 0x54),   // CTRL_REG1_M: high performance X/Y, 20 Hz (101)
            .write(register: 0x21, value: 0x00),   // CTRL_REG2_M: ±4 gauss
            .write(register: 0x22, value: 0x00),   // CTRL_REG3_M: continuous
            .write(register: 0x23, value: 0x08),   // CTRL_REG4_M: high performance Z
            .write(register: 0x24, value: 0x40),   // CTRL_REG5_M: block data update
            .read(register: 0x20, count: 1), .read(register: 0x21, count: 1), .read(register: 0x22, count: 1),
            .read(register: 0x23, count: 1), .read(register: 0x24, count: 1),
        ])
        for v: UInt8 in [0x54, 0x00, 0x00, 0x08] { #expect(d.received([v], at: 0) == []) }
        #expect(d.received([0x40], at: 0) == [.streaming])
        #expect(d.received([0x00], at: 1) == [], "STATUS_REG_M without ZYXDA: nothing to read")
        #expect(d.received([0x08], at: 1) == (0x28...0x2D).map { .read(register: UInt8($0), count: 1) })
        let bytes = LSM6DSDriverTests.le([-1200, 2100, -3300])
        for b in bytes.dropLast() { #expect(d.received([b], at: 1) == []) }
        guard case .deliver(let s)? = d.received([bytes[5]], at: 2).first, let m = s.first else { Issue.record("no sample"); return }
        #expect(m.sensor == .magnetometer && m.timestamp == 2)
        #expect(abs(m.value.x - 1200 * 0.014) < 1e-9 && abs(m.value.y - 2100 * 0.014) < 1e-9 && abs(m.value.z - -3300 * 0.014) < 1e-9)
        var wrong = LSM9DS1MagnetometerDriver(address: 0x1E, busPath: "/dev/i2c-1", rate: 10)
        _ = wrong.start()
        guard case .fail(let e)? = wrong.received([0x40], at: 0).first else { Issue.record("no failure"); return }
        #expect(e.kind == .unavailable)
    }

    /// An MPU-9250 with its AK8963 on the twin bus.
    static func mpu9250(ak8963: Bool = true) -> (LinuxDiscoveryOptions, InMemoryI2CBus) {
        let (options, _, bus) = I2CSourceTests.twin(0x71)
        if ak8963 {
            bus.addChip(at: 0x0C, registers: [0x00: 0x48, 0x02: 0x01, 0x09: 0x10, 0x10: asa[0], 0x11: asa[1], 0x12: asa[2]])
            for (i, b) in LSM6DSDriverTests.le([1000, -2000, 300]).enumerated() { bus.set(0x0C, 0x03 + UInt8(i), b) }
        }
        return (options, bus)
    }

    @Test func theScanOpensTheBypassAndFindsTheAK8963() throws {
        let (options, bus) = Self.mpu9250()
        #expect(I2CDiscovery.scan(options).first?.lines.dropFirst() == [
            "  0x68 answers WHO_AM_I 0x71: an MPU-9250; AK8963 at 0x0c after bypass (--source i2c:/dev/i2c-1:0x68)",
        ])
        // BYPASS_EN is written before 0x0C is read (a real chip does not answer there before).
        let log = bus.log
        let bypass = try #require(log.firstIndex(of: .write(address: 0x68, register: 0x37, value: 0x02)))
        let wia = try #require(log.firstIndex(of: .read(address: 0x0C, register: 0x00, count: 1)))
        #expect(bypass < wia)
        let source = try I2CDiscovery.source(forSpec: "i2c", options: options)
        #expect(source.info.sensors[.magnetometer]?.resolution == 0.15)
        #expect(source.info.details.contains { $0.0 == "magnetometer" && $0.1.hasPrefix("AK8963 at 0x0c behind the I2C bypass") })
    }

    @Test func anMPU9250WithoutItsMagnetometerSaysSo() {
        let (options, _) = Self.mpu9250(ak8963: false)
        #expect(I2CDiscovery.scan(options).first?.lines.dropFirst() == [
            "  0x68 answers WHO_AM_I 0x71: an MPU-9250; nothing answers at 0x0c after the I2C bypass: no AK8963 magnetometer (an MPU-6500 sold as an MPU-9250?), accelerometer and gyroscope only (--source i2c:/dev/i2c-1:0x68)",
        ])
        let (other, bus) = Self.mpu9250()
        bus.set(0x0C, 0x00, 0x12)
        #expect(I2CDiscovery.scan(other).first?.lines.dropFirst() == [
            "  0x68 answers WHO_AM_I 0x71: an MPU-9250; 0x0c answers WIA 0x12 after the I2C bypass, not an AK8963's 0x48: accelerometer and gyroscope only (--source i2c:/dev/i2c-1:0x68)",
        ])
    }

    /// The source reads the MPU and the AK8963 each at its own rate; the magnetometer in µT, in the
    /// MPU's axes; the MPU's set-up opens the bypass first.
    @Test func theMPU9250StreamsItsMagnetometer() async throws {
        let (options, bus) = Self.mpu9250()
        bus.set16(0x68, 0x3F, 16384)
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x68", options: options)
        let got = Collected()
        // The MPU at 100 Hz, one read per sample (above, it would read its FIFO, which register memory does not fill).
        let rates = try source.apply(SensorDemand(rates: [.accelerometer: 100, .magnetometer: 25]), sink: got.sink)
        #expect(rates == [.accelerometer: 100, .magnetometer: 25])
        #expect(bus.get(0x68, 0x37) == 0x02 && (bus.get(0x68, 0x6A) ?? 0xFF) & 0x20 == 0x00, "bypass on, the MPU's I2C master off")
        #expect(bus.get(0x0C, 0x0A) == 0x16, "16-bit continuous mode 2")
        try await eventually { got.samples.filter { $0.sensor == .magnetometer }.count >= 3 && got.samples.filter { $0.sensor == .accelerometer }.count >= 3 }
        _ = try source.apply(.none, sink: got.sink)
        for s in got.samples {
            switch s.sensor {
            case .accelerometer: #expect(s.value == Vector3(0, 0, -1))
            case .magnetometer:
                #expect(abs(s.value.x - -2000 * 0.15 * Self.adjustment[1]) < 1e-9 && abs(s.value.y - 150 * Self.adjustment[0]) < 1e-9
                        && abs(s.value.z - -45 * Self.adjustment[2]) < 1e-9)
            case .gyro: Issue.record("no gyroscope demanded")
            case .pressure: Issue.record("no barometer")
            }
        }
        let mpuReads = bus.log.filter { $0 == .read(address: 0x68, register: 0x3B, count: 14) }.count
        let akReads = bus.log.filter { $0 == .read(address: 0x0C, register: 0x02, count: 8) }.count
        #expect(akReads < mpuReads, "the AK8963 at 25 Hz, the MPU at 100 Hz: \(akReads) and \(mpuReads) reads")
        #expect(bus.openHandles == 0)
        // The magnetometer alone: the MPU is still set up (bypass), its samples not delivered.
        let only = Collected()
        #expect(try source.apply(SensorDemand(rates: [.magnetometer: 8]), sink: only.sink) == [.magnetometer: 8])
        #expect(bus.get(0x0C, 0x0A) == 0x12)
        try await eventually { only.samples.count >= 2 }
        _ = try source.apply(.none, sink: only.sink)
        #expect(only.samples.allSatisfy { $0.sensor == .magnetometer })
    }

    /// The Sense HAT: the accelerometer and gyroscope at 0x6A take the magnetometer at 0x1C; the
    /// magnetometer's x is turned into the accelerometer's.
    @Test func theSenseHATReadsItsMagnetometerWithTheOtherSensors() async throws {
        let (options, bus) = LSM6DSSourceTests.twin()
        bus.set(0x1C, 0x27, 0x08)
        LSM6DSSourceTests.setLE(bus, 0x1C, 0x28, [-1200, 2100, -3300])
        let lines = I2CDiscovery.scan(options).first?.lines ?? []
        #expect(lines.contains("  0x6a answers WHO_AM_I (0x0f) 0x68: the accelerometer and gyroscope of an LSM9DS1 (Sense HAT); its magnetometer at 0x1c is read with them (--source i2c:/dev/i2c-1:0x6a)"), "\(lines)")
        #expect(lines.contains("  0x1c answers WHO_AM_I (0x0f) 0x3d: the magnetometer of an LSM9DS1 (or an LIS3MDL), in its own axes (--source i2c:/dev/i2c-1:0x1c)"), "\(lines)")
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x6a", options: options)
        let got = Collected()
        #expect(try source.apply(SensorDemand(rates: [.magnetometer: 40]), sink: got.sink) == [.magnetometer: 40])
        try await eventually { got.samples.count >= 2 }
        _ = try source.apply(.none, sink: got.sink)
        for s in got.samples {
            #expect(s.sensor == .magnetometer && abs(s.value.x - 1200 * 0.014) < 1e-9 && abs(s.value.y - 2100 * 0.014) < 1e-9)
        }
        #expect(bus.get(0x1C, 0x20) == 0x58 && bus.get(0x1C, 0x24) == 0x40, "40 Hz, block data update")
        #expect(bus.log.contains(.read(address: 0x1C, register: 0x2D, count: 1)))
        #expect(!bus.log.contains { if case .read(0x6A, 0x18, _) = $0 { true } else { false } }, "accelerometer and gyroscope not read")
        // The magnetometer alone, in its own axes.
        let alone = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x1c", options: options)
        #expect(alone.chip == .lsm9ds1Magnetometer && Set(alone.info.sensors.keys) == [.magnetometer])
        let own = Collected()
        _ = try alone.apply(SensorDemand(rates: [.magnetometer: 10]), sink: own.sink)
        try await eventually { own.samples.count >= 1 }
        _ = try alone.apply(.none, sink: own.sink)
        #expect(own.samples.allSatisfy { abs($0.value.x - -1200 * 0.014) < 1e-9 })
        // `i2c` alone prefers a chip with an accelerometer to the magnetometer scanned first.
        #expect(try I2CDiscovery.source(forSpec: "i2c", options: options).chip == .mpu6050)
    }

    /// Through CMMotionManager: `magnetometerData.magneticField` in µT, the MPU's axes.
    @Test func theAK8963ReachesCMMagnetometerData() async throws {
        let (options, _) = Self.mpu9250()
        let source = try I2CDiscovery.source(forSpec: "i2c", options: options)
        nonisolated(unsafe) let manager = CMMotionManager(source: source)
        manager.magnetometerUpdateInterval = 0.02
        manager.startMagnetometerUpdates()
        defer { manager.stopMagnetometerUpdates() }
        try await eventually { manager.magnetometerData != nil }
        let field = try #require(manager.magnetometerData).magneticField
        #expect(abs(field.x - -300 * Self.adjustment[1]) < 1e-6 && abs(field.y - 150 * Self.adjustment[0]) < 1e-6
                && abs(field.z - -45 * Self.adjustment[2]) < 1e-6, "\(field)")
    }
}
