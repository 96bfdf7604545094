import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import Testing

/// The ST accelerometer-and-gyroscope driver (`LSM6DSDriver`: LSM6DSx family, LSM9DS1) and how the
/// scan tells the chips apart. Register addresses, values and sensitivities are the datasheets'
/// (LSM6DS3 DocID026899, LSM6DSL DocID030637, LSM9DS1 DocID025715); the same code is checked
/// against the kernel's st_lsm6dsx in the VM (Tests/LinuxKernelTests/I2CUserSpaceTests.swift).
@Suite struct LSM6DSDriverTests {
    /// Little-endian bytes of signed 16-bit words, as the chips' output registers hold them.
    static func le(_ w: [Int16]) -> [UInt8] { w.flatMap { [UInt8(UInt16(bitPattern: $0) & 0xff), UInt8(UInt16(bitPattern: $0) >> 8)] } }

    /// Register *and* value identify a chip at its addresses: 0x68 in the MPU's WHO_AM_I (0x75) is an
    /// MPU-6050, in the ST WHO_AM_I (0x0F) at 0x6A/0x6B an LSM9DS1.
    @Test func chipsAreIdentifiedByRegisterValueAndAddress() {
        #expect(I2CChip(register: 0x75, value: 0x68, address: 0x68) == .mpu6050)
        #expect(I2CChip(register: 0x0F, value: 0x68, address: 0x6A) == .lsm9ds1)
        #expect(I2CChip(register: 0x0F, value: 0x68, address: 0x68) == nil)
        #expect(I2CChip(register: 0x75, value: 0x68, address: 0x6B) == nil)
        #expect(I2CChip(register: 0x0F, value: 0x69, address: 0x6B) == .lsm6ds3)
        #expect(I2CChip(register: 0x0F, value: 0x6A, address: 0x6A) == .lsm6dsl)
        #expect(I2CChip(register: 0x0F, value: 0x6C, address: 0x6A) == .lsm6dso)
        #expect(I2CChip(register: 0x00, value: 0xD1, address: 0x69) == .bmi160)
        #expect(I2CChip(register: 0x0F, value: 0x3D, address: 0x1C) == .lsm9ds1Magnetometer)
        #expect(I2CChip(register: 0x0F, value: 0x3D, address: 0x6A) == nil)
        // At an address outside the table, any chip with that register and value.
        #expect(I2CChip(register: 0x0F, value: 0x69, address: 0x50) == .lsm6ds3)
        #expect(I2CChip.idRegisters(at: 0x68) == [0x75, 0x00])
        #expect(I2CChip.idRegisters(at: 0x6B) == [0x0F])
        #expect(I2CChip.idRegisters(at: 0x1E) == [0x0F])
        #expect(I2CChip.idRegisters(at: 0x50) == [0x75, 0x0F, 0x00])
    }

    @Test func ratesAreTheSlowestOutputDataRateAtOrAboveTheDemand() {
        let cases: [(LSM6DSMap, Double, Double)] = [
            (.lsm6dsx, 100, 104), (.lsm6dsx, 104, 104), (.lsm6dsx, 1, 12.5), (.lsm6dsx, 5000, 1666), (.lsm6dsx, 1000, 1666), (.lsm6dsx, .nan, 104),
            (.lsm9ds1, 100, 119), (.lsm9ds1, 20, 59.5), (.lsm9ds1, 5000, 952), (.lsm9ds1, -1, 119),
        ]
        for (map, want, got) in cases {
            #expect(LSM6DSConfiguration(map: map, rate: want).actualRate == got, "\(map.kind) \(want) Hz")
        }
        // 1666 Hz only through the FIFO: polled, one read a sample, the LSM6DSx stops at 833 Hz.
        #expect(LSM6DSConfiguration(map: .lsm6dsx, rate: 1000, fifo: false).actualRate == 833)
        // Ranges the chip lacks fall back to the defaults: the LSM9DS1 has no ±1000 °/s.
        #expect(LSM6DSConfiguration(map: .lsm9ds1, gyroRange: 1000).gyroRange == 245)
        #expect(LSM6DSConfiguration(map: .lsm6dsx).gyroRange == 250, "the reset range, as st_lsm6dsx assumes")
        #expect(LSM6DSConfiguration(map: .lsm6dsx, gyroRange: 1000).gyroRange == 1000)
        #expect(LSM6DSConfiguration(map: .lsm6dsx, accelerometerRange: 3).accelerometerRange == 2)
    }

