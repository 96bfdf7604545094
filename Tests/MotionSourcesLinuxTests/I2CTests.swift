import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import Testing

/// The user-space MPU driver (`MPUDriver`), its source (`I2CSource`) and the I2C scan
/// (`I2CDiscovery`) against the register-map twin (`InMemoryI2CBus`). Register values and
/// sensitivities are the MPU-6000/6050 and MPU-6500/9250 register maps' (RM-MPU-6000A, RM-MPU-6500A,
/// RM-MPU-9250A); the same code is checked against the kernel's inv_mpu6050 in the VM
/// (Tests/LinuxKernelTests/I2CUserSpaceTests.swift).
@Suite struct MPUDriverTests {
    @Test func whoAmIValuesNameTheChips() {
        #expect(MPUChip(whoAmI: 0x68) == .mpu6050)
        #expect(MPUChip(whoAmI: 0x70) == .mpu6500)
        #expect(MPUChip(whoAmI: 0x71) == .mpu9250)
        #expect(MPUChip(whoAmI: 0x73) == .mpu9255)
        #expect(MPUChip(whoAmI: 0x12) == nil)
        #expect(MPUChip(whoAmI: 0x00) == nil)
        #expect(MPUChip(whoAmI: 0xff) == nil)
    }

    @Test func sampleRatesAreThoseOfTheDividerAtOrAboveTheDemand() {
        // rate = 1000 / (1 + SMPLRT_DIV) with the low-pass filter on (1 kHz internal rate).
        let cases: [(Double, UInt8, Double)] = [(100, 9, 100), (50, 19, 50), (300, 2, 1000.0 / 3), (1000, 0, 1000),
                                                (5000, 0, 1000), (1, 255, 1000.0 / 256), (.nan, 9, 100), (-4, 9, 100)]
        for (want, div, rate) in cases {
            let c = MPUConfiguration(rate: want)
            #expect(c.sampleRateDivider == div, "\(want) Hz")
            #expect(abs(c.actualRate - rate) < 1e-9, "\(want) Hz")
            #expect(c.actualRate >= min(max(want.isNaN || want < 0 ? 100 : want, 1000.0 / 256), 1000) - 1e-9)
        }
    }

