import MotionSources
import MotionSourcesLinux

/// A register-level emulator of a TDK InvenSense ICM-20948 and the AK09916 magnetometer inside it,
/// written from the datasheet (DS-000189 v1.3: register maps of user banks 0–3, sections 7–13),
/// for testing ``ICM20948Driver`` against behaviour rather than plain memory.
///
/// What it models, because a driver can get it wrong:
/// - **Register banks**: `REG_BANK_SEL` (0x7F, bits 5:4, in every bank) selects which of four
///   128-register banks addresses 0x00…0x7E reach; a read in the wrong bank returns that bank's
///   registers (bank 2's `GYRO_SMPLRT_DIV` at 0x00 instead of `WHO_AM_I`).
/// - **Sleep**: `PWR_MGMT_1` resets to 0x41 (`SLEEP`); asleep, the data registers read 0.
/// - **Full-scale ranges**: the data registers hold the pose at the range in bank 2's
///   `ACCEL_CONFIG` (0x14, bits 2:1: ±2/4/8/16 g, 16384/8192/4096/2048 counts per g) and
///   `GYRO_CONFIG_1` (0x01, bits 2:1: ±250/500/1000/2000 °/s, 131/65.5/32.8/16.4 counts per °/s),
///   big-endian from `ACCEL_XOUT_H` (bank 0, 0x2D) and `GYRO_XOUT_H` (0x33).
/// - **The I2C master**: with `USER_CTRL` (bank 0, 0x03) `I2C_MST_EN` (bit 5) set and bank 3's
///   `I2C_SLV0_CTRL` (0x05) `EN` (bit 7), slave 0 transfers with the chip at `I2C_SLV0_ADDR` (0x03;
///   bit 7 = read) from `I2C_SLV0_REG` (0x04): a read copies `LENG` (bits 3:0) registers into
///   `EXT_SLV_SENS_DATA_00` (bank 0, 0x3B…), a write sends `I2C_SLV0_DO` (0x06). Only the AK09916
///   at 0x0C answers; the master runs before every transfer from the host (as it does at every
///   sample on the chip).
/// - **The AK09916**: `WIA2` (0x01) = 0x09; `CNTL2` (0x31) resets to power-down (0), where the
///   measurement registers read 0; in a continuous mode (2, 4, 6, 8) `ST1` (0x10) has `DRDY` and
///   `HXL`…`HZH` (0x11…0x16, little-endian) hold the field at 0.15 µT per count; `ST2` (0x18).
///   Its axes relative to the accelerometer's (the datasheet's orientation figure): x the same,
///   y and z opposite.
///
/// The pose is physical: ``specificForce`` in g (what an accelerometer measures: +1 g on z face up),
/// ``rotationRate`` in °/s and ``magneticField`` in µT, all in the accelerometer's axes.
package final class ICM20948Emulator: EmulatedI2CChip, Sendable {
    private struct State {
        var banks = [[UInt8]](repeating: [UInt8](repeating: 0, count: 128), count: 4)
        var bankSelect: UInt8 = 0
        var magnetometer = [UInt8](repeating: 0, count: 0x40)
        var specificForce = (x: 0.0, y: 0.0, z: 1.0)
        var rotationRate = (x: 0.0, y: 0.0, z: 0.0)
        var magneticField = (x: 0.0, y: 0.0, z: 0.0)
    }
    private let state = Locked(State())

    /// A chip just powered on: bank 0, asleep, ±2 g and ±250 °/s, the magnetometer powered down,
    /// lying face up at rest in no field.
    package init() {
        state.withLock { s in
            Self.powerOn(&s)
            s.magnetometer[0x00] = 0x48  // WIA1
            s.magnetometer[0x01] = 0x09  // WIA2
        }
    }

    /// The reset values that matter here.
    private static func powerOn(_ s: inout State) {
        s.banks[0][0x00] = 0xEA  // WHO_AM_I
        s.banks[0][0x06] = 0x41  // PWR_MGMT_1: SLEEP, CLKSEL 1
        s.banks[2][0x01] = 0x01  // GYRO_CONFIG_1: GYRO_FCHOICE
        s.banks[2][0x14] = 0x01  // ACCEL_CONFIG: ACCEL_FCHOICE
        s.bankSelect = 0
    }

    /// What the accelerometer measures, g (+1 g on z face up), rotation rate in °/s, field in µT,
    /// in the accelerometer's axes.
    package func setPose(specificForce: (x: Double, y: Double, z: Double), rotationRate: (x: Double, y: Double, z: Double) = (0, 0, 0),
                         magneticField: (x: Double, y: Double, z: Double) = (0, 0, 0)) {
        state.withLock { s in
            s.specificForce = specificForce
            s.rotationRate = rotationRate
            s.magneticField = magneticField
        }
    }

    /// Selects a bank as another program would have left it.
    package func leaveInBank(_ bank: Int) { state.withLock { $0.bankSelect = UInt8(bank & 3) << 4 } }

    /// The register `register` of `bank` (0…3), as the chip holds it now.
    package func register(bank: Int, _ register: UInt8) -> UInt8 {
        state.withLock { s in
            Self.refresh(&s)
            return register == 0x7F ? s.bankSelect : s.banks[bank & 3][Int(register & 0x7F)]
        }
    }

    /// An AK09916 register.
    package func magnetometerRegister(_ register: UInt8) -> UInt8 { state.withLock { $0.magnetometer[Int(register) & 0x3F] } }

    package func read(register: UInt8, count: Int) -> [UInt8] {
        state.withLock { s in
            Self.refresh(&s)
            let bank = Int(s.bankSelect >> 4) & 3
            return (0..<count).map { i in
                let r = (Int(register) + i) & 0x7F
                return r == 0x7F ? s.bankSelect : s.banks[bank][r]
            }
        }
    }

    package func write(register: UInt8, value: UInt8) {
        state.withLock { s in
            let r = Int(register & 0x7F)
            if r == 0x7F {
                s.bankSelect = value & 0x30
                return
            }
            let bank = Int(s.bankSelect >> 4) & 3
            if bank == 0 && r == 0x00 { return }  // WHO_AM_I is read-only
            if bank == 0 && (0x2D...0x52).contains(r) { return }  // data registers are read-only
            s.banks[bank][r] = value
            if bank == 0 && r == 0x06 && value & 0x80 != 0 {  // DEVICE_RESET: the reset values, at once; the pose stays
                var fresh = State()
                Self.powerOn(&fresh)
                fresh.magnetometer = s.magnetometer
                (fresh.specificForce, fresh.rotationRate, fresh.magneticField) = (s.specificForce, s.rotationRate, s.magneticField)
                s = fresh
            }
            Self.refresh(&s)
        }
    }

    /// The chip's clock tick: data registers from the pose, then the I2C master's slave 0.
    private static func refresh(_ s: inout State) {
        let awake = s.banks[0][0x06] & 0x40 == 0
        let accelCounts = 16384.0 / Double(1 << Int((s.banks[2][0x14] >> 1) & 3))
        let gyroCounts = [131.0, 65.5, 32.8, 16.4][Int((s.banks[2][0x01] >> 1) & 3)]
        func put(_ base: Int, _ v: (x: Double, y: Double, z: Double), _ k: Double) {
            for (i, c) in [v.x, v.y, v.z].enumerated() {
                let u = UInt16(bitPattern: awake ? emulatedCounts(c, k) : 0)
                s.banks[0][base + 2 * i] = UInt8(u >> 8)
                s.banks[0][base + 2 * i + 1] = UInt8(u & 0xFF)
            }
        }
        put(0x2D, s.specificForce, accelCounts)
        put(0x33, s.rotationRate, gyroCounts)
        // The I2C master's slave 0 runs when the chip is awake and the master enabled.
        let ctrl = s.banks[3][0x05], address = s.banks[3][0x03], reg = Int(s.banks[3][0x04])
        let master = awake && s.banks[0][0x03] & 0x20 != 0 && ctrl & 0x80 != 0
        let length = Int(ctrl & 0x0F)
        if master, address & 0x80 == 0, address == 0x0C, (0x30...0x32).contains(reg), length > 0 {  // CNTL2, CNTL3: the writable ones
            s.magnetometer[reg] = s.banks[3][0x06]
        }
        // The AK09916's own registers follow its mode.
        let mode = s.magnetometer[0x31] & 0x1F
        let measuring = [0x02, 0x04, 0x06, 0x08].contains(mode)
        let field = (x: s.magneticField.x, y: -s.magneticField.y, z: -s.magneticField.z)  // its axes
        for (i, c) in [field.x, field.y, field.z].enumerated() {
            let u = UInt16(bitPattern: measuring ? emulatedCounts(c, 1 / 0.15) : 0)  // safe: emulatedCounts clamps to Int16
            s.magnetometer[0x11 + 2 * i] = UInt8(u & 0xFF)
            s.magnetometer[0x12 + 2 * i] = UInt8(u >> 8)
        }
        s.magnetometer[0x10] = measuring ? 0x01 : 0x00
        if master, address & 0x80 != 0 {
            for i in 0..<length {
                s.banks[0][0x3B + i] = address & 0x7F == 0x0C ? s.magnetometer[(reg + i) & 0x3F] : 0
            }
        }
    }
}
