import Foundation
import Testing

/// The real `inv_mpu6050` driver of Debian's kernel on `i2c-stub`, read through `coremotion stream`
/// (CMMotionManager): `scripts/vm/scenarios/i2c-mpu6050.sh`, one boot for every test here.
///
/// Core Motion's convention: a device lying face up at rest reads (0, 0, −1) g, upright in portrait
/// (0, −1, 0) g; turning counter-clockwise seen from above, rotation rate z > 0. The chip measures
/// specific force: face up its Z register holds +1 g (+16384 at ±2 g).
@Suite(.serialized, .enabled(if: VMRig.enabled, VMRig.skipComment))
struct MPU6050Tests {
    static let boot = VMRig.Shared("i2c-mpu6050.sh")

    /// g per count of the accelerometer, as the driver reports its scale.
    func accelScale(_ run: ScenarioRun) -> Double { (run.double("in_accel_scale") ?? .nan) / standardGravity }

    @Test func theDriverProbesOnTheStubAndReadsTheRegistersWritten() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        #expect(run.values["probed"] == "yes")
        #expect(run.values["in_accel_scale"] == "0.000598", "±2 g at probe")
        #expect(run.values["sampling_frequency_available"] == "10 20 50 100 200 500")
        #expect(run.values["faceup.in_accel_z_raw"] == "16384")
        #expect(run.values["upright.in_accel_y_raw"] == "16384")
        #expect(run.values["spin.in_anglvel_z_raw"] == run.values["spin.register"])
    }

    @Test func faceUpReadsMinusOneGOnZAndNoRotation() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let accel = run.block("faceup.accel"), gyro = run.block("faceup.gyro")
        #expect(accel.status == 0, "\(accel.stderr)")
        #expect(gyro.status == 0, "\(gyro.stderr)")
        #expect(accel.stdout.prefix(2) == ["timestamp,x,y,z", "# sensor=accelerometer"])
        let rows = accel.rows()
        #expect(rows.count >= 5, "about 60 rows at 20 Hz in 3 s (fewer under load), got \(rows.count)")
        let expected = -16384 * accelScale(run)
        for r in rows {
            #expect(abs(r.x) < 1e-9 && abs(r.y) < 1e-9)
            #expect(abs(r.z - expected) < 1e-4, "face up: z = \(r.z) g, Core Motion's is \(expected) g")
        }
        let rates = gyro.rows()
        #expect(rates.count >= 5)
        #expect(rates.allSatisfy { $0.x == 0 && $0.y == 0 && $0.z == 0 })
    }

    @Test func uprightInPortraitReadsMinusOneGOnY() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let block = run.block("upright.raw")
        #expect(block.status == 0, "\(block.stderr)")
        let accel = block.rows("accelerometer"), gyro = block.rows("gyro")
        #expect(accel.count >= 5 && gyro.count >= 5, "\(accel.count) accelerometer and \(gyro.count) gyro rows")
        let expected = -16384 * accelScale(run)
        for r in accel {
            #expect(abs(r.x) < 1e-9 && abs(r.z) < 1e-9)
            #expect(abs(r.y - expected) < 1e-4, "upright: y = \(r.y) g, Core Motion's is \(expected) g")
        }
        #expect(gyro.allSatisfy { $0.z == 0 })
    }

    @Test func spinningAboutZReadsPlusHalfARadianPerSecond() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let block = run.block("spin.raw")
        #expect(block.status == 0, "\(block.stderr)")
        let gyro = block.rows("gyro"), accel = block.rows("accelerometer")
        #expect(gyro.count >= 5 && accel.count >= 5, "\(gyro.count) gyro and \(accel.count) accelerometer rows")
        let register = try #require(run.double("spin.register"))
        let scale = try #require(run.double("in_anglvel_scale"))
        let expected = register * scale
        #expect(abs(expected - 0.5) < 0.001)
        for r in gyro {
            #expect(abs(r.x) < 1e-9 && abs(r.y) < 1e-9)
            #expect(abs(r.z - expected) < 1e-6, "spin: z = \(r.z) rad/s, expected +\(expected)")
        }
        #expect(accel.allSatisfy { abs($0.z + 16384 * accelScale(run)) < 1e-4 }, "still face up while spinning")
    }

    @Test func aRangeChangedByAnotherProcessIsFollowed() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let block = run.block("range.accel")
        #expect(block.status == 0, "\(block.stderr)")
        #expect(run.values["range.in_accel_scale"] == "0.001196")
        let changedAt = try #require(run.double("range.changed_at"))
        let rows = block.rows()
        let before = rows.filter { $0.t < changedAt }, settled = rows.filter { $0.t > changedAt + 2 }
        #expect(before.count >= 5 && settled.count >= 5, "\(before.count) rows before the change, \(settled.count) from 2 s after")
        #expect(before.allSatisfy { abs($0.z + 16384 * accelScale(run)) < 1e-4 }, "±2 g: \(before.map(\.z))")
        let doubled = -16384 * 0.001196 / standardGravity
        #expect(settled.allSatisfy { abs($0.z - doubled) < 1e-4 }, "±4 g: z = \(doubled) g expected, got \(settled.map(\.z))")
        #expect(rows.allSatisfy { abs($0.z + 16384 * accelScale(run)) < 1e-4 || abs($0.z - doubled) < 1e-4 }, "no value between the two")
    }

    @Test func deletingTheDeviceMidStreamKeepsTheRowsAndEndsWithOneError() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let block = run.block("unplug.accel")
        #expect(run.values["unplug.device_gone"] == "yes")
        #expect(block.status == 1, "exit status 1 after the device went away")
        let before = try #require(run.double("unplug.rows_before_delete"))
        let rows = block.rows()
        #expect(before >= 10)
        #expect(Double(rows.count) >= before, "the \(Int(before)) rows written before the delete are kept")
        #expect(rows.allSatisfy { abs($0.z + 16384 * accelScale(run)) < 1e-4 })
        #expect(block.stderr.count == 1, "one line on stderr: \(block.stderr)")
        let line = block.stderr.first ?? ""
        #expect(line.hasPrefix("Error: "))
        #expect(line.contains("iio:device"), "names the device: \(line)")
    }

    @Test func aUserWithoutPermissionGetsOneErrorNamingTheFileAndTheFix() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let block = run.block("denied.accel")
        let file = try #require(run.values["denied.file"])
        #expect(block.status == 1)
        #expect(block.rows().isEmpty)
        // One line in all: no log line saying the same thing before it.
        #expect(block.stderr.count == 1, "one line on stderr: \(block.stderr)")
        let line = block.errorLines.first ?? ""
        #expect(line.hasPrefix("Error: "))
        #expect(line.contains(file), "names \(file): \(line)")
        #expect(line.contains("Permission denied") || line.contains("not authorized"), "\(line)")
        #expect(line.contains("udev") || line.contains("group"), "says the fix: \(line)")
    }
}
