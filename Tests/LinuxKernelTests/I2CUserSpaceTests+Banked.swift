import Foundation
import Testing

/// The ICM-20948 and the BNO055, which Debian's kernel does not drive, through a real `/dev/i2c-N`:
/// the last part of `scripts/vm/scenarios/i2c-userspace.sh` reloads `i2c-stub` with its bank
/// parameters (the ICM-20948's `REG_BANK_SEL` 0x7F at 0x68, the BNO055's `PAGE_ID` 0x07 at 0x28),
/// writes known poses into the chips' data registers in the chips' own units, and reads them with
/// `coremotion`. The expected values are worked out here from the datasheets' scales, not from the
/// drivers; the registers each driver wrote are read back bank by bank from the kernel's memory.
extension I2CUserSpaceTests {
    /// ICM-20948 at ±2 g and ±2000 °/s (the driver's defaults): 16384 counts per g, 16.4 per °/s; the
    /// AK09916 0.15 µT per count.
    static let icmCountsPerRadian = 16.4 * 180 / Double.pi

    @Test func theICM20948ReadsItsBankedRegistersThroughDevI2C() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let node = try #require(run.values["banked.node"])
        let faceUp = run.block("icm.faceup")
        #expect(faceUp.status == 0, "\(faceUp.stderr)")
        let accel = faceUp.rows("accelerometer"), gyro = faceUp.rows("gyro"), field = faceUp.rows("magnetometer")
        // Few rows: the source starts slowly under emulation (measured 17, 13 and 9 in 2 s at 20 Hz; the scenario
        // streams 4 s since CI, loaded, gave too few in 2).
        #expect(accel.count >= 3 && gyro.count >= 1 && field.count >= 1, "\(accel.count), \(gyro.count), \(field.count) rows")
        // Face up: +1 g of specific force on the chip's z reads z = −1 g; 470 counts about z, counter-clockwise, positive.
        for r in accel { #expect(r.x == 0 && r.y == 0 && r.z == -1, "\(r)") }
        for r in gyro { #expect(r.x == 0 && r.y == 0 && abs(r.z - 470 / Self.icmCountsPerRadian) < 1e-8 && r.z > 0.49, "\(r)") }
        // The AK09916's HX 200, HY −100, HZ −300 in the accelerometer's axes (x the same, y and z
        // opposite: the datasheet's orientation figure), 0.15 µT each, not negated.
        for r in field { #expect(abs(r.x - 30) < 1e-9 && abs(r.y - 15) < 1e-9 && abs(r.z - 45) < 1e-9, "\(r)") }
        let upright = run.block("icm.upright")
        #expect(upright.status == 0, "\(upright.stderr)")
        #expect(upright.rows().count >= 1, "\(upright.rows().count) rows")
        for r in upright.rows() { #expect(r.x == 0 && r.y == -1 && r.z == 0, "portrait: \(r)") }

        // What the driver wrote, in the bank it meant (20 Hz for --interval 0.05): bank 0 kept
        // WHO_AM_I while bank 2's register 0x00 took the gyroscope's divider.
        let expected: [String: String] = [
            "icm.bank0.0x00": "0xea", "icm.bank0.0x03": "0x20", "icm.bank0.0x06": "0x01", "icm.bank0.0x07": "0x00",
            // GYRO_SMPLRT_DIV 1100 / 20 − 1 = 54; GYRO_CONFIG_1 filter 6, ±2000 °/s, on; ACCEL_SMPLRT_DIV
            // 1125 / 20 − 1 = 55; ACCEL_CONFIG filter 6, ±2 g, on.
            "icm.bank2.0x00": "0x36", "icm.bank2.0x01": "0x37", "icm.bank2.0x10": "0x00", "icm.bank2.0x11": "0x37", "icm.bank2.0x14": "0x31",
            // I2C_MST_CTRL 345.6 kHz; slave 0 reads 9 bytes from the AK09916's ST1; its last write CNTL2 0x08.
            "icm.bank3.0x01": "0x07", "icm.bank3.0x03": "0x8c", "icm.bank3.0x04": "0x10", "icm.bank3.0x05": "0x89", "icm.bank3.0x06": "0x08",
        ]
        for (key, value) in expected.sorted(by: { $0.key < $1.key }) { #expect(run.values[key] == value, "\(key)") }

        let sensors = run.block("sensors.banked")
        #expect(sensors.status == 0, "\(sensors.stderr)")
        #expect(sensors.stdout.contains("  0x68 answers WHO_AM_I 0xea at bank 0: an ICM-20948: accelerometer, gyroscope and its AK09916 magnetometer (read through the chip's I2C master) (--source i2c:\(node):0x68)"), "\(sensors.stdout)")
        #expect(sensors.stdout.contains("  0x28 answers CHIP_ID (0x00) 0xa0: a BNO055: accelerometer, gyroscope, magnetometer and its own fused attitude (?motion=own) (--source i2c:\(node):0x28)"), "\(sensors.stdout)")
    }

    @Test func theBNO055ReadsItsRawSensorsThroughDevI2C() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let raw = run.block("bno.faceup")
        #expect(raw.status == 0, "\(raw.stderr)")
        let accel = raw.rows("accelerometer"), gyro = raw.rows("gyro"), field = raw.rows("magnetometer")
        // Measured 15, 5 and 1 rows in 2 s at 20 Hz under emulation (the scenario streams 4 s).
        #expect(accel.count >= 3 && gyro.count >= 1 && field.count >= 1, "\(accel.count), \(gyro.count), \(field.count) rows")
        // 981 counts = 9.81 m/s² of specific force up: face up z = −9.81 / 9.80665 g.
        for r in accel { #expect(r.x == 0 && r.y == 0 && abs(r.z + 9.81 / standardGravity) < 1e-9, "\(r)") }
        // 458 counts = 28.625 °/s about z.
        for r in gyro { #expect(r.x == 0 && r.y == 0 && abs(r.z - 28.625 * .pi / 180) < 1e-9, "\(r)") }
        // 320, −160, −640 counts at 16 per µT, not negated.
        for r in field { #expect(abs(r.x - 20) < 1e-9 && abs(r.y + 10) < 1e-9 && abs(r.z + 40) < 1e-9, "\(r)") }
        // Page 0 kept, UNIT_SEL 0 (m/s², °/s), AMG, normal power, the chip's own axes.
        let expected = ["bno.user.0x07": "0x00", "bno.user.0x3b": "0x00", "bno.user.0x3d": "0x07", "bno.user.0x3e": "0x00",
                        "bno.user.0x41": "0x24", "bno.user.0x42": "0x00", "bno.own.OPR_MODE": "0x0c"]
        for (key, value) in expected.sorted(by: { $0.key < $1.key }) { #expect(run.values[key] == value, "\(key)") }
    }

    /// `stream --sensor device-motion` rows by the header's column names.
    static func deviceMotion(_ block: CommandBlock) -> [[String: Double]] {
        guard let header = block.stdout.first(where: { $0.hasPrefix("timestamp,") })?.split(separator: ",").map(String.init) else { return [] }
        return block.stdout.compactMap { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).compactMap { Double($0) }
            guard f.count == header.count else { return nil }
            return Dictionary(uniqueKeysWithValues: zip(header, f))
        }
    }

    /// `?motion=own`: device motion is the chip's quaternion (east–north–up) in Core Motion's
    /// north–west–up, i.e. turned −90° about z, and its gravity vector negated.
    @Test func theBNO055sOwnAttitudeIsCoreMotionsThroughDevI2C() async throws {
        let run = await Self.boot.value
        guard run.ranToEnd() else { return }
        let own = run.block("bno.own")
        #expect(own.status == 0, "\(own.stderr)")
        let rows = Self.deviceMotion(own)
        #expect(rows.count >= 3, "\(own.stdout.prefix(5))")
        // The chip: 0.7 rad about up (15391, 0, 0, 5618 / 2^14). Core Motion: 0.7 − π/2 about z.
        let yaw = 0.7 - Double.pi / 2
        for r in rows {
            let q = [r["q_w"] ?? .nan, r["q_x"] ?? .nan, r["q_y"] ?? .nan, r["q_z"] ?? .nan]
            let want = [cos(yaw / 2), 0, 0, sin(yaw / 2)]
            #expect(zip(q, want).allSatisfy { abs($0.0 - $0.1) < 1e-3 } || zip(q, want).allSatisfy { abs($0.0 + $0.1) < 1e-3 }, "q \(q), want \(want)")
            let angles: [Double] = [r["roll"] ?? .nan, r["pitch"] ?? .nan, r["yaw"] ?? .nan]
            #expect(abs(angles[0]) < 1e-3 && abs(angles[1]) < 1e-3 && abs(angles[2] - yaw) < 1e-3, "\(r)")
            let g: [Double] = [r["gravity_x"] ?? .nan, r["gravity_y"] ?? .nan, r["gravity_z"] ?? .nan]
            #expect(abs(g[0]) < 1e-9 && abs(g[1]) < 1e-9 && abs(g[2] + 9.81 / standardGravity) < 1e-9, "\(r)")
            // Heading: clockwise from north, the chip's +y (the device's) 0.7 rad west of north.
            let heading: Double = r["heading"] ?? .nan
            #expect(abs(heading - (360 - 0.7 * 180 / Double.pi)) < 0.1, "heading \(heading)")
        }
        // Upright in portrait: 90° about x; pitch +π/2, gravity −1 g along y.
        let upright = run.block("bno.ownupright")
        #expect(upright.status == 0, "\(upright.stderr)")
        let portrait = Self.deviceMotion(upright)
        #expect(portrait.count >= 1, "\(upright.stdout.prefix(5))")
        for r in portrait {
            let pitch: Double = r["pitch"] ?? .nan
            #expect(abs(pitch - Double.pi / 2) < 2e-3, "\(r)")
            let g: [Double] = [r["gravity_x"] ?? .nan, r["gravity_y"] ?? .nan, r["gravity_z"] ?? .nan]
            #expect(abs(g[0]) < 1e-9 && abs(g[1] + 9.81 / standardGravity) < 1e-9 && abs(g[2]) < 1e-9, "\(r)")
        }
    }
}
