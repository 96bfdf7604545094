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

    /// The ST poses (counts written into both copies' registers): accelerometer then gyroscope.
    static let stPoses: [String: (accel: [Double], gyro: [Double])] = [
        "lsm6ds3": ([3000, -5000, 15000], [100, -200, -1234]),
        "lsm9ds1": ([-2000, 7000, -15000], [-300, 250, 2345]),
        "bmi160": ([1000, -4000, 16000], [-150, 300, 2000]),
    ]
    /// The user-space drivers' sensitivities at their default ranges, those the kernel's drivers
    /// assume (datasheets): the ST chips' reset ranges (±2 g: 0.061 mg; ±250/245 °/s: 8.75 m°/s per
    /// count); the BMI160's ±2 g (16384 counts per g) and ±2000 °/s (16.4 counts per °/s).
    static func userScales(_ chip: String) -> (gPerCount: Double, radiansPerCount: Double) {
        chip == "bmi160" ? (1 / 16384, Double.pi / 180 / 16.4) : (0.000061, 0.00875 * Double.pi / 180)
    }

    /// The LSM6DS3 and the LSM9DS1's accelerometer and gyroscope through the kernel's st_lsm6dsx
    /// (`iio:`) and through `LSM6DSDriver` (`i2c:`), the BMI160 through the kernel's bmi160 and
    /// `BMI160Driver`: within one count, each decoded with its own scale, and the same Core Motion
    /// values within the kernel's scale rounding (bmi160's 0.000598 m/s² and 0.001065 rad/s per count
    /// are truncated: 0.1 %) and one count.
    @Test(arguments: ["lsm6ds3", "lsm9ds1", "bmi160"])
    func stChipsAgreeWithTheKernelsDriver(chip: String) async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        #expect(run.values["\(chip).probed"] == "yes", "\(run.values["\(chip).reason"] ?? "")")
        let pose = try #require(Self.stPoses[chip])
        for (i, axis) in ["x", "y", "z"].enumerated() {
            #expect(run.values["\(chip).in_accel_\(axis)_raw"] == String(Int(pose.accel[i])), "the kernel reads the counts written")
            #expect(run.values["\(chip).in_anglvel_\(axis)_raw"] == String(Int(pose.gyro[i])))
        }
        let iio = run.block("\(chip).iio"), user = run.block("\(chip).i2c")
        #expect(iio.status == 0, "\(iio.stderr)")
        #expect(user.status == 0, "\(user.stderr)")
        let accelScale = try #require(run.double("\(chip).in_accel_scale")) / standardGravity
        let gyroScale = try #require(run.double("\(chip).in_anglvel_scale"))
        let iioAccel = iio.rows("accelerometer"), userAccel = user.rows("accelerometer")
        let iioGyro = iio.rows("gyro"), userGyro = user.rows("gyro")
        let (gPerCount, radiansPerCount) = Self.userScales(chip)
        // Each sysfs read of st_lsm6dsx powers the sensor up (~0.9 s under emulation): few iio rows. The
        // scenario times six such reads and gives the kernel's stream 3 s plus two rounds of them.
        #expect(iioAccel.count >= 1 && iioGyro.count >= 1 && userAccel.count >= 3 && userGyro.count >= 3,
                "\(iioAccel.count), \(iioGyro.count), \(userAccel.count), \(userGyro.count) rows; six kernel reads took \(run.values["\(chip).six_reads_s"] ?? "?") s")
        func components(_ r: Row) -> [Double] { [r.x, r.y, r.z] }
        for (i, counts) in pose.accel.enumerated() {
            for r in iioAccel { #expect(abs(components(r)[i] / accelScale + counts) <= 1, "iio \(chip) accel axis \(i): \(components(r)[i]) g") }
            for r in userAccel {
                #expect(abs(components(r)[i] / gPerCount + counts) <= 1, "i2c \(chip) accel axis \(i): \(components(r)[i]) g")
                #expect(abs(components(r)[i] - -counts * gPerCount) < 1e-8, "i2c is the datasheet's value, sign-flipped")
            }
        }
        for (i, counts) in pose.gyro.enumerated() {
            for r in iioGyro { #expect(abs(components(r)[i] / gyroScale - counts) <= 1, "iio \(chip) gyro axis \(i): \(components(r)[i]) rad/s") }
            for r in userGyro { #expect(abs(components(r)[i] / radiansPerCount - counts) <= 1, "i2c \(chip) gyro axis \(i): \(components(r)[i]) rad/s") }
        }
        // The same Core Motion values both ways: within one count of each sensor.
        if let a = iioAccel.first, let b = userAccel.first, let g = iioGyro.first, let h = userGyro.first {
            for i in 0..<3 {
                #expect(abs(components(a)[i] - components(b)[i]) <= abs(pose.accel[i]) * 0.001 * gPerCount + gPerCount, "accel axis \(i): iio \(components(a)[i]), i2c \(components(b)[i])")
                #expect(abs(components(g)[i] - components(h)[i]) <= abs(pose.gyro[i]) * 0.001 * radiansPerCount + radiansPerCount, "gyro axis \(i): iio \(components(g)[i]), i2c \(components(h)[i])")
            }
        }
    }

    @Test func theSTDriverConfiguredTheChips() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        // 20 Hz (--interval 0.05): the LSM6DS3's 26 Hz (ODR 0010), ±2 g, ±250 °/s (FS_G 00).
        #expect(run.values["lsm6ds3.user.CTRL1_XL"] == "0x20")
        #expect(run.values["lsm6ds3.user.CTRL2_G"] == "0x20")
        #expect(run.values["lsm6ds3.user.CTRL3_C"] == "0x44", "block data update, auto-increment")
        // The LSM9DS1's 59.5 Hz (ODR_G 010), ±245 °/s (FS_G 00); the accelerometer follows the gyroscope.
        #expect(run.values["lsm9ds1.user.CTRL_REG1_G"] == "0x40")
        #expect(run.values["lsm9ds1.user.CTRL_REG6_XL"] == "0x40")
        #expect(run.values["lsm9ds1.user.CTRL_REG8"] == "0x44")
        // The BMI160 at 25 Hz (ODR 0110) with the normal filters, ±2 g, ±2000 °/s; the last command
        // the gyroscope's normal mode.
        #expect(run.values["bmi160.user.ACC_CONF"] == "0x26")
        #expect(run.values["bmi160.user.ACC_RANGE"] == "0x03")
        #expect(run.values["bmi160.user.GYR_CONF"] == "0x26")
        #expect(run.values["bmi160.user.GYR_RANGE"] == "0x00")
        #expect(run.values["bmi160.user.CMD"] == "0x15")
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
        #expect(found.stdout.filter { $0.contains("answers WHO_AM_I") }.count == 4, "\(found.stdout)")
        #expect(found.stdout.contains("  0x1c answers WHO_AM_I (0x0f) 0x3d: the magnetometer of an LSM9DS1 (or an LIS3MDL), in its own axes (--source i2c:\(node):0x1c)"), "\(found.stdout)")
        // The ST chips at their own addresses, told apart from the MPU by register and value (the
        // LSM9DS1's WHO_AM_I, 0x0F, holds 0x68 as an MPU-6050's 0x75 does).
        #expect(found.stdout.contains("  0x6a answers WHO_AM_I (0x0f) 0x68: the accelerometer and gyroscope of an LSM9DS1 (Sense HAT); its magnetometer at 0x1c is read with them (--source i2c:\(node):0x6a)"), "\(found.stdout)")
        #expect(found.stdout.contains("  0x6b answers WHO_AM_I (0x0f) 0x69: an LSM6DS3 (or LSM6DS3H): accelerometer and gyroscope (--source i2c:\(node):0x6b)"), "\(found.stdout)")
        #expect(run.block("sensors.mpu6500").stdout.contains("  0x69 answers WHO_AM_I 0x70: an MPU-6500, no magnetometer (--source i2c:\(node):0x69)"))
        #expect(run.block("sensors.other").stdout.contains("  0x69 answers WHO_AM_I 0x12: not an MPU-6050/6500/9250 (they answer 0x68, 0x70, 0x71 or 0x73), an ICM-20948 (its WHO_AM_I, 0x00 at bank 0, is 0xea) nor a BMI160 (its CHIP_ID, 0x00, is 0xd1)"))
        let denied = run.block("sensors.denied")
        #expect(denied.stdout.contains("  no permission on \(node): add yourself to the i2c group (sudo usermod -aG i2c $USER, then log in again) or run as root"), "\(denied.stdout)")
        let emptyNode = try #require(run.values["empty.node"])
        let empty = run.block("sensors.empty")
        #expect(empty.stdout.contains("i2c:\(emptyNode)  I2C bus (SMBus stub driver)"))
        #expect(empty.stdout.contains("  no chip answers at 0x1c, 0x1e, 0x28, 0x29, 0x68, 0x69, 0x6a or 0x6b: check the wiring (SDA, SCL, 3.3 V, GND) and the address pin (MPU-6050/6500/9250, ICM-20948 and BMI160 answer at 0x68, or 0x69 with AD0/SDO high; LSM6DSx and the LSM9DS1's accelerometer and gyroscope at 0x6a or 0x6b; the LSM9DS1's magnetometer at 0x1c or 0x1e; a BNO055 at 0x28, or 0x29 with COM3 high)"), "\(empty.stdout)")
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
        #expect(empty.errorLines.first?.contains("no chip answers at 0x1c, 0x1e, 0x28, 0x29, 0x68, 0x69, 0x6a or 0x6b") == true, "\(empty.stderr)")
        // `i2c` alone skips the address the kernel holds and takes the free chip; `i2c:BUS` too.
        let first = run.block("first.i2c")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.rows().count >= 5)
        let mpu6500 = run.block("mpu6500.i2c")
        #expect(mpu6500.status == 0, "\(mpu6500.stderr)")
        #expect(mpu6500.rows("accelerometer").allSatisfy { abs($0.x + 3000 / Self.countsPerG) < 1e-8 })
    }

    /// The magnetometers: the counts written (AK8963 HX, HY, HZ; LSM9DS1 OUT_X, OUT_Y, OUT_Z) and the
    /// AK8963's fuse-ROM adjustments `(ASA − 128) · 0.5 / 128 + 1` for ASA 0xb0, 0xb4, 0xa5.
    static let akCounts: [Double] = [1500, -2600, 4100], akAdjustment = [1.1875, 1.203125, 1.14453125]
    static let stMagnetCounts: [Double] = [-1200, 2100, -3300]

    /// The AK8963 behind the user-space MPU-9250's bypass (`i2c:`, `AK8963Driver`: 16-bit, 0.15 µT per
    /// count, the MPU's axes) against the kernel's ak8975 on a copy of its registers (`iio:`: 14-bit,
    /// 0.6 µT per count, the AK8963's own axes): each divided by its own scale reads the counts written
    /// within one count, the MPU's x being the AK8963's y, its y the x, its z the −z. The kernel's
    /// per-axis scale checks the ASA adjustment: `(ASA + 128) · 6000 / 256` µgauss per count is 0.6 µT
    /// times the same factor.
    @Test func theAK8963ReadsAsTheKernelsAK8975() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        #expect(run.values["ak8963.probed"] == "yes", "\(run.values["ak8963.reason"] ?? "")")
        let axes = ["x", "y", "z"]
        var kernelScale: [Double] = []   // µT per count
        for (i, a) in axes.enumerated() {
            #expect(run.values["ak8963.in_magn_\(a)_raw"] == String(Int(Self.akCounts[i])), "the kernel reads the counts written")
            let scale = try #require(run.double("ak8963.in_magn_\(a)_scale")) * 100
            #expect(abs(scale - 0.6 * Self.akAdjustment[i]) < 0.6 * 0.001, "axis \(a): \(scale) µT per count")
            kernelScale.append(scale)
        }
        let iio = run.block("ak8963.iio"), user = run.block("ak8963.i2c")
        #expect(iio.status == 0, "\(iio.stderr)")
        #expect(user.status == 0, "\(user.stderr)")
        let iioRows = iio.rows(), userRows = user.rows("magnetometer")
        #expect(iioRows.count >= 3 && userRows.count >= 10, "\(iioRows.count), \(userRows.count) rows")
        #expect(user.rows("accelerometer").count >= 10 && user.rows("gyro").count >= 10, "the MPU's own sensors too")
        func components(_ r: Row) -> [Double] { [r.x, r.y, r.z] }
        for r in iioRows {
            for i in 0..<3 { #expect(abs(components(r)[i] / kernelScale[i] - Self.akCounts[i]) <= 1, "iio axis \(i): \(components(r)[i]) µT") }
        }
        // MPU axis ← AK axis and sign.
        let map: [(ak: Int, sign: Double)] = [(1, 1), (0, 1), (2, -1)]
        for r in userRows {
            for (i, m) in map.enumerated() {
                let counts = components(r)[i] * m.sign / (0.15 * Self.akAdjustment[m.ak])
                #expect(abs(counts - Self.akCounts[m.ak]) <= 1, "i2c axis \(i): \(components(r)[i]) µT")
            }
        }
        if let a = iioRows.first, let b = userRows.first {
            for (i, m) in map.enumerated() {
                #expect(abs(components(a)[m.ak] / kernelScale[m.ak] - components(b)[i] * m.sign / (0.15 * Self.akAdjustment[m.ak])) <= 1,
                        "the same counts both ways")
            }
        }
        #expect(run.values["ak8963.user.CNTL1"] == "0x16", "16-bit continuous mode 2")
        #expect(run.values["mpu9250.user.INT_PIN_CFG"] == "0x02", "BYPASS_EN")
        #expect(run.values["mpu9250.user.USER_CTRL"] == "0x00", "the MPU's I2C master off")
        let node = try #require(run.values["node"])
        let sensors = run.block("sensors.mpu9250")
        #expect(sensors.stdout.contains("  0x69 answers WHO_AM_I 0x71: an MPU-9250; AK8963 at 0x0c after bypass (--source i2c:\(node):0x69)"), "\(sensors.stdout)")
    }

    /// The LSM9DS1's magnetometer read with the accelerometer and gyroscope at 0x6a (`i2c:`,
    /// `LSM9DS1MagnetometerDriver`: 0.014 µT per count, x turned into the accelerometer's) against the
    /// kernel's st_magn `lsm9ds1_magn` (`iio:`, its own scale and axes): the counts written within one
    /// count each way.
    @Test func theLSM9DS1MagnetometerReadsAsTheKernelsStMagn() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        #expect(run.values["lsm9ds1m.probed"] == "yes", "\(run.values["lsm9ds1m.reason"] ?? "")")
        var kernelScale: [Double] = []
        for (i, a) in ["x", "y", "z"].enumerated() {
            #expect(run.values["lsm9ds1m.in_magn_\(a)_raw"] == String(Int(Self.stMagnetCounts[i])))
            kernelScale.append(try #require(run.double("lsm9ds1m.in_magn_\(a)_scale")) * 100)
        }
        let iio = run.block("lsm9ds1m.iio"), user = run.block("lsm9ds1m.i2c")
        #expect(iio.status == 0, "\(iio.stderr)")
        #expect(user.status == 0, "\(user.stderr)")
        let iioRows = iio.rows(), userRows = user.rows("magnetometer")
        #expect(iioRows.count >= 1 && userRows.count >= 10, "\(iioRows.count), \(userRows.count) rows")
        #expect(user.rows("accelerometer").count >= 10, "read with the accelerometer and gyroscope")
        func components(_ r: Row) -> [Double] { [r.x, r.y, r.z] }
        for r in iioRows {
            for i in 0..<3 { #expect(abs(components(r)[i] / kernelScale[i] - Self.stMagnetCounts[i]) <= 1, "iio axis \(i): \(components(r)[i]) µT") }
        }
        let signs: [Double] = [-1, 1, 1]
        for r in userRows {
            for i in 0..<3 {
                #expect(abs(components(r)[i] * signs[i] / 0.014 - Self.stMagnetCounts[i]) <= 1, "i2c axis \(i): \(components(r)[i]) µT")
            }
        }
        #expect(run.values["lsm9ds1m.user.CTRL_REG1_M"] == "0x54", "high performance, 20 Hz (--interval 0.05)")
        #expect(run.values["lsm9ds1m.user.CTRL_REG5_M"] == "0x40", "block data update")
    }
}