    @Test func anLSM6DS3IsIdentifiedConfiguredAndVerified() {
        var d = LSM6DSDriver(map: .lsm6dsx, address: 0x6A, busPath: "/dev/i2c-1",
                             configuration: LSM6DSConfiguration(map: .lsm6dsx, accelerometerRange: 4, gyroRange: 500, rate: 100))
        #expect(d.start() == [.read(register: 0x0F, count: 1)])
        #expect(d.received([0x69], at: 0) == [
            .write(register: 0x12, value: 0x44),   // CTRL3_C: BDU, IF_INC
            .write(register: 0x10, value: 0x48),   // CTRL1_XL: 104 Hz (0100), ±4 g (10)
            .write(register: 0x11, value: 0x44),   // CTRL2_G: 104 Hz, ±500 °/s (01)
            .read(register: 0x12, count: 1), .read(register: 0x10, count: 1), .read(register: 0x11, count: 1),
        ])
        #expect(d.chip == .lsm6ds3)
        #expect(d.received([0x44], at: 0) == [] && d.received([0x4B], at: 0) == [], "bits 1:0 of CTRL1_XL are not ours")
        #expect(d.received([0x44], at: 0) == [.streaming])
        #expect(d.isStreaming && d.dataRead == (0x22, 12) && d.actualRate == 104)
    }

    @Test func anLSM9DS1IsConfiguredAtTheGyroscopesRate() {
        var d = LSM6DSDriver(map: .lsm9ds1, address: 0x6B, busPath: "/dev/i2c-1", configuration: LSM6DSConfiguration(map: .lsm9ds1, rate: 100))
        _ = d.start()
        #expect(d.received([0x68], at: 0) == [
            .write(register: 0x22, value: 0x44),   // CTRL_REG8: BDU, IF_ADD_INC
            .write(register: 0x20, value: 0x60),   // CTRL_REG6_XL: ODR 011, ±2 g (00)
            .write(register: 0x10, value: 0x60),   // CTRL_REG1_G: 119 Hz (011), ±245 °/s (00)
            .read(register: 0x22, count: 1), .read(register: 0x20, count: 1), .read(register: 0x10, count: 1),
        ])
        #expect(d.chip == .lsm9ds1 && d.dataRead == (0x18, 22) && d.actualRate == 119)
    }

    @Test func anotherChipOrAConfigurationNotKeptFails() {
        var d = LSM6DSDriver(map: .lsm6dsx, address: 0x6A, busPath: "/dev/i2c-1")
        _ = d.start()
        #expect(d.received([0x68], at: 0) == [.fail(SourceError(.unavailable, "0x6a on /dev/i2c-1 answers WHO_AM_I (0x0f) 0x68: not an LSM6DSx (0x69, 0x6a, 0x6b, 0x6c or 0x6d)", path: "/dev/i2c-1"))])
        #expect(d.received([0x69], at: 0) == [], "nothing after a failure")
        var e = LSM6DSDriver(map: .lsm6dsx, address: 0x6A, busPath: "/dev/i2c-1")
        _ = e.start()
        _ = e.received([0x6A], at: 0)
        #expect(e.received([0x00], at: 0) == [.fail(SourceError(.io, "the LSM6DSL at 0x6a on /dev/i2c-1 did not keep its configuration (wrote 0x44 to 0x12, read back 0x00)", path: "/dev/i2c-1"))])
        var f = LSM6DSDriver(map: .lsm9ds1, address: 0x6B, busPath: "/dev/i2c-1")
        _ = f.start()
        #expect(f.received([0x69], at: 0).first.map { if case .fail = $0 { true } else { false } } == true)
        // A short sample read is malformed input, not a crash.
        var g = LSM6DSDriver(map: .lsm6dsx, address: 0x6A, busPath: "/dev/i2c-1", configuration: LSM6DSConfiguration(map: .lsm6dsx))
        _ = g.start()
        for w in g.received([0x69], at: 0) { if case .read(let r, _) = w { _ = g.received([g.configuration.writes.first { $0.register == r }!.value], at: 0) } }
        #expect(g.isStreaming)
        guard case .fail(let short)? = g.received([1, 2, 3], at: 0).first else { Issue.record("no failure"); return }
        #expect(short.kind == .malformedInput)
        #expect(g.transferFailed(LinuxIOError(code: EREMOTEIO, path: "/dev/i2c-1", operation: "read")) == [
            .fail(SourceError(.deviceRemoved, "the LSM6DS3 at 0x6a on /dev/i2c-1 stopped answering (Remote I/O error)", path: "/dev/i2c-1"))])
    }

    /// Face up the chip's Z reads +1 g of specific force (16393 counts at 0.061 mg); Core Motion's is
    /// −1 g. A gyroscope Z of +1000 counts at 8.75 m°/s per count (±250 °/s) is +8.75 °/s counter-clockwise seen
    /// from above: positive. Words are little-endian, the gyroscope's first.
    @Test func decodesLittleEndianCountsIntoCoreMotionUnitsAndSigns() {
        let d = LSM6DSDriver(map: .lsm6dsx, address: 0x6A, busPath: "/dev/i2c-1")
        let s = d.decode(Self.le([0, 0, 1000, -300, 5000, 16393]), at: 3)
        #expect(s.map(\.sensor) == [.accelerometer, .gyro] && s.allSatisfy { $0.timestamp == 3 })
        #expect(abs(s[0].value.x - 300 * 0.000061) < 1e-12 && abs(s[0].value.y + 5000 * 0.000061) < 1e-12)
        #expect(abs(s[0].value.z + 16393 * 0.000061) < 1e-12 && abs(s[0].value.z + 1) < 1e-4)
        #expect(s[1].value.x == 0 && s[1].value.y == 0 && abs(s[1].value.z - 8.75 * .pi / 180) < 1e-12)
        #expect(s[1].value.x.sign == .plus, "zero stays +0")
        // The LSM9DS1: gyroscope at 0x18, accelerometer at 0x28 of one 22-byte read.
        let n = LSM6DSDriver(map: .lsm9ds1, address: 0x6B, busPath: "/dev/i2c-1")
        var b = Self.le([-1000, 0, 0]) + [UInt8](repeating: 0xAA, count: 10) + Self.le([0, 16393, 0])
        #expect(b.count == 22)
        let t = n.decode(b, at: 0)
        #expect(abs(t[0].value.y + 16393 * 0.000061) < 1e-12 && t[0].value.x == 0 && t[0].value.z == 0)
        #expect(abs(t[1].value.x + 8.75 * .pi / 180) < 1e-12)
        b[17] = 0x80  // the most negative count: no trap
        #expect(abs(n.decode(b, at: 0)[0].value.x - 32768 * 0.000061) < 1e-12)
    }

    @Test func aMountMatrixRotatesBothSensors() {
        let m = MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1))  // chip x → device y
        let d = LSM6DSDriver(map: .lsm6dsx, address: 0x6A, busPath: "/dev/i2c-1", mountMatrix: m)
        let s = d.decode(Self.le([1000, 0, 0, 10000, 0, 0]), at: 0)
        #expect(abs(s[0].value.y + 0.61) < 1e-12 && s[0].value.x == 0)  // gyroscope first: (1000, 0, 0) is the gyroscope
        #expect(abs(s[1].value.y - 8.75 * .pi / 180) < 1e-12 && s[1].value.x == 0)
    }
}

