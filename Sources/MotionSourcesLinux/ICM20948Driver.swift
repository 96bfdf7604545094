import MotionSources
import MotionFusion

/// The registers of the ICM-20948 used here (datasheet DS-000189 v1.3, sections 7–13), by bank.
enum ICM20948Register {
    /// `REG_BANK_SEL` (0x7F in every bank): the bank in bits 5:4.
    static let bankSelect: UInt8 = 0x7F
    // Bank 0.
    static let whoAmI: UInt8 = 0x00, userControl: UInt8 = 0x03, powerManagement1: UInt8 = 0x06, powerManagement2: UInt8 = 0x07
    static let interruptPinConfig: UInt8 = 0x0F, accelXHigh: UInt8 = 0x2D, externalData: UInt8 = 0x3B
    // Bank 2.
    static let gyroSampleRateDivider: UInt8 = 0x00, gyroConfig1: UInt8 = 0x01
    static let accelSampleRateDivider1: UInt8 = 0x10, accelSampleRateDivider2: UInt8 = 0x11, accelConfig: UInt8 = 0x14
    // Bank 3.
    static let masterControl: UInt8 = 0x01, slave0Address: UInt8 = 0x03, slave0Register: UInt8 = 0x04
    static let slave0Control: UInt8 = 0x05, slave0DataOut: UInt8 = 0x06
    /// The AK09916 inside, on the chip's auxiliary bus, and its registers.
    static let magnetometerAddress: UInt8 = 0x0C
    static let magnetometerWIA2: UInt8 = 0x01, magnetometerST1: UInt8 = 0x10, magnetometerCNTL2: UInt8 = 0x31
}

/// How an ICM-20948 is set up: full-scale ranges and the sample rate.
package struct ICM20948Configuration: Sendable, Hashable {
    /// Accelerometer full scale in g: 2, 4, 8 or 16. Default 2 (16384 counts per g).
    package let accelerometerRange: Int
    /// Gyroscope full scale in °/s: 250, 500, 1000 or 2000. Default 2000 (16.4 counts per °/s), as
    /// for the MPU family.
    package let gyroRange: Int
    /// `GYRO_SMPLRT_DIV`: the gyroscope's rate is 1100 / (1 + divider) Hz.
    package let gyroDivider: UInt8
    /// `ACCEL_SMPLRT_DIV` (12 bits): the accelerometer's rate is 1125 / (1 + divider) Hz.
    package let accelerometerDivider: UInt16

    /// The accelerometer ranges, g, in `ACCEL_FS_SEL` order.
    package static let accelerometerRanges = [2, 4, 8, 16]
    /// The gyroscope ranges, °/s, in `GYRO_FS_SEL` order, with their counts per °/s.
    package static let gyroRanges: [(dps: Int, countsPerDegree: Double)] = [(250, 131), (500, 65.5), (1000, 32.8), (2000, 16.4)]
    /// The slowest and fastest rates, Hz (`GYRO_SMPLRT_DIV` 255 and 0).
    package static let rateLimits: ClosedRange<Double> = 1100.0 / 256...1100

    /// Creates a configuration; ranges not offered fall back to the defaults; the rate is the
    /// slowest the dividers give at or above `rate` (100 Hz for a rate that is not a positive number).
    package init(accelerometerRange: Int = 2, gyroRange: Int = 2000, rate: Double = 100) {
        self.accelerometerRange = Self.accelerometerRanges.contains(accelerometerRange) ? accelerometerRange : 2
        self.gyroRange = Self.gyroRanges.contains { $0.dps == gyroRange } ? gyroRange : 2000
        let want = rate.isFinite && rate > 0 ? min(max(rate, Self.rateLimits.lowerBound), Self.rateLimits.upperBound) : 100
        gyroDivider = UInt8(min(255, max(0, Int((1100 / want).rounded(.down)) - 1)))  // safe: `want` is clamped to 4.3…1100 Hz
        accelerometerDivider = UInt16(min(4095, max(0, Int((1125 / want).rounded(.down)) - 1)))  // safe: as above
    }

    /// The gyroscope's rate, Hz, at which the source polls.
    package var actualRate: Double { 1100 / Double(1 + Int(gyroDivider)) }
    /// Accelerometer counts per g.
    package var accelerometerCountsPerG: Double { 32768 / Double(accelerometerRange) }
    /// Gyroscope counts per °/s.
    package var gyroCountsPerDegree: Double { Self.gyroRanges.first { $0.dps == gyroRange }?.countsPerDegree ?? 16.4 }

    /// `GYRO_DLPFCFG`/`ACCEL_DLPFCFG` (bits 5:3): a low-pass filter with a 3 dB bandwidth below half
    /// the rate (gyroscope 151.8, 119.5, 51.2, 23.9, 11.6 or 5.7 Hz; the accelerometer's are close).
    var lowPassSetting: UInt8 {
        let r = actualRate
        if r >= 400 { return 1 }
        if r >= 250 { return 2 }
        if r >= 110 { return 3 }
        if r >= 50 { return 4 }
        if r >= 25 { return 5 }
        return 6
    }

    /// `GYRO_CONFIG_1`: filter, `GYRO_FS_SEL` (bits 2:1), `GYRO_FCHOICE` (bit 0: the filter on).
    var gyroConfig1: UInt8 {
        lowPassSetting << 3 | UInt8(Self.gyroRanges.firstIndex { $0.dps == gyroRange } ?? 3) << 1 | 1
    }

    /// `ACCEL_CONFIG`: filter, `ACCEL_FS_SEL` (bits 2:1), `ACCEL_FCHOICE` (bit 0).
    var accelConfig: UInt8 {
        lowPassSetting << 3 | UInt8(Self.accelerometerRanges.firstIndex(of: accelerometerRange) ?? 0) << 1 | 1
    }
}

