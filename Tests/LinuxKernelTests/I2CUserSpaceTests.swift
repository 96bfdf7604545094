import Foundation
import Testing

/// The user-space MPU driver (`--source i2c:…`, through `/dev/i2c-N`) checked against the kernel's own
/// `inv_mpu6050` (`--source iio`): `scripts/vm/scenarios/i2c-userspace.sh`, one boot for every test
/// here. `i2c-stub` holds two chips with the same data registers: 0x68 bound to the kernel driver, 0x69
/// read from user space.
///
/// Counts: the kernel's scales are its own (truncated) constants (`in_accel_scale` 0.000598 m/s² at
/// ±2 g, where the datasheet's 16384 counts per g give 0.00059855); the user-space driver uses the
/// datasheet's sensitivities. So the two agree *in counts* — each value divided by its own path's
/// scale — within one count, and each is Core Motion's value within its own rounding.
@Suite(.serialized, .enabled(if: VMRig.enabled, VMRig.skipComment))
struct I2CUserSpaceTests {
    static let boot = VMRig.Shared("i2c-userspace.sh")

    /// The user-space driver's sensitivities at its default ranges (±2 g, ±2000 °/s; datasheet).
    static let countsPerG = 16384.0, countsPerRadian = 16.4 * 180 / Double.pi

    static let poses: [(name: String, accel: [Double], gyro: [Double])] = [
        ("faceup", [0, 0, 16384], [0, 0, 470]),
        ("upright", [0, 16384, 0], [0, 0, 0]),
        ("tilted", [3000, -5000, 15000], [100, -200, -1234]),
    ]

