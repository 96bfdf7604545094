import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import Testing

/// The Bosch BMI160 driver (`BMI160Driver`), from its datasheet (BST-BMI160-DS000: CHIP_ID 0xD1,
/// CMD 0x7E, PMU_STATUS 0x03, ACC_CONF/ACC_RANGE/GYR_CONF/GYR_RANGE 0x40…0x43, DATA 0x0C…0x17); the
/// same code is checked against the kernel's bmi160 in the VM (Tests/LinuxKernelTests/I2CUserSpaceTests.swift).
@Suite struct BMI160DriverTests {
    @Test func identifiesPowersUpConfiguresAndChecksThePowerMode() {
        var d = BMI160Driver(address: 0x69, busPath: "/dev/i2c-1", configuration: BMI160Configuration(accelerometerRange: 4, gyroRange: 500, rate: 150, fifo: false))
        #expect(d.start() == [.read(register: 0x00, count: 1)])
        #expect(d.received([0xD1], at: 0) == [
            .write(register: 0x7E, value: 0x11), .pause(seconds: 0.005),   // accelerometer normal mode, 3.8 ms start-up
            .write(register: 0x7E, value: 0x15), .pause(seconds: 0.081),   // gyroscope normal mode, 80 ms start-up
            .write(register: 0x40, value: 0x29),   // ACC_CONF: normal filter (010), 200 Hz (1001)
            .write(register: 0x41, value: 0x05),   // ACC_RANGE ±4 g
            .write(register: 0x42, value: 0x29),   // GYR_CONF: normal filter (10), 200 Hz
            .write(register: 0x43, value: 0x02),   // GYR_RANGE ±500 °/s
            .read(register: 0x40, count: 4), .read(register: 0x03, count: 1),
        ])
        #expect(d.received([0x29, 0xF5, 0x29, 0xFA], at: 0) == [], "reserved bits of the range registers are not compared")
        #expect(d.received([0x14], at: 0) == [.streaming])
        #expect(d.isStreaming && d.dataRead == (0x0C, 12) && d.actualRate == 200)
    }

    @Test func ratesAndRanges() {
        #expect(BMI160Configuration(rate: 100).actualRate == 100)
        #expect(BMI160Configuration(rate: 1).actualRate == 25)
        #expect(BMI160Configuration(rate: 5000).actualRate == 800)
        #expect(BMI160Configuration(rate: .infinity).actualRate == 100)
        let c = BMI160Configuration(accelerometerRange: 3, gyroRange: 7)
        #expect(c.accelerometerRange == 2 && c.gyroRange == 2000)
        #expect(c.writes.map(\.value) == [0x28, 0x03, 0x28, 0x00])
    }

    @Test func anotherChipAConfigurationNotKeptOrSuspendFail() {
        var d = BMI160Driver(address: 0x69, busPath: "/dev/i2c-1")
        _ = d.start()
        #expect(d.received([0xD3], at: 0) == [.fail(SourceError(.unavailable, "0x69 on /dev/i2c-1 answers CHIP_ID (0x00) 0xd3: not a BMI160 (0xd1)", path: "/dev/i2c-1"))])
        var e = BMI160Driver(address: 0x69, busPath: "/dev/i2c-1")
        _ = e.start(); _ = e.received([0xD1], at: 0)
        guard case .fail(let kept)? = e.received([0, 0, 0, 0], at: 0).first else { Issue.record("no failure"); return }
        #expect(kept.message.contains("did not keep its configuration"))
        var f = BMI160Driver(address: 0x68, busPath: "/dev/i2c-1")
        _ = f.start(); _ = f.received([0xD1], at: 0); _ = f.received([0x28, 0x03, 0x28, 0x00], at: 0)
        #expect(f.received([0x10], at: 0) == [.fail(SourceError(.io, "the BMI160 at 0x68 on /dev/i2c-1 did not enter normal mode (PMU_STATUS 0x10, want accelerometer and gyroscope 01)", path: "/dev/i2c-1"))])
        #expect(f.received([0x14], at: 0) == [], "nothing after a failure")
    }

    /// Face up +16384 counts on Z (±2 g) is −1 g in Core Motion; +164 counts of gyroscope Z (±2000 °/s)
    /// +10 °/s. Gyroscope words first, little-endian.
    @Test func decodesIntoCoreMotionUnitsAndSigns() {
        let d = BMI160Driver(address: 0x69, busPath: "/dev/i2c-1")
        let s = d.decode(LSM6DSDriverTests.le([0, 0, 164, -8192, 0, 16384]), at: 2)
        #expect(s[0].sensor == .accelerometer && s[0].value == Vector3(0.5, 0, -1) && s[0].timestamp == 2)
        #expect(s[1].sensor == .gyro && s[1].value.x == 0 && abs(s[1].value.z - 10 * .pi / 180) < 1e-12)
        #expect(s[0].value.y.sign == .plus)
    }

    @Test func streamsThroughTheSourceAndRefusesASuspendedChip() async throws {
        let (options, bus) = LSM6DSSourceTests.twin()
        bus.addChip(at: 0x69, registers: [0x00: 0xD1, 0x03: 0x14])   // PMU_STATUS as the chip shows it after the commands
        for (i, b) in LSM6DSDriverTests.le([0, 0, 164, 0, 0, 16384]).enumerated() { bus.set(0x69, 0x0C + UInt8(i), b) }
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:0x69", options: options)
        #expect(source.chip == .bmi160 && source.info.name == "Bosch BMI160 at 0x69 on /dev/i2c-1")
        let got = Collected()
        #expect(try source.apply(SensorDemand(rates: [.gyro: 60]), sink: got.sink) == [.gyro: 100])
        #expect(bus.get(0x69, 0x7E) == 0x15 && bus.get(0x69, 0x40) == 0x28 && bus.get(0x69, 0x41) == 0x03)
        try await eventually { got.samples.count >= 3 }
        _ = try source.apply(.none, sink: got.sink)
        #expect(got.samples.allSatisfy { $0.sensor == .gyro && abs($0.value.z - 10 * .pi / 180) < 1e-12 })
        bus.set(0x69, 0x03, 0x00)
        #expect(throws: SourceError(.io, "the BMI160 at 0x69 on /dev/i2c-1 did not enter normal mode (PMU_STATUS 0x00, want accelerometer and gyroscope 01)", path: "/dev/i2c-1")) {
            _ = try source.apply(SensorDemand(rates: [.gyro: 60]), sink: got.sink)
        }
        #expect(bus.openHandles == 0)
    }
}