/// The ST chips through the source and the scan, on the register-map twin.
@Suite struct LSM6DSSourceTests {
    /// A Sense HAT's chips (LSM9DS1 accelerometer/gyroscope at 0x6A, magnetometer at 0x1C), an
    /// MPU-6050 at 0x68 (its WHO_AM_I holds the LSM9DS1's value) and an LSM6DS3 at 0x6B.
    static func twin() -> (LinuxDiscoveryOptions, InMemoryI2CBus) {
        let fs = InMemoryLinuxFileSystem()
        fs.setFile("/dev/i2c-1", "")
        fs.setFile("/sys/bus/i2c/devices/i2c-1/name", "bcm2835 (i2c@7e804000)\n")
        let opener = InMemoryI2CBusOpener()
        let bus = opener.bus("/dev/i2c-1")
        bus.addChip(at: 0x68, registers: [0x75: 0x68])
        bus.addChip(at: 0x6A, registers: [0x0F: 0x68])
        bus.addChip(at: 0x6B, registers: [0x0F: 0x69])
        bus.addChip(at: 0x1C, registers: [0x0F: 0x3D])
        var options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        options.i2cOpener = opener
        return (options, bus)
    }

    static func setLE(_ bus: InMemoryI2CBus, _ address: UInt8, _ register: UInt8, _ words: [Int16]) {
        for (i, b) in LSM6DSDriverTests.le(words).enumerated() { bus.set(address, register + UInt8(i), b) }
    }

