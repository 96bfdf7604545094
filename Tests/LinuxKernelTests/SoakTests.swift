import Foundation
import Testing

/// A long run, shortened for the suite, through a real driver: the MPU-6050 on i2c-stub polled at its
/// fastest rate (500 Hz) through CMMotionManager by `coremotion bench soak` in the VM
/// (`scripts/vm/scenarios/i2c-mpu6050-soak.sh`; by hand: `… i2c-mpu6050-soak.sh 3600 60` for the hour).
@Suite(.serialized, .enabled(if: VMRig.enabled, VMRig.skipComment))
struct SoakTests {
    static let seconds = 45
    static let boot = VMRig.Shared("i2c-mpu6050-soak.sh", [String(seconds), "15"])

    struct Report: Decodable {
        struct Window: Decodable {
            var delivered: Int
            var cpu_s: Double
        }
        var delivered: Int
        var expected: Int
        var lost: Int
        var growth_kb: Int
        var out_of_order: Int
        var windows: [Window]
    }

    @Test func aRunAtTheFastestRateEndsNormallyWithNothingLostAndFlatMemory() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let block = run.block("soak")
        #expect(block.status == 0, "bench soak's own goals (0 lost, < 1 MB growth, flat CPU): \(block.stdout) \(block.stderr)")
        let json = try #require(block.stdout.first { $0.hasPrefix("{") })
        let report = try JSONDecoder().decode(Report.self, from: Data(json.utf8))
        #expect(report.lost == 0)
        #expect(report.out_of_order == 0)
        #expect(report.growth_kb < 1024)
        // Emulated, one virtual CPU polling sysfs: ~120 samples/s on a loaded machine, not 500.
        #expect(report.delivered >= 20 * Self.seconds, "\(report.delivered) samples in \(Self.seconds) s")
        #expect(report.windows.count == Self.seconds / 15)
        #expect(report.windows.allSatisfy { $0.delivered > 0 }, "every window delivers: \(report.windows.map(\.delivered))")
    }
}

/// The same through the kernel's input core and its HID sensor drivers, shortened: device motion from
/// a uinput motion node at 100 Hz (`evdev-soak.sh`: `--source evdev:NODE`) and from a uhid sensor hub's
/// IIO buffers at 50 Hz (`hid-soak.sh`: hid-sensor-hub, `--source iio`), each through a
/// `CMMotionManager` by `coremotion bench soak`; by hand `… evdev-soak.sh 3600 60` or `… hid-soak.sh
/// 3600 60` for the hour.
@Suite(.serialized, .enabled(if: VMRig.enabled, VMRig.skipComment))
struct DeviceSoakTests {
    static let seconds = 30
    static let evdev = VMRig.Shared("evdev-soak.sh", [String(seconds), "10"])
    static let hid = VMRig.Shared("hid-soak.sh", [String(seconds), "10"])

    /// bench soak's own goals met, nothing lost or out of order, at least `floor` updates a second (the
    /// emulated device sends at its rate whatever the guest's load, but a starved guest falls behind),
    /// every window delivering, and the emulated device still alive (`aliveKey`) at the end.
    func check(_ run: ScenarioRun, floor: Int, aliveKey: String) throws {
        let block = run.block("soak")
        #expect(block.status == 0, "bench soak's own goals (0 lost, < 1 MB growth, flat CPU): \(block.stdout) \(block.stderr)")
        let json = try #require(block.stdout.first { $0.hasPrefix("{") })
        let report = try JSONDecoder().decode(SoakTests.Report.self, from: Data(json.utf8))
        #expect(report.lost == 0 && report.out_of_order == 0)
        #expect(report.growth_kb < 1024)
        #expect(report.delivered >= floor * Self.seconds, "\(report.delivered) updates in \(Self.seconds) s")
        #expect(report.windows.count == Self.seconds / 10)
        #expect(report.windows.allSatisfy { $0.delivered > 0 }, "every window delivers: \(report.windows.map(\.delivered))")
        #expect(run.values[aliveKey] == "yes", "the emulated device ran to the end")
    }

    @Test func deviceMotionFromAnInputNodeEndsNormallyWithNothingLostAndFlatMemory() async throws {
        let run = await Self.evdev.value
        guard run.ranToEnd() else { return }
        try check(run, floor: 50, aliveKey: "node_alive")
    }

    @Test func deviceMotionFromAHIDSensorHubEndsNormallyWithNothingLostAndFlatMemory() async throws {
        let run = await Self.hid.value
        guard run.ranToEnd() else { return }
        try check(run, floor: 20, aliveKey: "hub_alive")
    }
}
