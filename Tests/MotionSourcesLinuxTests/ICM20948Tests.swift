import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import Testing

/// The ICM-20948 driver (`ICM20948Driver`) against a register-level emulator written from the
/// datasheet (DS-000189; `ICM20948Emulator`: register banks, sleep, full-scale ranges, the I2C
/// master and the AK09916 behind it). Debian's kernel has no driver for the chip, so there is no
/// kernel to compare with: the emulator is the counterpart, and mutants of the driver (a bank switch
/// left out, the wrong range, the wrong byte order) must fail against it.
@Suite struct ICM20948DriverTests {
    typealias H = EmulatedChipHarness
    static let halfRadianPerSecond = 0.5 * 180 / Double.pi  // °/s

    @Test func identifiesInBankZeroFirst() {
        var d = ICM20948Driver(address: 0x68, busPath: "/dev/i2c-1")
        #expect(d.start() == [.write(register: 0x7F, value: 0x00), .read(register: 0x00, count: 1)])
        #expect(d.received([0x00], at: 0) == [.fail(SourceError(.unavailable, "0x68 on /dev/i2c-1 answers WHO_AM_I (0x00, bank 0) 0x00: not an ICM-20948 (0xea)", path: "/dev/i2c-1"))])
    }

    @Test func ratesAndRegisterValues() {
        let c = ICM20948Configuration(rate: 100)
        #expect(c.gyroDivider == 10 && c.accelerometerDivider == 10 && c.actualRate == 100)
        #expect(c.gyroConfig1 == 0x27, "DLPF 4 (23.9 Hz, below half of 100 Hz), ±2000 °/s (3 << 1), FCHOICE")
        #expect(c.accelConfig == 0x21, "DLPF 4, ±2 g, FCHOICE")
        #expect(ICM20948Configuration(rate: 5000).actualRate == 1100)
        #expect(ICM20948Configuration(rate: 1).gyroDivider == 255)
        #expect(ICM20948Configuration(rate: .nan).actualRate == 100)
        #expect(ICM20948Configuration(accelerometerRange: 3, gyroRange: 7).accelConfig & 0x06 == 0)
    }

    /// Known poses written into the emulator's physical state read as Core Motion defines them:
    /// face up z ≈ −1 g, upright in portrait y ≈ −1 g, turning counter-clockwise seen from above
    /// +0.5 rad/s about z, the field in µT in the device frame; from a chip another program left
    /// in bank 2.
    @Test func posesReadAsCoreMotionDefines() {
        let chip = ICM20948Emulator()
        chip.leaveInBank(2)
        chip.setPose(specificForce: (0, 0, 1), rotationRate: (0, 0, Self.halfRadianPerSecond), magneticField: (20, -5, -40))
        let faceUp = H.run(ICM20948Driver(address: 0x68, busPath: "/dev/i2c-1"), on: chip)
        #expect(faceUp.failure == nil)
        #expect(H.near(faceUp.value(.accelerometer), Vector3(0, 0, -1), 1.0 / 16384))
        #expect(H.near(faceUp.value(.gyro), Vector3(0, 0, 0.5), .pi / 180 / 16.4))
        #expect(H.near(faceUp.value(.magnetometer), Vector3(20, -5, -40), 0.15))
        // What the driver left in the chip: ±2 g, ±2000 °/s, the AK09916 measuring continuously.
        #expect(chip.register(bank: 2, 0x14) & 0x06 == 0 && chip.register(bank: 2, 0x01) & 0x06 == 0x06)
        #expect(chip.magnetometerRegister(0x31) == 0x08)
        #expect(chip.register(bank: 0, 0x7F) == 0, "left in bank 0, where the data are")

        chip.setPose(specificForce: (0, 1, 0))
        let upright = H.run(ICM20948Driver(address: 0x68, busPath: "/dev/i2c-1"), on: chip)
        #expect(H.near(upright.value(.accelerometer), Vector3(0, -1, 0), 1.0 / 16384))
        chip.setPose(specificForce: (0.3, -0.5, 0.8), rotationRate: (10, -20, 30), magneticField: (-12, 33, 7))
        let tilted = H.run(ICM20948Driver(address: 0x68, busPath: "/dev/i2c-1", configuration: ICM20948Configuration(accelerometerRange: 8, gyroRange: 500)), on: chip)
        #expect(H.near(tilted.value(.accelerometer), Vector3(-0.3, 0.5, -0.8), 1.0 / 4096))
        #expect(H.near(tilted.value(.gyro), Vector3(10, -20, 30) * (.pi / 180), .pi / 180 / 65.5))
        #expect(H.near(tilted.value(.magnetometer), Vector3(-12, 33, 7), 0.15))
    }

