import Foundation
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import MotionTestSupport
import Testing

/// An MPU-6500 on the in-memory I2C bus, its polls paced by a ``ManualClock``: a run advances the
/// clock in 5 ms steps and returns once the poll thread has read everything due and sleeps again;
/// the end is the chip unplugged (`EREMOTEIO`).
final class I2CSubject: SourceContractSubject {
    let clock = ManualClock(start: 100)
    let bus: InMemoryI2CBus
    let i2c: I2CSource
    var source: any SensorSource { i2c }
    var sensor: SensorKind { .gyro }
    /// Rates of the divider (1 kHz / (1 + n)): exact.
    var rates: (first: Double, second: Double) { (100, 50) }

    init() {
        let opener = InMemoryI2CBusOpener()
        bus = opener.bus("/dev/i2c-1")
        bus.addChip(at: 0x68, registers: [0x75: 0x70, 0x6B: 0x40])  // an MPU-6500, asleep as after power-on
        bus.set16(0x68, 0x47, -164)
        i2c = I2CSource(busPath: "/dev/i2c-1", address: 0x68, chip: .mpu6500, opener: opener, clock: clock)
    }

    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        let settled = await clock.run(seconds: seconds, step: 0.005, parked: running ? 1 : 0)
        #expect(settled, "the I2C poll thread did not settle")
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool { false }

    func end(recorder: EventRecorder) async -> Bool {
        #expect(await clock.settle(parked: 1), "the I2C poll thread did not start")
        bus.unplug(0x68)
        clock.advance(by: 0.02)
        let ended = await recorder.waitFor { $0.contains(where: \.isTerminal) }
        #expect(ended, "unplugging the chip did not end the source")
        return true
    }
}

/// The HID accelerometer twin polled through sysfs (`preferBuffered` off), on a ``ManualClock``; its
/// `sampling_frequency` offers 10…100 Hz. The end is the device removed (its values fail `ENODEV`).
final class IIOPollingSubject: SourceContractSubject {
    let clock = ManualClock(start: 100)
    let fs: InMemoryLinuxFileSystem
    let iio: any SensorSource
    var source: any SensorSource { iio }
    var sensor: SensorKind { .accelerometer }
    var rates: (first: Double, second: Double) { (100, 25) }
    static let dir = "/sys/devices/platform/HID-SENSOR-200073.3.auto/iio:device0"

    init() throws {
        let (fs, _) = try Fixtures.hidBufferTwin()
        fs.setFile(Self.dir + "/in_accel_sampling_frequency", "10\n", writable: true)
        fs.setFile(Self.dir + "/in_accel_sampling_frequency_available", "10 25 50 100\n")
        self.fs = fs
        var options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""),
                                            preferBuffered: false, fileSystem: fs)
        options.clock = clock
        iio = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
    }

    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        let settled = await clock.run(seconds: seconds, step: 0.005, parked: running ? 1 : 0)
        #expect(settled, "the IIO poll thread did not settle")
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool { false }

    func end(recorder: EventRecorder) async -> Bool {
        #expect(await clock.settle(parked: 1), "the IIO poll thread did not start")
        for axis in ["x", "y", "z"] { fs.setReadError(Self.dir + "/in_accel_\(axis)_raw", ENODEV) }
        clock.advance(by: 0.02)
        let ended = await recorder.waitFor { $0.contains(where: \.isTerminal) }
        #expect(ended, "the device's removal did not end the source")
        return true
    }
}

@Suite struct PolledSourceContractTests {
    @Test func i2cKeepsTheContract() async {
        let problems = await SourceContract.check { I2CSubject() }
        #expect(problems == [], "\(problems)")
    }

    @Test func iioPollingKeepsTheContract() async {
        let problems = await SourceContract.check { try IIOPollingSubject() }
        #expect(problems == [], "\(problems)")
    }

    /// A BMP280's pressure channel in sysfs, read through ``PolledBarometerSource`` on the manual clock;
    /// the end is the device removed (its value fails `ENODEV`).
    @Test func anIIOPressureSensorKeepsTheContract() async {
        let problems = await SourceContract.check {
            let chip = try InMemoryBMP280()
            return BarometerSubject(chip.sensor, fail: { chip.unplug() })
        }
        #expect(problems == [], "\(problems)")
    }

    /// On the manual clock a polled second is exactly its reads: 100 Hz from t = 100 to 101 inclusive
    /// is 101 samples, stamped with the clock's time, one period apart.
    @Test func i2cOnTheManualClockReadsExactlyWhatIsDue() async throws {
        let subject = I2CSubject()
        let recorder = EventRecorder()
        let granted = try subject.i2c.apply(SensorDemand(rates: [.gyro: 100]), sink: recorder.sink)
        #expect(granted == [.gyro: 100])
        // Steps of exactly the poll's period, as the poll thread adds it; the last half step only
        // makes sure t = 101 is reached whatever the rounding of the sums.
        #expect(await subject.clock.run(seconds: 1.005, step: 0.01, parked: 1))
        let stamps = recorder.samples.map(\.timestamp)
        #expect(stamps.count == 101)
        #expect(stamps.first == 100)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { abs($1 - $0 - 0.01) < 1e-9 })
        _ = try subject.i2c.apply(.none, sink: recorder.sink)
        #expect(subject.bus.openHandles == 0, "the bus is closed after the stop")
    }
}
