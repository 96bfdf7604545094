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

/// The same through the kernel's input core, shortened: a DualSense-like motion node made through
/// `/dev/uinput` at 100 Hz, read with `--source evdev:NODE` as device motion by `coremotion bench soak`
/// (`scripts/vm/scenarios/evdev-soak.sh`; by hand: `… evdev-soak.sh 3600 60` for the hour).
@Suite(.serialized, .enabled(if: VMRig.enabled, VMRig.skipComment))
struct EvdevSoakTests {
    static let seconds = 30
    static let boot = VMRig.Shared("evdev-soak.sh", [String(seconds), "10"])

    @Test func deviceMotionFromAnInputNodeEndsNormallyWithNothingLostAndFlatMemory() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let block = run.block("soak")
        #expect(block.status == 0, "bench soak's own goals (0 lost, < 1 MB growth, flat CPU): \(block.stdout) \(block.stderr)")
        let json = try #require(block.stdout.first { $0.hasPrefix("{") })
        let report = try JSONDecoder().decode(SoakTests.Report.self, from: Data(json.utf8))
        #expect(report.lost == 0 && report.out_of_order == 0)
        #expect(report.growth_kb < 1024)
        // The node sends 100 frames a second whatever the guest's load; device motion comes one per frame.
        #expect(report.delivered >= 50 * Self.seconds, "\(report.delivered) updates in \(Self.seconds) s")
        #expect(report.windows.count == Self.seconds / 10)
        #expect(report.windows.allSatisfy { $0.delivered > 0 }, "every window delivers: \(report.windows.map(\.delivered))")
        #expect(run.values["node_alive"] == "yes", "the uinput node ran to the end")
    }
}
