import Foundation
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Every user-space I2C chip driver, through the `i2c:` source on its own thread, on an emulated
/// chip that stops answering mid-stream: its transfers fail with `EIO` or `ENXIO`, as `/dev/i2c-N`
/// gives for a chip disconnected from the bus. One clear error through the source's error channel
/// (`ENXIO`: the device removed; `EIO`: an I/O error naming the chip), never a crash, and the
/// samples already delivered are kept. At 100 Hz (one read a sample) and at 400 Hz (the FIFO where
/// the driver reads one: MPU, LSM6DSL, BMI160).
@Suite struct I2CTransferErrorTests {
    enum Chip: String, CaseIterable, CustomTestStringConvertible {
        case mpu6500, icm20948, lsm6dsl, bmi160, bno055
        var testDescription: String { rawValue }
        var address: UInt8 {
            switch self {
            case .mpu6500: 0x68
            case .icm20948, .bmi160: 0x69
            case .lsm6dsl: 0x6A
            case .bno055: 0x28
            }
        }
        var name: String {
            switch self {
            case .mpu6500: "MPU-6500"
            case .icm20948: "ICM-20948"
            case .lsm6dsl: "LSM6DSL"
            case .bmi160: "BMI160"
            case .bno055: "BNO055"
            }
        }
        func emulator() -> any EmulatedI2CChip {
            switch self {
            case .mpu6500: MPUEmulator(chip: .mpu6500, clock: { LinuxClock.monotonic() })
            case .icm20948: ICM20948Emulator()
            case .lsm6dsl: LSM6DSEmulator(chip: .lsm6dsl, clock: { LinuxClock.monotonic() })
            case .bmi160: BMI160Emulator(clock: { LinuxClock.monotonic() })
            case .bno055: BNO055Emulator()
            }
        }
    }

    static let cases: [(Chip, Double, Int32)] = Chip.allCases.flatMap { c in [100.0, 400].flatMap { r in [EIO, ENXIO].map { (c, r, $0) } } }

    @Test(arguments: cases)
    func aTransferErrorMidStreamIsOneClearError(chip: Chip, rate: Double, code: Int32) async throws {
        let (options, bus) = emulatedBus()
        bus.attach(chip.emulator(), at: chip.address)
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:\(I2CAddress.hex(chip.address))", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: rate]), sink: got.sink)
        try await eventually { got.samples.count >= 5 }
        bus.fail(chip.address, with: code)
        try await eventually { got.failure != nil }
        let delivered = got.samples.count
        #expect(delivered >= 5, "the samples delivered before the error are kept")
        _ = try? source.apply(.none, sink: got.sink)
        #expect(got.failures == 1, "one error, not one a poll: \(got.failures)")
        #expect(got.samples.count == delivered, "nothing after the error")
        let failure = try #require(got.failure)
        #expect(failure.message.contains(chip.name) && failure.message.contains(I2CAddress.hex(chip.address)), "\(failure)")
        if code == ENXIO {
            #expect(failure.kind == .deviceRemoved && failure.message.contains("stopped answering"), "\(failure)")
        } else {
            #expect(failure.kind == .io && failure.message.contains(String(cString: strerror(EIO))), "\(failure)")
        }
        // Starting again on the chip that does not answer is refused, not a crash.
        #expect(throws: SourceError.self) { _ = try source.apply(SensorDemand(rates: [.accelerometer: rate]), sink: got.sink) }
    }
}