    @Test func identifiesThenWritesTheConfigurationAndReadsItBack() {
        var d = MPUDriver(address: 0x68, busPath: "/dev/i2c-1", configuration: MPUConfiguration(accelerometerRange: 8, gyroRange: 500, rate: 100))
        #expect(d.start() == [.read(register: 0x75, count: 1)])
        let actions = d.received([0x70], at: 1)
        #expect(d.chip == .mpu6500)
        #expect(actions == [
            .write(register: 0x6B, value: 0x01), .write(register: 0x6C, value: 0x00),
            .write(register: 0x19, value: 9), .write(register: 0x1A, value: 3),
            .write(register: 0x1B, value: 0x08), .write(register: 0x1C, value: 0x10),
            .write(register: 0x1D, value: 3),   // ACCEL_CONFIG2: the MPU-6500 generation only
            .read(register: 0x19, count: 4), .read(register: 0x6B, count: 1),
        ])
        #expect(d.received([9, 3, 0x08, 0x10], at: 1) == [])
        #expect(d.received([0x01], at: 1) == [.streaming])
        #expect(d.isStreaming)
    }

    @Test func theMPU6050HasNoAccelConfig2() {
        let d = MPUDriver(address: 0x68, busPath: "/dev/i2c-1")
        #expect(!d.configurationWrites(for: .mpu6050).contains { $0.register == 0x1D })
        #expect(d.configurationWrites(for: .mpu9250).contains { $0.register == 0x1D })
    }

    @Test func anotherChipOrAConfigurationNotKeptFails() {
        var d = MPUDriver(address: 0x69, busPath: "/dev/i2c-1")
        _ = d.start()
        #expect(d.received([0x12], at: 0) == [.fail(SourceError(.unavailable, "0x69 on /dev/i2c-1 answers WHO_AM_I 0x12: not a chip of the MPU-6050/6500/9250 family", path: "/dev/i2c-1"))])
        var e = MPUDriver(address: 0x68, busPath: "/dev/i2c-1")
        _ = e.start()
        _ = e.received([0x68], at: 0)
        guard case .fail(let error)? = e.received([0, 0, 0, 0], at: 0).first else { Issue.record("no failure"); return }
        #expect(error.message.contains("did not keep its configuration"), "\(error)")
        var f = MPUDriver(address: 0x68, busPath: "/dev/i2c-1")
        _ = f.start()
        let c = MPUConfiguration()
        _ = f.received([0x68], at: 0)
        _ = f.received([c.sampleRateDivider, c.lowPassSetting, 0x18, 0x00], at: 0)
        guard case .fail(let asleep)? = f.received([0x40], at: 0).first else { Issue.record("no failure"); return }
        #expect(asleep.message == "the MPU-6050 at 0x68 on /dev/i2c-1 stays asleep (PWR_MGMT_1 0x40)")
    }

    /// Face up the chip's Z reads +1 g of specific force (16384 at ±2 g); Core Motion's is −1 g. A
    /// gyro Z of +16.4 counts at ±2000 °/s is +1 °/s counter-clockwise seen from above: +π/180 rad/s.
    @Test func decodesCountsIntoCoreMotionUnitsAndSigns() {
        let d = MPUDriver(address: 0x68, busPath: "/dev/i2c-1")
        func bytes(_ w: [Int16]) -> [UInt8] { w.flatMap { [UInt8(UInt16(bitPattern: $0) >> 8), UInt8(UInt16(bitPattern: $0) & 0xff)] } }
        let faceUp = d.decode(bytes([0, 0, 16384, 0x1234, 0, 0, 164]), at: 7)
        #expect(faceUp.map(\.sensor) == [.accelerometer, .gyro] && faceUp.allSatisfy { $0.timestamp == 7 })
        #expect(faceUp[0].value == Vector3(0, 0, -1))
        #expect(faceUp[1].value.x == 0 && faceUp[1].value.y == 0 && abs(faceUp[1].value.z - 10 * .pi / 180) < 1e-15)
        let extremes = d.decode(bytes([-32768, 32767, -16384, 0, -32768, 32767, -164]), at: 0)
        #expect(extremes[0].value == Vector3(2, -32767.0 / 16384, 1))
        #expect(abs(extremes[1].value.x + 32768 / 16.4 * .pi / 180) < 1e-12)
        #expect(abs(extremes[1].value.z + 10 * .pi / 180) < 1e-12)
        // Zero stays +0 after the negation.
        #expect(faceUp[0].value.x.sign == .plus)
    }

    /// A mount matrix is a rotation from chip axes to device axes (as the kernel's `mount_matrix`); the
    /// accelerometer then takes the sign rule, the gyroscope the rotation alone.
    @Test func aMountMatrixRotatesBothSensors() {
        let m = MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1))  // chip x → device y
        let d = MPUDriver(address: 0x68, busPath: "/dev/i2c-1", mountMatrix: m)
        let s = d.decode([0x40, 0x00, 0, 0, 0, 0, 0, 0, 0, 164, 0, 0, 0, 0], at: 0)
        #expect(s[0].value == Vector3(0, -1, 0))
        #expect(abs(s[1].value.y - 10 * .pi / 180) < 1e-12 && s[1].value.x == 0 && s[1].value.z == 0)
    }

    @Test func failedTransfersBecomeCoreMotionErrors() {
        var d = MPUDriver(address: 0x68, busPath: "/dev/i2c-1")
        _ = d.start()
        _ = d.received([0x70], at: 0)
        #expect(d.transferFailed(LinuxIOError(code: EREMOTEIO, path: "/dev/i2c-1", operation: "read")) == [
            .fail(SourceError(.deviceRemoved, "the MPU-6500 at 0x68 on /dev/i2c-1 stopped answering (Remote I/O error)", path: "/dev/i2c-1"))])
        var e = MPUDriver(address: 0x68, busPath: "/dev/i2c-1")
        #expect(e.transferFailed(LinuxIOError(code: ENODEV, path: "/dev/i2c-1", operation: "read")) == [
            .fail(SourceError(.deviceRemoved, "the I2C adapter /dev/i2c-1 is gone", path: "/dev/i2c-1"))])
        // Bytes after a failure are ignored; a short sample read is malformed input, not a crash.
        #expect(e.received([1, 2, 3], at: 0) == [])
        var f = MPUDriver(address: 0x68, busPath: "/dev/i2c-1")
        _ = f.start(); _ = f.received([0x68], at: 0)
        let c = MPUConfiguration()
        _ = f.received([c.sampleRateDivider, c.lowPassSetting, 0x18, 0], at: 0); _ = f.received([1], at: 0)
        guard case .fail(let short)? = f.received([1, 2, 3], at: 0).first else { Issue.record("no failure"); return }
        #expect(short.kind == .malformedInput)
    }
}