/// The user-space driver of a TDK InvenSense ICM-20948 (accelerometer, gyroscope, and the AK09916
/// magnetometer inside it) as a state machine (``I2CChipDriver``), from its datasheet (DS-000189).
///
/// Every register lives in one of four banks chosen by `REG_BANK_SEL` (0x7F), so each step first
/// selects its bank: a program that ran before may have left the chip in any of them.
///
/// Sequence: bank 0, read `WHO_AM_I` (0x00 = 0xEA) → wake (`PWR_MGMT_1` 0x01, auto clock), pause
/// 35 ms (the gyroscope's start-up from sleep), all axes on (`PWR_MGMT_2`), I2C bypass off
/// (`INT_PIN_CFG`), the I2C master on (`USER_CTRL` `I2C_MST_EN`) → bank 2: dividers, `GYRO_CONFIG_1`,
/// `ACCEL_CONFIG`, read back one register at a time → bank 3: master clock 345.6 kHz (`I2C_MST_CTRL` 7), slave 0 reads the
/// AK09916's `WIA2` (0x01 at 0x0C) → bank 0, pause 10 ms (a few master cycles), `PWR_MGMT_1` must
/// be awake and `EXT_SLV_SENS_DATA_00` must hold 0x09 → slave 0 writes `CNTL2` 0x08 (continuous,
/// 100 Hz), pause 10 ms, then reads the 9 registers `ST1`…`ST2` at every sample → bank 0,
/// ``I2CDriverAction/streaming``. Each read of 23 bytes from `ACCEL_XOUT_H` (0x2D) then gives an
/// accelerometer and a gyroscope sample, and a magnetometer sample when its copy of `ST1` says the
/// data are new (`DRDY`) and `ST2` says no overflow (`HOFL`).
///
/// Units and signs: accelerometer and gyroscope big-endian, as the MPU family (specific force
/// negated: face up reads z = −1 g); the magnetometer little-endian at 0.15 µT per count, its axes
/// turned into the accelerometer's (the datasheet's orientation figure: x the same, y and z
/// opposite), then the mount matrix, not negated.
package struct ICM20948Driver: I2CChipDriver {
    private enum Phase: Sendable, Hashable { case identifying, verifying(Int), streaming, failed }

    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Ranges and rate.
    package let configuration: ICM20948Configuration
    private var phase = Phase.identifying
    /// The bank-2 registers read back so far, in the order of ``configurationActions``.
    private var readBack: [UInt8] = []
    private let accelFrame: MountMatrix
    private let gyroFrame: MountMatrix

    /// Creates the driver of the chip at `address` on `busPath`; `mountMatrix` maps chip axes to
    /// device axes (default identity).
    package init(address: UInt8, busPath: String, configuration: ICM20948Configuration = ICM20948Configuration(), mountMatrix: MountMatrix = .identity) {
        self.address = address
        self.busPath = busPath
        self.configuration = configuration
        accelFrame = IIOUnits.frame(kind: .accelerometer, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        gyroFrame = IIOUnits.frame(kind: .gyro, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
    }

    package var isStreaming: Bool { phase == .streaming }
    /// Accelerometer, gyroscope, temperature and the 9 magnetometer registers the master copied.
    package var dataRead: (register: UInt8, count: Int) { (ICM20948Register.accelXHigh, 23) }
    package var actualRate: Double { configuration.actualRate }

    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }

    private static func bank(_ n: UInt8) -> I2CDriverAction { .write(register: ICM20948Register.bankSelect, value: n << 4) }

    package mutating func start() -> [I2CDriverAction] {
        phase = .identifying
        readBack = []
        return [Self.bank(0), .read(register: ICM20948Register.whoAmI, count: 1)]
    }

    /// The writes and reads after `WHO_AM_I`, up to the magnetometer's identity.
    package var configurationActions: [I2CDriverAction] {
        typealias R = ICM20948Register
        let c = configuration
        return [
            .write(register: R.powerManagement1, value: 0x01),  // SLEEP off, best clock
            .pause(seconds: 0.035),                              // gyroscope start-up from sleep
            .write(register: R.powerManagement2, value: 0x00),  // every axis on
            .write(register: R.interruptPinConfig, value: 0x00),  // no bypass: the master owns the auxiliary bus
            .write(register: R.userControl, value: 0x20),       // I2C_MST_EN
            Self.bank(2),
            .write(register: R.gyroSampleRateDivider, value: c.gyroDivider),
            .write(register: R.gyroConfig1, value: c.gyroConfig1),
            .write(register: R.accelSampleRateDivider1, value: UInt8(c.accelerometerDivider >> 8)),
            .write(register: R.accelSampleRateDivider2, value: UInt8(c.accelerometerDivider & 0xFF)),
            .write(register: R.accelConfig, value: c.accelConfig),
            // Read back one register at a time: a multi-byte read is a plain register walk on the
            // chip, but SMBus adapters that emulate banks (the kernel's i2c-stub) keep them for
            // byte transfers only, so these five single reads work on both.
            .read(register: R.gyroSampleRateDivider, count: 1),
            .read(register: R.gyroConfig1, count: 1),
            .read(register: R.accelSampleRateDivider1, count: 1),
            .read(register: R.accelSampleRateDivider2, count: 1),
            .read(register: R.accelConfig, count: 1),
            Self.bank(3),
            .write(register: R.masterControl, value: 0x07),     // 345.6 kHz
            .write(register: R.slave0Control, value: 0x00),     // slave 0 off while it is set up
            .write(register: R.slave0Address, value: 0x80 | R.magnetometerAddress),
            .write(register: R.slave0Register, value: R.magnetometerWIA2),
            .write(register: R.slave0Control, value: 0x81),     // on, 1 byte
            Self.bank(0),
            .pause(seconds: 0.01),
            .read(register: R.powerManagement1, count: 1),
            .read(register: R.externalData, count: 1),
        ]
    }

    /// After the magnetometer answered: continuous measurement, then slave 0 reads `ST1`…`ST2`.
    package var magnetometerActions: [I2CDriverAction] {
        typealias R = ICM20948Register
        return [
            Self.bank(3),
            .write(register: R.slave0Control, value: 0x00),
            .write(register: R.slave0Address, value: R.magnetometerAddress),
            .write(register: R.slave0Register, value: R.magnetometerCNTL2),
            .write(register: R.slave0DataOut, value: 0x08),     // continuous measurement mode 4, 100 Hz
            .write(register: R.slave0Control, value: 0x81),
            Self.bank(0),
            .pause(seconds: 0.01),
            Self.bank(3),
            .write(register: R.slave0Control, value: 0x00),
            .write(register: R.slave0Address, value: 0x80 | R.magnetometerAddress),
            .write(register: R.slave0Register, value: R.magnetometerST1),
            .write(register: R.slave0Control, value: 0x89),     // on, 9 bytes: ST1, HXL…HZH, TMPS, ST2
            Self.bank(0),
            .streaming,
        ]
    }

    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        let c = configuration
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no WHO_AM_I from \(place)", path: busPath)) }
            guard id == I2CChip.icm20948.idValue else {
                return fail(SourceError(.unavailable, "\(place) answers WHO_AM_I (0x00, bank 0) \(I2CAddress.hex(id)): not an ICM-20948 (0xea)", path: busPath))
            }
            phase = .verifying(0)
            return configurationActions
        case .verifying(let step):
            phase = .verifying(step + 1)
            switch step {
            case 0...4:
                // GYRO_SMPLRT_DIV, GYRO_CONFIG_1 (bits 7:6 reserved), ACCEL_SMPLRT_DIV_1 (bits 3:0),
                // ACCEL_SMPLRT_DIV_2, ACCEL_CONFIG (bits 7:6 reserved).
                guard bytes.count == 1 else {
                    return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of 1 from \(place)", path: busPath))
                }
                readBack.append(bytes[0])
                guard step == 4 else { return [] }
                let b = readBack
                let got = [b[0], b[1] & 0x3F, b[2] & 0x0F, b[3], b[4] & 0x3F]
                let want = [c.gyroDivider, c.gyroConfig1, UInt8(c.accelerometerDivider >> 8), UInt8(c.accelerometerDivider & 0xFF), c.accelConfig]
                if got != want {
                    return fail(SourceError(.io, "the ICM-20948 at \(place) did not keep its configuration in bank 2 (wrote \(want.map(I2CAddress.hex)), read back \(got.map(I2CAddress.hex)))", path: busPath))
                }
                return []
            case 5:
                if let p = bytes.first, p & 0x40 != 0 {
                    return fail(SourceError(.io, "the ICM-20948 at \(place) stays asleep (PWR_MGMT_1 \(I2CAddress.hex(p)))", path: busPath))
                }
                return []
            default:
                guard bytes.first == 0x09 else {
                    return fail(SourceError(.io, "the ICM-20948 at \(place): its AK09916 magnetometer does not answer through the chip's I2C master (EXT_SLV_SENS_DATA_00 \(I2CAddress.hex(bytes.first ?? 0)), want WIA2 0x09)", path: busPath))
                }
                phase = .streaming
                return magnetometerActions
            }
        case .streaming:
            guard bytes.count == 23 else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of 23 from \(place)", path: busPath))
            }
            return [.deliver(decode(bytes, at: timestamp))]
        case .failed:
            return []
        }
    }

    package mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction] {
        fail(i2cTransferError(error, chip: "ICM-20948", place: place, busPath: busPath))
    }

    private mutating func fail(_ error: SourceError) -> [I2CDriverAction] {
        phase = .failed
        return [.fail(error)]
    }

    /// Decodes 23 bytes from `ACCEL_XOUT_H` (bank 0, 0x2D): accelerometer and gyroscope samples, and
    /// a magnetometer sample when the master's copy of `ST1` has `DRDY` and `ST2` no `HOFL`.
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        let c = configuration
        let accel = Vector3(int16BE(b, 0), int16BE(b, 2), int16BE(b, 4)) * (1 / c.accelerometerCountsPerG)
        let gyro = Vector3(int16BE(b, 6), int16BE(b, 8), int16BE(b, 10)) * (.pi / 180 / c.gyroCountsPerDegree)
        var out = [RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero),
                   RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero)]
        // 14: ST1, 15…20: HX, HY, HZ, 21: TMPS, 22: ST2.
        if b[14] & 0x01 != 0, b[22] & 0x08 == 0 {
            let field = Vector3(int16LE(b, 15), -int16LE(b, 17), -int16LE(b, 19)) * 0.15  // AK09916 axes → the accelerometer's
            out.append(RawSample(sensor: .magnetometer, timestamp: timestamp, value: gyroFrame.apply(field) + .zero))
        }
        return out
    }
}
