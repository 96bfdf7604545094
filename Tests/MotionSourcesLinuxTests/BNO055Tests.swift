import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import OpenCoreMotion
import Testing

/// The BNO055 driver (`BNO055Driver`) against a register-level emulator written from the datasheet
/// (BST-BNO055-DS000; `BNO055Emulator`: pages, operation modes and their switching times, writes
/// only in CONFIGMODE, units, axis remap, the fusion's quaternion and gravity). Debian's kernel does
/// not build the mainline bno055 driver, so the emulator is the counterpart; mutants of the driver
/// must fail against it.
@Suite struct BNO055DriverTests {
    typealias H = EmulatedChipHarness
    static let count = 0.01 / 9.80665  // one count of acceleration, in g

    /// A chip another program left in NDOF, with mg and rad/s units, a remapped z, on page 1.
    static func usedChip(_ clock: H.Clock) -> BNO055Emulator {
        let chip = BNO055Emulator(now: { clock.now })
        chip.preset(0x3B, 0x83)
        chip.preset(0x42, 0x01)
        chip.preset(0x3D, 0x0C)
        chip.write(register: 0x07, value: 1)
        return chip
    }

    @Test func setUpWaitsTheModeSwitchingTimes() {
        var d = BNO055Driver(address: 0x28, busPath: "/dev/i2c-1", configuration: BNO055Configuration(rate: 50, fusion: true))
        #expect(d.start() == [.write(register: 0x07, value: 0), .read(register: 0x00, count: 1)])
        #expect(d.received([0xA0], at: 0) == [
            .write(register: 0x3D, value: 0x00), .pause(seconds: 0.019),  // CONFIGMODE, 19 ms
            .write(register: 0x3E, value: 0x00), .write(register: 0x3B, value: 0x00),
            .write(register: 0x41, value: 0x24), .write(register: 0x42, value: 0x00),
            .write(register: 0x3D, value: 0x0C), .pause(seconds: 0.007),  // NDOF, 7 ms
            .read(register: 0x3B, count: 8), .read(register: 0x39, count: 2),
        ])
        #expect(d.received([0x00, 0, 0x0C, 0x00, 0, 0, 0x24, 0x00], at: 0) == [])
        #expect(d.received([0x01, 0x03], at: 0) == [.fail(SourceError(.io, "the BNO055 at 0x28 on /dev/i2c-1 reports a system error (SYS_STATUS 1, SYS_ERR 0x03)", path: "/dev/i2c-1"))])
        var e = BNO055Driver(address: 0x29, busPath: "/dev/i2c-1")
        _ = e.start()
        #expect(e.received([0x00], at: 0) == [.fail(SourceError(.unavailable, "0x29 on /dev/i2c-1 answers CHIP_ID (0x00) 0x00: not a BNO055 (0xa0)", path: "/dev/i2c-1"))])
        #expect(e.dataRead == (0x08, 18) && d.dataRead == (0x08, 44) && d.actualRate == 50)
    }

    /// Raw sensors (AMG): face up z ≈ −1 g, upright in portrait y ≈ −1 g, +0.5 rad/s about z, the
    /// field in µT; from a chip left in NDOF with other units, a remap and page 1.
    @Test func rawPosesReadAsCoreMotionDefines() {
        let clock = H.Clock()
        let chip = Self.usedChip(clock)
        chip.setPose(attitude: .identity, rotationRate: Vector3(0, 0, 0.5 * 180 / .pi), magneticField: Vector3(0, 20, -40))
        let faceUp = H.run(BNO055Driver(address: 0x28, busPath: "/dev/i2c-1"), on: chip, clock: clock)
        #expect(faceUp.failure == nil, "\(faceUp)")
        #expect(H.near(faceUp.value(.accelerometer), Vector3(0, 0, -1), Self.count))
        #expect(H.near(faceUp.value(.gyro), Vector3(0, 0, 0.5), .pi / 180 / 16))
        #expect(H.near(faceUp.value(.magnetometer), Vector3(0, 20, -40), 1.0 / 16))
        #expect(faceUp.attitude == nil, "no fusion in AMG")
        #expect(chip.register(0x3D) == 0x07 && chip.register(0x3B) == 0x00 && chip.register(0x42) == 0x00)
        // Upright in portrait: the top (y) up, the screen facing north's opposite.
        chip.setPose(attitude: Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2))
        let upright = H.run(BNO055Driver(address: 0x28, busPath: "/dev/i2c-1"), on: chip, clock: clock)
        #expect(H.near(upright.value(.accelerometer), Vector3(0, -1, 0), Self.count))
    }

    /// The chip's own fusion (NDOF): its quaternion (chip → east–north–up) becomes Core Motion's
    /// attitude (device → north–west–up), its gravity Core Motion's sign.
    @Test func ownAttitudeInCoreMotionFrames() {
        let clock = H.Clock()
        let chip = Self.usedChip(clock)
        let fusion = BNO055Driver(address: 0x28, busPath: "/dev/i2c-1", configuration: BNO055Configuration(fusion: true))
        // Face up, the top pointing north: heading 0, the top along Core Motion's x.
        chip.setPose(attitude: .identity)
        let north = H.run(fusion, on: chip, clock: clock)
        let a = north.attitude
        #expect(a != nil, "\(north)")
        #expect(H.near(a?.attitude.rotate(Vector3(0, 1, 0)), Vector3(1, 0, 0), 1e-3), "the top points north")
        #expect(H.near(a?.gravity, Vector3(0, 0, -1), Self.count))
        #expect(abs((a?.attitude.compassHeading ?? -1) - 0) < 0.1 || abs((a?.attitude.compassHeading ?? -1) - 360) < 0.1)
        // Turned 0.7 rad counter-clockwise (seen from above): the top 40.1° west of north.
        chip.setPose(attitude: .aboutZ(0.7))
        let turned = H.run(fusion, on: chip, clock: clock).attitude
        #expect(abs((turned?.attitude.compassHeading ?? -1) - (360 - 0.7 * 180 / .pi)) < 0.1)
        let yaw = (turned?.attitude ?? .identity).eulerAngles.yaw
        #expect(abs(yaw - (0.7 - .pi / 2)) < 1e-3, "yaw grows counter-clockwise, 0 with the top west")
        // Upright in portrait: gravity along −y.
        chip.setPose(attitude: Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2))
        #expect(H.near(H.run(fusion, on: chip, clock: clock).attitude?.gravity, Vector3(0, -1, 0), Self.count))
    }

    /// Drivers with the bugs the datasheet invites must fail against the emulator.
    @Test func mutantsFailAgainstTheEmulator() {
        let driver = BNO055Driver(address: 0x28, busPath: "/dev/i2c-1")
        func run(_ mutate: @escaping (I2CDriverAction) -> I2CDriverAction?) -> H.Outcome {
            let clock = H.Clock()
            let chip = Self.usedChip(clock)
            chip.setPose(attitude: .identity)
            return H.run(driver, on: chip, clock: clock, mutate: mutate)
        }
        #expect(H.near(run { $0 }.value(.accelerometer), Vector3(0, 0, -1), Self.count), "the driver itself")
        // PAGE_ID left at 1: CHIP_ID is not there.
        #expect(run { if case .write(0x07, _) = $0 { return nil }; return $0 }.failure?.message.contains("not a BNO055") == true)
        // No wait after CONFIGMODE: the configuration writes are lost while the chip switches.
        let hasty = run { if case .pause(0.019) = $0 { return nil }; return $0 }
        #expect(hasty.failure?.message.contains("did not keep its configuration") == true, "\(hasty)")
        // No wait after the mode change: the chip would still be switching; the emulator takes the
        // read-back, so this one is caught only by the set-up list (setUpWaitsTheModeSwitchingTimes).
        // UNIT_SEL not written: mg instead of m/s² (a factor 9.8).
        let noUnits = run { if case .write(0x3B, _) = $0 { return nil }; return $0 }
        #expect(noUnits.failure != nil || !H.near(noUnits.value(.accelerometer), Vector3(0, 0, -1), 0.01))
        // Never leaving CONFIGMODE: every output is zero.
        let config = run { if case .write(0x3D, 0x07) = $0 { return nil }; return $0 }
        #expect(config.failure != nil || !H.near(config.value(.accelerometer), Vector3(0, 0, -1), 0.01))
        // The wrong byte order.
        let clock = H.Clock()
        let chip = Self.usedChip(clock)
        chip.setPose(attitude: .identity)
        _ = H.run(driver, on: chip, clock: clock)
        var b = chip.read(register: 0x08, count: 18)
        for i in stride(from: 0, to: 18, by: 2) { b.swapAt(i, i + 1) }
        #expect(!H.near(driver.decode(b, at: 0).first?.value, Vector3(0, 0, -1), 0.01))
    }

    /// `i2c:…?motion=own` through `CMMotionManager`: device motion from the chip's own attitude
    /// (real pauses on the source's thread, the emulator on the real clock), and the scan's line.
    @Test func ownAttitudeThroughCMMotionManager() async throws {
        let (options, bus) = emulatedBus()
        let chip = BNO055Emulator()
        chip.setPose(attitude: .aboutZ(0.7), magneticField: Vector3(0, 20, -40))
        bus.attach(chip, at: 0x28)
        #expect(I2CDiscovery.scan(options).first?.lines.dropFirst() == [
            "  0x28 answers CHIP_ID (0x00) 0xa0: a BNO055: accelerometer, gyroscope, magnetometer and its own fused attitude (?motion=own) (--source i2c:/dev/i2c-1:0x28)",
        ])
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x28?motion=own", options: options)
        #expect(source.reportsOwnAttitude && source.info.identifier == "i2c:/dev/i2c-1:0x28", "the chip's identity, as calibration is stored under")
        #expect(try !I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x28", options: options).reportsOwnAttitude)
        #expect(throws: SourceError.self) { try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x28?motion=chip", options: options) }
        let manager = CMMotionManager(source: source)
        manager.deviceMotionUpdateInterval = 0.02
        // What each update said (CMDeviceMotion is not Sendable): roll, pitch, yaw, gravity, heading.
        let got = Locked<[(roll: Double, pitch: Double, yaw: Double, gravity: Vector3, heading: Double)]>([])
        manager.startDeviceMotionUpdates(using: .xMagneticNorthZVertical, to: OperationQueue()) { m, _ in
            guard let m else { return }
            let row = (m.attitude.roll, m.attitude.pitch, m.attitude.yaw, Vector3(m.gravity.x, m.gravity.y, m.gravity.z), m.heading)
            got.withLock { $0.append(row) }
        }
        try await eventually { got.withLock { $0.count } >= 5 }
        manager.stopDeviceMotionUpdates()
        #expect(chip.register(0x3D) == 0x0C, "NDOF")
        for m in got.withLock({ $0 }) {
            #expect(abs(m.yaw - (0.7 - .pi / 2)) < 1e-3 && abs(m.pitch) < 1e-3 && abs(m.roll) < 1e-3, "\(m)")
            #expect(H.near(m.gravity, Vector3(0, 0, -1), 1e-3), "\(m)")
            #expect(abs(m.heading - (360 - 0.7 * 180 / .pi)) < 0.1, "heading \(m.heading)")
        }
    }
}