/// The source and the scan on the twin.
@Suite struct I2CSourceTests {
    static func twin(_ whoAmI: UInt8 = 0x68, at address: UInt8 = 0x68) -> (LinuxDiscoveryOptions, InMemoryI2CBusOpener, InMemoryI2CBus) {
        let fs = InMemoryLinuxFileSystem()
        fs.setFile("/dev/i2c-1", "")
        fs.setFile("/sys/bus/i2c/devices/i2c-1/name", "bcm2835 (i2c@7e804000)\n")
        let opener = InMemoryI2CBusOpener()
        let bus = opener.bus("/dev/i2c-1")
        bus.addChip(at: address, registers: [0x75: whoAmI, 0x6B: 0x40])  // asleep, as after power-on
        var options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        options.i2cOpener = opener
        return (options, opener, bus)
    }

    @Test func streamsTheRegistersAsCoreMotionSamples() async throws {
        let (options, _, bus) = Self.twin(0x71)
        bus.set16(0x68, 0x3F, 16384)
        bus.set16(0x68, 0x47, -164)
        let source = try I2CDiscovery.source(forSpec: "i2c", options: options)
        #expect(source.info.identifier == "i2c:/dev/i2c-1:0x68")
        #expect(source.info.name == "InvenSense MPU-9250 at 0x68 on /dev/i2c-1")
        let got = Collected()
        let rates = try source.apply(SensorDemand(rates: [.accelerometer: 200, .gyro: 50]), sink: got.sink)
        #expect(rates == [.accelerometer: 200, .gyro: 200])
        #expect(bus.get(0x68, 0x19) == 4 && bus.get(0x68, 0x6B) == 0x01 && bus.get(0x68, 0x1B) == 0x18 && bus.get(0x68, 0x1C) == 0)
        try await eventually { got.samples.count >= 6 }
        _ = try source.apply(.none, sink: got.sink)
        let n = got.samples.count
        for s in got.samples {
            switch s.sensor {
            case .accelerometer: #expect(s.value == Vector3(0, 0, -1))
            case .gyro: #expect(s.value.x == 0 && s.value.y == 0 && abs(s.value.z + 10 * .pi / 180) < 1e-15)
            case .magnetometer: Issue.record("no magnetometer read yet")
            case .pressure: Issue.record("no barometer")
            }
        }
        let stamps = got.samples.filter { $0.sensor == .gyro }.map(\.timestamp)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 })
        #expect(bus.openHandles == 0, "the bus is closed after the stop")
        try await Task.sleep(nanoseconds: 30_000_000)
        #expect(got.samples.count == n, "nothing after apply(.none)")
    }

    @Test func onlyTheDemandedSensorIsDelivered() async throws {
        let (options, _, _) = Self.twin()
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x68", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.gyro: 100]), sink: got.sink)
        try await eventually { got.samples.count >= 3 }
        _ = try source.apply(.none, sink: got.sink)
        #expect(got.samples.allSatisfy { $0.sensor == .gyro })
        #expect(throws: SourceError.self) { _ = try source.apply(SensorDemand(rates: [.magnetometer: 10]), sink: got.sink) }
    }

    @Test func aChipGoneMidStreamEndsWithOneDeviceRemovedError() async throws {
        let (options, _, bus) = Self.twin(0x70)
        bus.set16(0x68, 0x3F, 16384)
        let source = try I2CDiscovery.source(forSpec: "i2c:1", options: options)
        let got = Collected()
        bus.unplug(0x68, afterReads: 7)  // WHO_AM_I and the two read-backs, then four samples
        // 100 Hz: one read per sample (above, the FIFO's count would be read first).
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: got.sink)
        try await eventually { got.failure != nil }
        let failure = try #require(got.failure)
        #expect(failure == SourceError(.deviceRemoved, "the MPU-6500 at 0x68 on /dev/i2c-1 stopped answering (Remote I/O error)", path: "/dev/i2c-1"))
        #expect(got.samples.count == 4, "the four reads before the chip went: \(got.samples.count)")
        #expect(got.samples.allSatisfy { $0.value == Vector3(0, 0, -1) })
        _ = try source.apply(.none, sink: got.sink)
        // Starting again on the missing chip is refused, not a crash.
        #expect(throws: SourceError.self) { _ = try source.apply(SensorDemand(rates: [.accelerometer: 50]), sink: got.sink) }
    }

    @Test func aChipReplacedByAnotherIsRefusedAtStart() throws {
        let (options, _, bus) = Self.twin()
        let source = try I2CDiscovery.source(forSpec: "i2c", options: options)
        bus.set(0x68, 0x75, 0x12)
        #expect(throws: SourceError(.unavailable, "0x68 on /dev/i2c-1 answers WHO_AM_I 0x12: not a chip of the MPU-6050/6500/9250 family", path: "/dev/i2c-1")) {
            _ = try source.apply(SensorDemand(rates: [.accelerometer: 50]), sink: { _ in })
        }
        #expect(bus.openHandles == 0)
    }

    @Test func specsPickTheBusAndAddress() throws {
        let (options, opener, _) = Self.twin(0x68, at: 0x69)
        opener.bus("/dev/i2c-3").addChip(at: 0x68, registers: [0x75: 0x70])
        let fs = options.fileSystem as! InMemoryLinuxFileSystem
        fs.setFile("/dev/i2c-3", "")
        #expect(try I2CDiscovery.source(forSpec: "i2c", options: options).info.identifier == "i2c:/dev/i2c-1:0x69")
        #expect(try I2CDiscovery.source(forSpec: "i2c:3", options: options).info.identifier == "i2c:/dev/i2c-3:0x68")
        #expect(try I2CDiscovery.source(forSpec: "i2c:i2c-3", options: options).chip == .mpu6500)
        #expect(try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:69", options: options).address == 0x69)
        #expect(throws: SourceError(.unavailable, "'i2c:/dev/i2c-1:0x80': the address must be hex within 0x03…0x77, as i2c:/dev/i2c-1:0x68")) {
            try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x80", options: options)
        }
        #expect(throws: SourceError(.unavailable, "no IMU to read from user space: /dev/i2c-1: " + I2CDiscovery.nothingAnswers([0x68]))) {
            try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x68", options: options)
        }
        // Through the Linux spec entry point too.
        #expect(try LinuxSensorDiscovery.source(forSpec: "i2c:3", options: options).info.identifier == "i2c:/dev/i2c-3:0x68")
    }

    @Test func aMountMatrixOverrideAppliesByIdentifierOrChip() async throws {
        let (twinOptions, _, bus) = Self.twin()
        var options = twinOptions
        bus.set16(0x68, 0x3B, 16384)  // +1 g of specific force on the chip's x
        options.mountMatrixOverrides = ["mpu6050": MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1))]
        let source = try I2CDiscovery.source(forSpec: "i2c", options: options)
        #expect(source.info.details.first { $0.0 == "mount matrix" }?.1 == "0, -1, 0; 1, 0, 0; 0, 0, 1 (override); acceleration negated: the chip reads +1 g up")
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: got.sink)
        try await eventually { got.samples.count >= 2 }
        _ = try source.apply(.none, sink: got.sink)
        #expect(got.samples.allSatisfy { $0.value == Vector3(0, -1, 0) })
    }
}