    /// Drivers with a bug of the kinds the issue names must not read the pose right.
    @Test func mutantsFailAgainstTheEmulator() {
        let chip = { () -> ICM20948Emulator in
            let c = ICM20948Emulator()
            c.leaveInBank(3)
            c.setPose(specificForce: (0, 0, 1), rotationRate: (0, 0, Self.halfRadianPerSecond), magneticField: (20, -5, -40))
            return c
        }
        let driver = ICM20948Driver(address: 0x68, busPath: "/dev/i2c-1")
        #expect(H.near(H.run(driver, on: chip()).value(.accelerometer), Vector3(0, 0, -1), 1e-3), "the driver itself")
        // No REG_BANK_SEL at all: WHO_AM_I is read in bank 3.
        let noBank = H.run(driver, on: chip()) { a in if case .write(0x7F, _) = a { return nil }; return a }
        #expect(noBank.failure?.message.contains("not an ICM-20948") == true, "\(noBank)")
        // Bank 2 never selected: the ranges go to bank 0's registers, the read-back fails.
        let noBank2 = H.run(driver, on: chip()) { a in if case .write(0x7F, 0x20) = a { return nil }; return a }
        #expect(noBank2.failure?.message.contains("did not keep its configuration in bank 2") == true, "\(noBank2)")
        // Not woken: the data registers read zero (and PWR_MGMT_1 says so).
        let asleep = H.run(driver, on: chip()) { a in if case .write(0x06, 0x01) = a { return nil }; return a }
        #expect(asleep.failure?.message.contains("stays asleep") == true)
        // The AK09916 left powered down: the magnetometer has no data ready, so none is delivered.
        let noMag = H.run(driver, on: chip()) { a in if case .write(0x06, 0x08) = a { return nil }; return a }
        #expect(noMag.value(.magnetometer) == nil && noMag.value(.accelerometer) != nil)
        // The wrong scale: the chip set to ±4 g, decoded as ±2 g.
        let wrongRange = H.run(driver, on: chip()) { a in if case .write(0x14, let v) = a { return .write(register: 0x14, value: v | 0x02) }; return a }
        #expect(wrongRange.failure != nil || !H.near(wrongRange.value(.accelerometer), Vector3(0, 0, -1), 0.01))
        // The wrong byte order: the same registers decoded little-endian.
        let c = chip()
        _ = H.run(driver, on: c)
        var b = c.read(register: 0x2D, count: 23)
        for i in stride(from: 0, to: 12, by: 2) { b.swapAt(i, i + 1) }
        #expect(!H.near(driver.decode(b, at: 0).first?.value, Vector3(0, 0, -1), 0.01))
    }

    /// Through the `i2c:` source (its thread, real pauses) on the emulated bus, and the scan's line.
    @Test func streamsThroughTheSourceAndTheScanNamesIt() async throws {
        let (options, bus) = emulatedBus()
        let chip = ICM20948Emulator()  // in bank 0, as after power-on: the scan writes nothing, so it cannot select a bank
        chip.setPose(specificForce: (0, 0, 1), rotationRate: (0, 0, Self.halfRadianPerSecond), magneticField: (20, -5, -40))
        bus.attach(chip, at: 0x69)
        #expect(I2CDiscovery.scan(options).map(\.lines) == [[
            "i2c:/dev/i2c-1  I2C bus (bcm2835 (i2c@7e804000))",
            "  0x69 answers WHO_AM_I 0xea at bank 0: an ICM-20948: accelerometer, gyroscope and its AK09916 magnetometer (read through the chip's I2C master) (--source i2c:/dev/i2c-1:0x69)",
        ]])
        let source = try I2CDiscovery.source(forSpec: "i2c", options: options)
        #expect(source.chip == .icm20948 && source.info.name == "InvenSense ICM-20948 at 0x69 on /dev/i2c-1")
        #expect(Set(source.info.sensors.keys) == [.accelerometer, .gyro, .magnetometer])
        let got = Collected()
        #expect(try source.apply(SensorDemand(rates: [.accelerometer: 50, .magnetometer: 50]), sink: got.sink) == [.accelerometer: 50, .magnetometer: 50])
        try await eventually { got.samples.filter { $0.sensor == .magnetometer }.count >= 2 && got.samples.count >= 4 }
        _ = try source.apply(.none, sink: got.sink)
        let samples = got.samples
        #expect(!samples.contains { $0.sensor == .gyro })
        #expect(samples.filter { $0.sensor == .accelerometer }.allSatisfy { H.near($0.value, Vector3(0, 0, -1), 1.0 / 16384) })
        #expect(samples.filter { $0.sensor == .magnetometer }.allSatisfy { H.near($0.value, Vector3(20, -5, -40), 0.15) })
    }
}
