import Foundation
import Testing

/// The other I2C motion chip drivers of Debian's kernel on `i2c-stub` (`scripts/vm/scenarios/i2c-chips.sh`,
/// one boot for every test here): which probe, and a face-up pose (and a spin for gyros) read through
/// `coremotion stream --source iio:NAME` (CMMotionManager).
@Suite(.serialized, .enabled(if: VMRig.enabled, VMRig.skipComment))
struct I2CChipTests {
    static let boot = VMRig.Shared("i2c-chips.sh")

    /// The chips that probe on i2c-stub, with the sensors `stream` reads from them.
    static let probing: [(chip: String, block: String, gyro: Bool)] = [
        ("bmi160", "bmi160.raw", true),
        ("lsm6ds3", "lsm6ds3.raw", true),
        ("kxcjk1013", "kxcjk1013.accel", false),
        ("bmc150_accel", "bmc150_accel.accel", false),
        ("lis3dh", "lis3dh.accel", false),
    ]

    @Test func theDriversProbeAndReadTheRegistersWritten() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        for (chip, _, gyro) in Self.probing {
            #expect(run.values["\(chip).probed"] == "yes", "\(chip) probes on i2c-stub")
            #expect(run.values["\(chip).faceup.in_accel_z_raw"] == run.values["\(chip).faceup.counts"],
                    "\(chip): the driver reads the +1 g written into its Z register")
            if gyro {
                let raw = try #require(run.double("\(chip).spin.in_anglvel_z_raw"))
                let scale = try #require(run.double("\(chip).in_anglvel_scale"))
                #expect(abs(raw * scale - 0.5) < 0.001, "\(chip): +0.5 rad/s in the gyro's Z register")
            }
        }
    }

    /// MMA8452Q's probe resets the chip and waits for CTRL_REG2's reset bit to clear; i2c-stub's memory
    /// keeps it set, so the probe times out. (Recorded so that a kernel that changes this is noticed.)
    @Test func mma8452DoesNotProbeOnTheStub() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        #expect(run.values["mma8452.probed"] == "no")
        #expect(run.values["mma8452.reason"]?.contains("-110") == true, "\(run.values["mma8452.reason"] ?? "")")
    }

    @Test(arguments: probing.map(\.chip))
    func faceUpReadsMinusOneGAndGyrosPlusHalfARadianPerSecond(chip: String) async throws {
        let run = await Self.boot.value
        guard run.ranToEnd(), run.values["\(chip).probed"] == "yes" else { return }
        let entry = try #require(Self.probing.first { $0.chip == chip })
        let block = run.block(entry.block)
        // A buffered device whose driver set up no trigger (no interrupt line: i2c-stub has none, nor do
        // many boards wired without one) never fills its buffer: the source polls sysfs instead.
        try check(block, chip: chip, gyro: entry.gyro, run: run)
    }

    private func check(_ block: CommandBlock, chip: String, gyro: Bool, run: ScenarioRun) throws {
        #expect(block.status == 0, "\(chip): \(block.stderr)")
        let counts = try #require(run.double("\(chip).faceup.counts"))
        let scale = try #require(run.double("\(chip).in_accel_scale"))
        let expected = -counts * scale / standardGravity
        let accel = block.rows(gyro ? "accelerometer" : nil)
        #expect(accel.count >= 5, "\(chip): \(accel.count) accelerometer rows in 3 s")
        for r in accel {
            #expect(abs(r.x) < 1e-9 && abs(r.y) < 1e-9)
            #expect(abs(r.z - expected) < 1e-3, "\(chip) face up: z = \(r.z) g, Core Motion's is \(expected) g")
        }
        if gyro {
            let raw = try #require(run.double("\(chip).spin.in_anglvel_z_raw"))
            let gscale = try #require(run.double("\(chip).in_anglvel_scale"))
            let rates = block.rows("gyro")
            #expect(rates.count >= 5, "\(chip): \(rates.count) gyro rows in 3 s")
            for r in rates {
                #expect(abs(r.z - raw * gscale) < 1e-5, "\(chip) spin: z = \(r.z) rad/s, expected +\(raw * gscale)")
            }
        }
    }
}