    @Test func theScanTellsTheChipsApartAndSaysWhatItDoesNotRead() {
        let (options, bus) = Self.twin()
        bus.addChip(at: 0x69, registers: [0x00: 0xD1])
        #expect(I2CDiscovery.scan(options).first?.lines.dropFirst() == [
            "  0x1c answers WHO_AM_I (0x0f) 0x3d: the magnetometer of an LSM9DS1 (or an LIS3MDL), in its own axes (--source i2c:/dev/i2c-1:0x1c)",
            "  0x68 answers WHO_AM_I 0x68: an MPU-6050 (or MPU-6000, MPU-9150), no magnetometer read (--source i2c:/dev/i2c-1:0x68)",
            "  0x69 answers CHIP_ID (0x00) 0xd1: a BMI160: accelerometer and gyroscope (--source i2c:/dev/i2c-1:0x69)",
            "  0x6a answers WHO_AM_I (0x0f) 0x68: the accelerometer and gyroscope of an LSM9DS1 (Sense HAT); its magnetometer at 0x1c is read with them (--source i2c:/dev/i2c-1:0x6a)",
            "  0x6b answers WHO_AM_I (0x0f) 0x69: an LSM6DS3 (or LSM6DS3H): accelerometer and gyroscope (--source i2c:/dev/i2c-1:0x6b)",
        ])
        // One byte per identity register, nothing written.
        #expect(!bus.log.contains { if case .write = $0 { true } else { false } })
        #expect(bus.log.filter { if case .read(0x69, _, _) = $0 { true } else { false } } == [.read(address: 0x69, register: 0x75, count: 1), .read(address: 0x69, register: 0x00, count: 1)])
    }

    @Test func unknownValuesSayWhatTheAddressShouldHold() {
        let (options, bus) = Self.twin()
        bus.set(0x6B, 0x0F, 0x12)
        bus.set(0x6A, 0x75, 0x68)  // an MPU's WHO_AM_I value in the wrong register map means nothing at 0x6A
        bus.set(0x6A, 0x0F, 0x00)
        bus.set(0x68, 0x75, 0x00)
        bus.set(0x68, 0x0F, 0x68)  // nor an LSM9DS1's at 0x68
        let lines = I2CDiscovery.scan(options).first?.lines ?? []
        #expect(lines.contains("  0x6b answers WHO_AM_I (0x0f) 0x12: not an LSM6DSx (they answer 0x69, 0x6a, 0x6b, 0x6c or 0x6d) nor an LSM9DS1 accelerometer and gyroscope (it answers 0x68)"), "\(lines)")
        #expect(lines.contains("  0x6a answers WHO_AM_I (0x0f) 0x00: not an LSM6DSx (they answer 0x69, 0x6a, 0x6b, 0x6c or 0x6d) nor an LSM9DS1 accelerometer and gyroscope (it answers 0x68)"), "\(lines)")
        #expect(lines.contains("  0x68 answers WHO_AM_I 0x00: not an MPU-6050/6500/9250 (they answer 0x68, 0x70, 0x71 or 0x73), an ICM-20948 (its WHO_AM_I, 0x00 at bank 0, is 0xea) nor a BMI160 (its CHIP_ID, 0x00, is 0xd1)"), "\(lines)")
    }

    @Test func anLSM6DS3StreamsCoreMotionValues() async throws {
        let (options, bus) = Self.twin()
        Self.setLE(bus, 0x6B, 0x22, [0, 0, 1000, 0, 0, 16393])   // spinning counter-clockwise, face up
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x6b", options: options)
        #expect(source.chip == .lsm6ds3)
        #expect(source.info.name == "STMicroelectronics LSM6DS3 at 0x6b on /dev/i2c-1")
        #expect(source.info.details.first { $0.0 == "chip" }?.1 == "LSM6DS3 (WHO_AM_I (0x0f) 0x69)")
        #expect(source.info.sensors[.gyro]?.maximumRate == 1666, "1666 Hz through the FIFO")
        let got = Collected()
        let rates = try source.apply(SensorDemand(rates: [.accelerometer: 50, .gyro: 100]), sink: got.sink)
        #expect(rates == [.accelerometer: 104, .gyro: 104])
        #expect(bus.get(0x6B, 0x10) == 0x40 && bus.get(0x6B, 0x11) == 0x40 && bus.get(0x6B, 0x12) == 0x44)
        try await eventually { got.samples.count >= 6 }
        _ = try source.apply(.none, sink: got.sink)
        for s in got.samples {
            switch s.sensor {
            case .accelerometer: #expect(s.value.x == 0 && s.value.y == 0 && abs(s.value.z + 16393 * 0.000061) < 1e-12)
            case .gyro: #expect(s.value.x == 0 && s.value.y == 0 && abs(s.value.z - 8.75 * .pi / 180) < 1e-12)
            case .magnetometer: Issue.record("no magnetometer")
            case .pressure: Issue.record("no barometer")
            }
        }
        #expect(bus.log.contains(.read(address: 0x6B, register: 0x22, count: 12)))
    }

    @Test func theSenseHATsAccelerometerAndGyroscopeStream() async throws {
        let (options, bus) = Self.twin()
        Self.setLE(bus, 0x6A, 0x18, [-1000, 0, 0])
        Self.setLE(bus, 0x6A, 0x28, [0, 16393, 0])   // upright
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x6a", options: options)
        #expect(source.chip == .lsm9ds1)
        let got = Collected()
        #expect(try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: got.sink) == [.accelerometer: 119])
        try await eventually { got.samples.count >= 3 }
        _ = try source.apply(.none, sink: got.sink)
        #expect(got.samples.allSatisfy { $0.sensor == .accelerometer && $0.value.x == 0 && abs($0.value.y + 16393 * 0.000061) < 1e-12 })
        #expect(bus.get(0x6A, 0x10) == 0x60 && bus.get(0x6A, 0x20) == 0x60 && bus.get(0x6A, 0x22) == 0x44)
        // `i2c` alone takes the first chip with an accelerometer (the MPU-6050 at 0x68: the
        // magnetometer at 0x1C, scanned first, reads nothing else); 0x1c names the magnetometer.
        #expect(try I2CDiscovery.source(forSpec: "i2c", options: options).chip == .mpu6050)
        #expect(try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x1c", options: options).chip == .lsm9ds1Magnetometer)
    }
}