/// What `coremotion sensors` prints for the I2C buses, message by message.
@Suite struct I2CScanMessageTests {
    @Test func aChipFound() {
        let (options, _, _) = I2CSourceTests.twin(0x70)
        #expect(I2CDiscovery.scan(options).map(\.lines) == [[
            "i2c:/dev/i2c-1  I2C bus (bcm2835 (i2c@7e804000))",
            "  0x68 answers WHO_AM_I 0x70: an MPU-6500, no magnetometer (--source i2c:/dev/i2c-1:0x68)",
        ]])
    }

    @Test func anMPU9250AndAnotherChip() {
        let (options, opener, _) = I2CSourceTests.twin(0x71)
        opener.bus("/dev/i2c-1").addChip(at: 0x69, registers: [0x75: 0x12])
        #expect(I2CDiscovery.scan(options).first?.lines.dropFirst() == [
            "  0x68 answers WHO_AM_I 0x71: an MPU-9250; nothing answers at 0x0c after the I2C bypass: no AK8963 magnetometer (an MPU-6500 sold as an MPU-9250?), accelerometer and gyroscope only (--source i2c:/dev/i2c-1:0x68)",
            "  0x69 answers WHO_AM_I 0x12: not an MPU-6050/6500/9250 (they answer 0x68, 0x70, 0x71 or 0x73), an ICM-20948 (its WHO_AM_I, 0x00 at bank 0, is 0xea) nor a BMI160 (its CHIP_ID, 0x00, is 0xd1)",
        ])
    }

    @Test func anAddressBoundToAKernelDriverIsNotTouched() throws {
        let (options, opener, bus) = I2CSourceTests.twin()
        let fs = options.fileSystem as! InMemoryLinuxFileSystem
        fs.setFile("/sys/bus/i2c/drivers/inv-mpu6050-i2c/bind", "")
        fs.setLink("/sys/bus/i2c/devices/1-0068/driver", to: "/sys/bus/i2c/drivers/inv-mpu6050-i2c")
        fs.setFile("/sys/bus/i2c/devices/1-0068/name", "mpu6050\n")
        fs.setFile("/sys/bus/i2c/devices/1-0068/iio:device0/name", "mpu6050\n")
        #expect(I2CDiscovery.scan(options).first?.lines.dropFirst() == [
            "  0x68 is bound to the kernel driver inv-mpu6050-i2c (mpu6050, iio:device0): use --source iio",
        ])
        #expect(!bus.log.contains { if case .read(0x68, _, _) = $0 { true } else { false } }, "no transfer to a bound address")
        // Without sysfs, the kernel's EBUSY says the same.
        let (plain, plainOpener, plainBus) = I2CSourceTests.twin()
        plainBus.markBusy(0x68)
        #expect(I2CDiscovery.scan(plain).first?.lines.dropFirst() == ["  0x68 is bound to a kernel driver: use --source iio"])
        _ = (opener, plainOpener)
        #expect(throws: SourceError.self) { try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x68", options: plain) }
    }

    /// inv_mpu6050 registers a bypass multiplexer channel (`i2c-0-mux`, its own bus) through which the
    /// parent's chips answer too: they are listed once, under the parent (as in the VM).
    @Test func aMultiplexerChannelDoesNotRepeatItsParentsChips() {
        let (options, opener, _) = I2CSourceTests.twin(0x70, at: 0x69)
        let fs = options.fileSystem as! InMemoryLinuxFileSystem
        fs.setFile("/dev/i2c-2", "")
        fs.setFile("/sys/devices/platform/i2c/i2c-1/1-0068/i2c-2/name", "i2c-1-mux (chan_id 0)\n")
        fs.setFile("/sys/devices/platform/i2c/i2c-1/1-0068/i2c-2/mux_device", "")
        fs.setLink("/sys/bus/i2c/devices/i2c-2", to: "/sys/devices/platform/i2c/i2c-1/1-0068/i2c-2")
        let channel = opener.bus("/dev/i2c-2")
        channel.addChip(at: 0x69, registers: [0x75: 0x70])
        #expect(I2CDiscovery.scan(options).map(\.path) == ["/dev/i2c-1"])
        channel.addChip(at: 0x68, registers: [0x75: 0x68])  // a chip only the channel reaches
        #expect(I2CDiscovery.scan(options).map(\.lines) == [
            ["i2c:/dev/i2c-1  I2C bus (bcm2835 (i2c@7e804000))", "  0x69 answers WHO_AM_I 0x70: an MPU-6500, no magnetometer (--source i2c:/dev/i2c-1:0x69)"],
            ["i2c:/dev/i2c-2  I2C bus (i2c-1-mux (chan_id 0))", "  0x68 answers WHO_AM_I 0x68: an MPU-6050 (or MPU-6000, MPU-9150), no magnetometer read (--source i2c:/dev/i2c-2:0x68)"],
        ])
    }

    @Test func noPermission() {
        let (options, opener, _) = I2CSourceTests.twin()
        opener.setOpenError("/dev/i2c-1", EACCES)
        #expect(I2CDiscovery.scan(options).map(\.lines) == [[
            "i2c:/dev/i2c-1  I2C bus (bcm2835 (i2c@7e804000))",
            "  no permission on /dev/i2c-1: add yourself to the i2c group (sudo usermod -aG i2c $USER, then log in again) or run as root",
        ]])
        #expect(throws: SourceError(.permissionDenied, "no permission on /dev/i2c-1: add yourself to the i2c group (sudo usermod -aG i2c $USER, then log in again) or run as root", path: "/dev/i2c-1")) {
            try I2CDiscovery.source(forSpec: "i2c", options: options)
        }
    }

    @Test func anEmptyBusAndNoBus() {
        let (options, opener, _) = I2CSourceTests.twin(0x68, at: 0x50)
        _ = opener
        #expect(I2CDiscovery.scan(options).first?.lines.dropFirst() == [
            "  no chip answers at 0x1c, 0x1e, 0x28, 0x29, 0x68, 0x69, 0x6a or 0x6b: check the wiring (SDA, SCL, 3.3 V, GND) and the address pin (MPU-6050/6500/9250, ICM-20948 and BMI160 answer at 0x68, or 0x69 with AD0/SDO high; LSM6DSx and the LSM9DS1's accelerometer and gyroscope at 0x6a or 0x6b; the LSM9DS1's magnetometer at 0x1c or 0x1e; a BNO055 at 0x28, or 0x29 with COM3 high)",
        ])
        let none = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: InMemoryLinuxFileSystem())
        #expect(I2CDiscovery.scan(none).isEmpty)
        #expect(I2CDiscovery.noBusLine(none) == "no I2C bus (/dev/i2c-*): on a Raspberry Pi enable I2C (raspi-config → Interface Options → I2C, or dtparam=i2c_arm=on in config.txt) and load i2c-dev")
        #expect(throws: SourceError(.unavailable, I2CDiscovery.noBusLine(none))) { try I2CDiscovery.source(forSpec: "i2c", options: none) }
    }

    @Test func theScanOnlyReadsWhoAmI() {
        let (options, opener, bus) = I2CSourceTests.twin()
        _ = opener
        _ = I2CDiscovery.scan(options)
        #expect(bus.log == [.read(address: 0x68, register: 0x75, count: 1)])
    }
}

/// Polls `condition` every 2 ms without holding a thread; gives up after 60 s (a bound on a failure
/// only: a condition that holds returns at once).
func eventually(_ condition: @Sendable () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(60)
    while !condition() {
        if Date() > deadline {
            Issue.record("condition not met within 60 s")
            throw TimedOut()
        }
        try await Task.sleep(nanoseconds: 2_000_000)
    }
}