    @Test func theKernelDriverReadsTheRegistersWritten() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        #expect(run.values["probed"] == "yes")
        #expect(run.values["in_accel_scale"] == "0.000598")
        for pose in Self.poses {
            #expect(run.values["\(pose.name).in_accel_z_raw"] == String(Int(pose.accel[2])))
            #expect(run.values["\(pose.name).in_anglvel_z_raw"] == String(Int(pose.gyro[2])))
        }
    }

    @Test(arguments: poses.map(\.name))
    func bothWaysAgreeWithinOneCountAndGiveCoreMotionsValues(pose name: String) async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let pose = try #require(Self.poses.first { $0.name == name })
        let iio = run.block("\(name).iio"), user = run.block("\(name).i2c")
        #expect(iio.status == 0, "\(iio.stderr)")
        #expect(user.status == 0, "\(user.stderr)")
        let accelScale = try #require(run.double("in_accel_scale")) / standardGravity   // g per count, kernel
        let gyroScale = try #require(run.double("in_anglvel_scale"))                     // rad/s per count, kernel
        let iioAccel = iio.rows("accelerometer"), userAccel = user.rows("accelerometer")
        let iioGyro = iio.rows("gyro"), userGyro = user.rows("gyro")
        #expect(iioAccel.count >= 5 && userAccel.count >= 5 && iioGyro.count >= 5 && userGyro.count >= 5,
                "\(iioAccel.count), \(userAccel.count), \(iioGyro.count), \(userGyro.count) rows")
        func components(_ r: Row) -> [Double] { [r.x, r.y, r.z] }
        // Accelerometer: Core Motion's is minus the specific force the chip reads.
        for (i, counts) in pose.accel.enumerated() {
            for r in iioAccel { #expect(abs(components(r)[i] / accelScale + counts) <= 1, "iio \(name) axis \(i): \(components(r)[i]) g") }
            for r in userAccel { #expect(abs(components(r)[i] * Self.countsPerG + counts) <= 1, "i2c \(name) axis \(i): \(components(r)[i]) g") }
            if let a = iioAccel.first, let b = userAccel.first {
                // The same acceleration within the kernel's scale rounding (0.1 %) and one count.
                #expect(abs(components(a)[i] - components(b)[i]) <= abs(counts) * 0.001 / Self.countsPerG + 1 / Self.countsPerG)
                #expect(abs(components(b)[i] - -counts / Self.countsPerG) < 1e-8, "i2c is the datasheet's value")
            }
        }
        for (i, counts) in pose.gyro.enumerated() {
            for r in iioGyro { #expect(abs(components(r)[i] / gyroScale - counts) <= 1, "iio \(name) gyro axis \(i): \(components(r)[i]) rad/s") }
            for r in userGyro { #expect(abs(components(r)[i] * Self.countsPerRadian - counts) <= 1, "i2c \(name) gyro axis \(i): \(components(r)[i]) rad/s") }
        }
    }

    @Test func faceUpIsMinusOneGAndTurningLeftIsPositive() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let user = run.block("faceup.i2c")
        for r in user.rows("accelerometer") { #expect(r.x == 0 && r.y == 0 && r.z == -1) }
        for r in user.rows("gyro") { #expect(abs(r.z - 470 / Self.countsPerRadian) < 1e-8 && r.z > 0.49) }
        for r in run.block("upright.i2c").rows("accelerometer") { #expect(r.x == 0 && r.y == -1 && r.z == 0) }
    }

    @Test func theDriverConfiguredTheChip() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        #expect(run.values["user.PWR_MGMT_1"] == "0x01", "awake, PLL clock")
        #expect(run.values["user.SMPLRT_DIV"] == "0x31", "20 Hz (--interval 0.05) = 1000 / (1 + 49)")
        #expect(run.values["user.GYRO_CONFIG"] == "0x18", "±2000 °/s")
        #expect(run.values["user.ACCEL_CONFIG"] == "0x00", "±2 g")
        #expect(run.values["user.SMPLRT_DIV.50hz"] == "0x13", "50 Hz = 1000 / (1 + 19)")
        #expect(run.values["user.ACCEL_CONFIG2"] == "0x05", "the MPU-6500's accelerometer filter at 20 Hz")
        let fast = run.block("tilted.i2c50hz")
        #expect(fast.status == 0, "\(fast.stderr)")
        #expect(fast.rows().count >= 10, "\(fast.rows().count) rows in 1 s at 50 Hz")
    }

    @Test func sensorsExplainsWhatIsOnTheBus() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let node = try #require(run.values["node"]), iio = try #require(run.values["iio"])
        let found = run.block("sensors.found")
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout.contains("i2c:\(node)  I2C bus (SMBus stub driver)"), "\(found.stdout)")
        #expect(found.stdout.contains("  0x68 is bound to the kernel driver inv-mpu6050-i2c (mpu6050, \(iio)): use --source iio"), "\(found.stdout)")
        #expect(found.stdout.contains("  0x69 answers WHO_AM_I 0x68: an MPU-6050 (or MPU-6000, MPU-9150), no magnetometer read (--source i2c:\(node):0x69)"), "\(found.stdout)")
        // inv_mpu6050's bypass multiplexer channel (`i2c-0-mux`) reaches the same chips: listed once.
        #expect(!found.stdout.contains { $0.contains("-mux (chan_id") }, "\(found.stdout)")
        #expect(found.stdout.filter { $0.contains("answers WHO_AM_I") }.count == 1, "\(found.stdout)")
        #expect(run.block("sensors.mpu6500").stdout.contains("  0x69 answers WHO_AM_I 0x70: an MPU-6500, no magnetometer (--source i2c:\(node):0x69)"))
        #expect(run.block("sensors.other").stdout.contains("  0x69 answers WHO_AM_I 0x12: not an MPU-6050/6500/9250 (they answer 0x68, 0x70, 0x71 or 0x73)"))
        let denied = run.block("sensors.denied")
        #expect(denied.stdout.contains("  no permission on \(node): add yourself to the i2c group (sudo usermod -aG i2c $USER, then log in again) or run as root"), "\(denied.stdout)")
        let emptyNode = try #require(run.values["empty.node"])
        let empty = run.block("sensors.empty")
        #expect(empty.stdout.contains("i2c:\(emptyNode)  I2C bus (SMBus stub driver)"))
        #expect(empty.stdout.contains("  no chip answers at 0x68 or 0x69: check the wiring (SDA, SCL, 3.3 V, GND) and the AD0 pin (MPU-6050/6500/9250 answer at 0x68, or 0x69 with AD0 high)"), "\(empty.stdout)")
    }

    @Test func sourcesThatCannotStartSayWhy() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let node = try #require(run.values["node"])
        let busy = run.block("busy.i2c")
        #expect(busy.status == 1)
        #expect(busy.errorLines.first?.contains("0x68 is bound to the kernel driver inv-mpu6050-i2c") == true, "\(busy.stderr)")
        #expect(busy.errorLines.first?.contains("use --source iio") == true)
        let other = run.block("other.i2c")
        #expect(other.status == 1)
        #expect(other.errorLines.first?.contains("\(node): 0x69 answers WHO_AM_I 0x12") == true, "\(other.stderr)")
        let denied = run.block("denied.i2c")
        #expect(denied.status == 1)
        #expect(denied.errorLines == ["Error: \(node): no permission on \(node): add yourself to the i2c group (sudo usermod -aG i2c $USER, then log in again) or run as root"], "\(denied.stderr)")
        let empty = run.block("empty.i2c")
        #expect(empty.status == 1)
        #expect(empty.errorLines.first?.contains("no chip answers at 0x68 or 0x69") == true, "\(empty.stderr)")
        // `i2c` alone skips the address the kernel holds and takes the free chip; `i2c:BUS` too.
        let first = run.block("first.i2c")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.rows().count >= 5)
        let mpu6500 = run.block("mpu6500.i2c")
        #expect(mpu6500.status == 0, "\(mpu6500.stderr)")
        #expect(mpu6500.rows("accelerometer").allSatisfy { abs($0.x + 3000 / Self.countsPerG) < 1e-8 })
    }
}
