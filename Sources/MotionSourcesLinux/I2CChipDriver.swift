#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionFusion

/// What a user-space chip driver (``I2CChipDriver``) asks ``I2CSource`` to do.
package enum I2CDriverAction: Sendable, Hashable {
    /// Read `count` registers from `register` and pass them to ``I2CChipDriver/received(_:at:)``.
    case read(register: UInt8, count: Int)
    /// Read `count` bytes from a FIFO port (a register that does not auto-increment:
    /// ``I2CBus/readFIFO(address:register:count:)``) and pass them to ``I2CChipDriver/received(_:at:)``.
    case readFIFO(register: UInt8, count: Int)
    /// Write one register.
    case write(register: UInt8, value: UInt8)
    /// The chip is set up: read ``I2CChipDriver/dataRead`` at ``I2CChipDriver/actualRate``.
    case streaming
    /// Wait this long (seconds, at most 1) before the next action: a chip's documented start-up
    /// time after a power-mode command. Set-up only; never a wait for a bit to change.
    case pause(seconds: Double)
    /// Deliver these samples.
    case deliver([RawSample])
    /// The chip's own attitude estimate (a BNO055 in its fusion mode), in Core Motion's frames: kept by
    /// the source for device motion (``OwnAttitudeProviding``).
    case attitude(OwnAttitude)
    /// Tell the consumers that samples were lost (a FIFO that overflowed), without ending the stream:
    /// ``SourceEvent/interrupted(_:)``.
    case interrupted(SourceError)
    /// Say this in the log, once, and go on: a change of how the chip is read that loses nothing (a
    /// FIFO that never fills, given up for direct reads). Consumers see no event: their stream goes on
    /// at the same rate, so an error in their handler would only make them stop.
    case notice(String)
    /// Give up with this error.
    case fail(SourceError)
}

/// A user-space driver of one I2C motion chip as a pure state machine: it says which registers to
/// read and write, and turns what was read into Core Motion samples. ``I2CSource`` carries its
/// actions out on an ``I2CBus``; tests feed it bytes. One file per chip family implements it
/// (``MPUDriver``, ``LSM6DSDriver``, ``BMI160Driver``, ``ICM20948Driver``, ``BNO055Driver``).
///
/// Sequence: ``start()`` (identify) → ``received(_:at:)`` for each read, which answers with the
/// configuration writes and the reads that verify them → ``I2CDriverAction/streaming``; from then
/// on each read of ``dataRead`` decodes into samples in Core Motion's units (g, rad/s, µT), signs
/// and axes: the chip's datasheet frame through the mount matrix, the acceleration negated once
/// (chips measure specific force, +1 g up; Core Motion reads −1 g face up).
///
/// A driver never waits for a bit to change (a reset or boot bit that clears itself): every step is
/// one transfer, so a chip that misbehaves fails the verification instead of hanging the source.
package protocol I2CChipDriver: Sendable {
    /// `true` once the chip is set up.
    var isStreaming: Bool { get }
    /// The read of one sample (first register, byte count), once streaming.
    var dataRead: (register: UInt8, count: Int) { get }
    /// The rate the chip was set to, Hz: the rate of its samples.
    var actualRate: Double { get }
    /// How often the source reads ``dataRead``, Hz: ``actualRate`` (one sample a read), or less for
    /// a driver reading the chip's FIFO (several samples a read).
    var pollRate: Double { get }
    /// The first actions (identification).
    mutating func start() -> [I2CDriverAction]
    /// Bytes read for the last ``I2CDriverAction/read(register:count:)``, at `timestamp` (seconds on
    /// `CLOCK_MONOTONIC`).
    mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction]
    /// A failed transfer: the error as Core Motion reports it.
    mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction]
}

extension I2CChipDriver {
    /// One read per sample: ``actualRate``.
    package var pollRate: Double { actualRate }
}

/// The timestamps of samples read in batches from a chip's FIFO, where a sample carries no time of
/// its own: the FIFO fills at the chip's sample rate (the period from its rate divider, corrected
/// by the rate measured over the run, which follows the chip's oscillator within ±10 %) and the
/// newest sample of a batch was written within one period before the FIFO count was read.
///
/// Each batch continues the previous one by whole periods; where that would put the newest sample
/// after the count's read time, or more than a period before it, the newest sample moves into that
/// window (the chip's clock and the host's drift apart, a read came late). Timestamps are strictly
/// increasing across batches (a batch that would overlap the previous one is spread evenly between
/// them). ``reset()`` after a FIFO reset starts again: the first batch's newest sample is put half a
/// period before its read time.
package struct FIFOTimestamps: Sendable {
    /// The period the rate divider sets, s.
    package let nominalPeriod: Double
    /// The period in use, s: the nominal one, then the measured one within ±10 % of it.
    package private(set) var period: Double
    private var newest: Double?
    /// The read time of the first batch since the reset, and the samples of the batches after it.
    private var firstRead: Double?
    private var framesSince = 0

    /// Timestamps for a chip running at `1 / period` Hz (`period` finite and positive; otherwise 0.01 s).
    package init(period: Double) {
        nominalPeriod = period.isFinite && period > 0 ? period : 0.01
        self.period = nominalPeriod
    }

    /// Forgets the previous batches (after the FIFO was reset: samples were lost).
    package mutating func reset() {
        newest = nil
        firstRead = nil
        framesSince = 0
        period = nominalPeriod
    }

    /// The timestamps of `count` samples, oldest first, read from a FIFO whose count was read at
    /// `readTime` (seconds on `CLOCK_MONOTONIC`).
    package mutating func stamps(count n: Int, readTime t: Double) -> [Double] {
        guard n > 0, t.isFinite else { return [] }
        if let f = firstRead {
            framesSince += n
            // The samples of the batches after the first were written between that read and this one.
            if framesSince >= 64, t > f {
                period = min(max((t - f) / Double(framesSince), nominalPeriod * 0.9), nominalPeriod * 1.1)
            }
        } else {
            firstRead = t
        }
        let p = period
        let latest: Double
        if let prev = newest {
            latest = min(max(prev + Double(n) * p, t - p), t)
        } else {
            latest = t - p / 2
        }
        var out = [Double](repeating: 0, count: n)
        let oldest = latest - Double(n - 1) * p
        if let prev = newest, oldest <= prev {
            let step = max(latest - prev, 1e-6) / Double(n)
            for k in 0..<n { out[k] = prev + Double(k + 1) * step }
        } else {
            for k in 0..<n { out[k] = oldest + Double(k) * p }
        }
        newest = out[n - 1]
        return out
    }
}

/// The signed 16-bit register pair at `b[i]`, `b[i + 1]`, low byte first (the ST and Bosch chips, the
/// AK magnetometers), as a number of counts.
func int16LE(_ b: [UInt8], _ i: Int) -> Double { Double(Int16(bitPattern: UInt16(b[i]) | UInt16(b[i + 1]) << 8)) }

/// The signed 16-bit register pair at `b[i]`, `b[i + 1]`, high byte first (the InvenSense chips), as a
/// number of counts.
func int16BE(_ b: [UInt8], _ i: Int) -> Double { Double(Int16(bitPattern: UInt16(b[i]) << 8 | UInt16(b[i + 1]))) }

/// The error of a failed transfer, as every chip driver reports it: a chip that stops answering is
/// a removed device, a vanished adapter too; anything else keeps its `errno`.
func i2cTransferError(_ error: LinuxIOError, chip name: String, place: String, busPath: String) -> SourceError {
    if error.code == EREMOTEIO || error.code == ENXIO || error.code == ETIMEDOUT {
        return SourceError(.deviceRemoved, "the \(name) at \(place) stopped answering (\(error.reason))", path: busPath)
    }
    if error.code == ENODEV || error.code == ENOENT {
        return SourceError(.deviceRemoved, "the I2C adapter \(busPath) is gone", path: busPath)
    }
    return error.sourceError("the \(name) at \(place): \(error.operation)", permissionFix: I2CDiscovery.permissionFix)
}

/// The I2C motion chips the scan recognises by an identity register, and whether this library
/// drives them from user space.
///
/// A chip is recognised by *register and value* at its addresses, never by a value alone: the
/// LSM9DS1's accelerometer and gyroscope answer `WHO_AM_I` (0x0F) with 0x68, the value an MPU-6050
/// has in its `WHO_AM_I` (0x75); the MPU family and the BMI160 share addresses 0x68 and 0x69, the
/// LSM6DSx family and the LSM9DS1 share 0x6A and 0x6B.
package enum I2CChip: String, Sendable, Hashable, CaseIterable {
    /// InvenSense MPU-6050 (0x75 = 0x68).
    case mpu6050
    /// InvenSense MPU-6500 (0x75 = 0x70).
    case mpu6500
    /// InvenSense MPU-9250 (0x75 = 0x71).
    case mpu9250
    /// InvenSense MPU-9255 (0x75 = 0x73).
    case mpu9255
    /// ST LSM6DS3 / LSM6DS3H (0x0F = 0x69).
    case lsm6ds3
    /// ST LSM6DSL, LSM6DSM, LSM6DS3TR-C, ISM330DLC (0x0F = 0x6A).
    case lsm6dsl
    /// ST LSM6DSR, ISM330DHCX, ASM330LHH (0x0F = 0x6B).
    case lsm6dsr
    /// ST LSM6DSO, LSM6DSOX (0x0F = 0x6C).
    case lsm6dso
    /// ST LSM6DST (0x0F = 0x6D).
    case lsm6dst
    /// ST LSM9DS1 accelerometer and gyroscope (0x0F = 0x68 at 0x6A/0x6B).
    case lsm9ds1
    /// Bosch BMI160 (CHIP_ID 0x00 = 0xD1).
    case bmi160
    /// ST LSM9DS1 magnetometer or LIS3MDL (0x0F = 0x3D at 0x1C/0x1E).
    case lsm9ds1Magnetometer
    /// TDK InvenSense ICM-20948 (`WHO_AM_I` 0x00 = 0xEA in register bank 0), with its AK09916 magnetometer.
    case icm20948
    /// Bosch BNO055 (`CHIP_ID` 0x00 = 0xA0 at 0x28/0x29): raw sensors and its own fused attitude.
    case bno055

    /// The family (one register map, one driver).
    package enum Family: Sendable, Hashable {
        /// InvenSense MPU-6050/6500/9250 (``MPUDriver``).
        case mpu
        /// ST LSM6DSx (``LSM6DSDriver`` with ``LSM6DSMap/lsm6dsx``).
        case lsm6dsx
        /// ST LSM9DS1 accelerometer and gyroscope (``LSM6DSDriver`` with ``LSM6DSMap/lsm9ds1``).
        case lsm9ds1
        /// Bosch BMI160 (``BMI160Driver``).
        case bmi160
        /// ST magnetometers answering 0x3D (LSM9DS1's, LIS3MDL) (``LSM9DS1MagnetometerDriver``).
        case stMagnetometer
        /// TDK InvenSense ICM-20948 (``ICM20948Driver``).
        case icm20948
        /// Bosch BNO055 (``BNO055Driver``).
        case bno055
    }

    /// The chip's family.
    package var family: Family {
        switch self {
        case .mpu6050, .mpu6500, .mpu9250, .mpu9255: .mpu
        case .lsm6ds3, .lsm6dsl, .lsm6dsr, .lsm6dso, .lsm6dst: .lsm6dsx
        case .lsm9ds1: .lsm9ds1
        case .bmi160: .bmi160
        case .lsm9ds1Magnetometer: .stMagnetometer
        case .icm20948: .icm20948
        case .bno055: .bno055
        }
    }

    /// The identity register: `WHO_AM_I` 0x75 (MPU), `WHO_AM_I` 0x0F (ST), `CHIP_ID` 0x00 (Bosch),
    /// `WHO_AM_I` 0x00 of register bank 0 (ICM-20948).
    package var idRegister: UInt8 {
        switch family {
        case .mpu: MPURegister.whoAmI
        case .lsm6dsx, .lsm9ds1, .stMagnetometer: 0x0F
        case .bmi160, .bno055, .icm20948: 0x00
        }
    }

    /// The identity register's name in the datasheet.
    package var idRegisterName: String { family == .bmi160 || family == .bno055 ? "CHIP_ID" : "WHO_AM_I" }

    /// The identity register's value.
    package var idValue: UInt8 {
        switch self {
        case .mpu6050: 0x68
        case .mpu6500: 0x70
        case .mpu9250: 0x71
        case .mpu9255: 0x73
        case .lsm6ds3: 0x69
        case .lsm6dsl: 0x6A
        case .lsm6dsr: 0x6B
        case .lsm6dso: 0x6C
        case .lsm6dst: 0x6D
        case .lsm9ds1: 0x68
        case .bmi160: 0xD1
        case .lsm9ds1Magnetometer: 0x3D
        case .icm20948: 0xEA
        case .bno055: 0xA0
        }
    }

    /// The addresses the chip can have (its address pin low, high).
    package var addresses: [UInt8] {
        switch family {
        case .mpu, .bmi160, .icm20948: [0x68, 0x69]
        case .lsm6dsx, .lsm9ds1: [0x6A, 0x6B]
        case .stMagnetometer: [0x1C, 0x1E]
        case .bno055: [0x28, 0x29]
        }
    }

    /// `MPU-6050`, `LSM6DS3`, …
    package var displayName: String {
        switch self {
        case .mpu6050: "MPU-6050"
        case .mpu6500: "MPU-6500"
        case .mpu9250: "MPU-9250"
        case .mpu9255: "MPU-9255"
        case .lsm6ds3: "LSM6DS3"
        case .lsm6dsl: "LSM6DSL"
        case .lsm6dsr: "LSM6DSR"
        case .lsm6dso: "LSM6DSO"
        case .lsm6dst: "LSM6DST"
        case .lsm9ds1: "LSM9DS1"
        case .bmi160: "BMI160"
        case .lsm9ds1Magnetometer: "LSM9DS1 magnetometer"
        case .icm20948: "ICM-20948"
        case .bno055: "BNO055"
        }
    }

    /// `InvenSense`, `STMicroelectronics`, `Bosch`.
    package var vendor: String {
        switch family {
        case .mpu, .icm20948: "InvenSense"
        case .bmi160, .bno055: "Bosch"
        case .lsm6dsx, .lsm9ds1, .stMagnetometer: "STMicroelectronics"
        }
    }

    /// The name the kernel's I2C id table has for the chip (`new_device`, device-tree `compatible`).
    package var kernelName: String {
        switch self {
        case .lsm9ds1: "lsm9ds1-imu"
        case .lsm9ds1Magnetometer: "lsm9ds1_magn"
        default: rawValue
        }
    }

    /// The kernel module that drives it.
    package var kernelModule: String {
        switch family {
        case .mpu: "inv-mpu6050-i2c"
        case .lsm6dsx, .lsm9ds1: "st_lsm6dsx_i2c"
        case .bmi160: "bmi160_i2c"
        case .stMagnetometer: "st_magn_i2c"
        case .bno055: "bno055_i2c"      // mainline; Debian's kernel does not build it
        case .icm20948: "none"          // no kernel driver
        }
    }

    /// `true` for the chips this library reads from user space (every chip of the table).
    package var isDriven: Bool { true }

    /// The chip whose identity register `register` reads `value` at `address`; at an address no
    /// chip of the table has, any chip with that register and value.
    package init?(register: UInt8, value: UInt8, address: UInt8) {
        let known = Self.allCases.contains { $0.addresses.contains(address) }
        guard let c = Self.allCases.first(where: {
            $0.idRegister == register && $0.idValue == value && (!known || $0.addresses.contains(address))
        }) else { return nil }
        self = c
    }

    /// The chip of the MPU family.
    package init(_ mpu: MPUChip) {
        switch mpu {
        case .mpu6050: self = .mpu6050
        case .mpu6500: self = .mpu6500
        case .mpu9250: self = .mpu9250
        case .mpu9255: self = .mpu9255
        }
    }

    /// The identity registers to read at `address`, in order: those of the chips that can have it,
    /// or every one for an address outside the table.
    package static func idRegisters(at address: UInt8) -> [UInt8] {
        let here = allCases.filter { $0.addresses.contains(address) }
        let chips = here.isEmpty ? allCases : here
        var out: [UInt8] = []
        for c in chips where !out.contains(c.idRegister) { out.append(c.idRegister) }
        return out
    }

    /// `WHO_AM_I 0x70` for the MPU family (its register is the one people know), `WHO_AM_I (0x0f)
    /// 0x69` for the others.
    package var identityText: String {
        switch family {
        case .mpu: "WHO_AM_I \(I2CAddress.hex(idValue))"
        case .icm20948: "WHO_AM_I \(I2CAddress.hex(idValue)) at bank 0"
        default: "\(idRegisterName) (\(I2CAddress.hex(idRegister))) \(I2CAddress.hex(idValue))"
        }
    }

    /// What `coremotion sensors` says of it: `an MPU-6500, no magnetometer`.
    package var explanation: String {
        switch self {
        case .mpu6050, .mpu6500, .mpu9250, .mpu9255:
            MPUChip(rawValue: rawValue)?.explanation ?? displayName
        case .lsm6ds3: "an LSM6DS3 (or LSM6DS3H): accelerometer and gyroscope"
        case .lsm6dsl: "an LSM6DSL (or LSM6DSM, LSM6DS3TR-C, ISM330DLC): accelerometer and gyroscope"
        case .lsm6dsr: "an LSM6DSR (or ISM330DHCX, ASM330LHH): accelerometer and gyroscope"
        case .lsm6dso: "an LSM6DSO (or LSM6DSOX; an LSM6DSO32 answers the same with twice the ranges and reads half its acceleration): accelerometer and gyroscope"
        case .lsm6dst: "an LSM6DST: accelerometer and gyroscope"
        case .lsm9ds1: "the accelerometer and gyroscope of an LSM9DS1 (Sense HAT)"
        case .bmi160: "a BMI160: accelerometer and gyroscope"
        case .lsm9ds1Magnetometer: "the magnetometer of an LSM9DS1 (or an LIS3MDL), in its own axes"
        case .icm20948: "an ICM-20948: accelerometer, gyroscope and its AK09916 magnetometer (read through the chip's I2C master)"
        case .bno055: "a BNO055: accelerometer, gyroscope, magnetometer and its own fused attitude (?motion=own)"
        }
    }

    /// The driver of this chip, or `nil` for a chip not driven from user space.
    ///
    /// `fusion`: run the chip's own sensor fusion (the BNO055's NDOF mode) and deliver its attitude;
    /// ignored by chips without one.
    package func makeDriver(address: UInt8, busPath: String, rate: Double, mountMatrix: MountMatrix, fusion: Bool = false) -> (any I2CChipDriver)? {
        switch family {
        case .mpu:
            MPUDriver(address: address, busPath: busPath, configuration: MPUConfiguration(rate: rate), mountMatrix: mountMatrix)
        case .lsm6dsx, .lsm9ds1:
            LSM6DSDriver(map: family == .lsm9ds1 ? .lsm9ds1 : .lsm6dsx, address: address, busPath: busPath,
                         configuration: LSM6DSConfiguration(map: family == .lsm9ds1 ? .lsm9ds1 : .lsm6dsx, rate: rate),
                         mountMatrix: mountMatrix)
        case .bmi160:
            BMI160Driver(address: address, busPath: busPath, configuration: BMI160Configuration(rate: rate), mountMatrix: mountMatrix)
        case .stMagnetometer:
            I2CMagnetometer.lsm9ds1.makeDriver(address: address, busPath: busPath, rate: rate, mountMatrix: mountMatrix, hosted: false)
        case .icm20948:
            ICM20948Driver(address: address, busPath: busPath, configuration: ICM20948Configuration(rate: rate), mountMatrix: mountMatrix)
        case .bno055:
            BNO055Driver(address: address, busPath: busPath, configuration: BNO055Configuration(rate: rate, fusion: fusion),
                         mountMatrix: mountMatrix)
        }
    }

    /// The sensors and their limits at the default ranges, and the lines `coremotion sensors` shows.
    package var capabilities: (sensors: [SensorKind: SensorCapability], ranges: String, rates: String) {
        switch family {
        case .mpu:
            let c = MPUConfiguration(), r = MPUConfiguration.rateLimits
            return ([.accelerometer: SensorCapability(minimumRate: r.lowerBound, maximumRate: r.upperBound,
                                                      range: Double(c.accelerometerRange), resolution: 1 / c.accelerometerCountsPerG),
                     .gyro: SensorCapability(minimumRate: r.lowerBound, maximumRate: r.upperBound,
                                             range: Double(c.gyroRange) * .pi / 180, resolution: .pi / 180 / c.gyroCountsPerDegree)],
                    "±\(c.accelerometerRange) g (\(formatNumber(c.accelerometerCountsPerG)) counts per g), ±\(c.gyroRange) °/s (\(formatNumber(c.gyroCountsPerDegree)) counts per °/s)",
                    "1000 / (1 + SMPLRT_DIV) Hz")
        case .lsm6dsx, .lsm9ds1:
            let map: LSM6DSMap = family == .lsm9ds1 ? .lsm9ds1 : .lsm6dsx
            let c = LSM6DSConfiguration(map: map), rates = map.rates.map(\.hz)
            let lo = rates.first ?? 0, hi = rates.last ?? 0
            return ([.accelerometer: SensorCapability(minimumRate: lo, maximumRate: hi, range: Double(c.accelerometerRange),
                                                      resolution: c.accelerometerGPerCount),
                     .gyro: SensorCapability(minimumRate: lo, maximumRate: hi, range: Double(c.gyroRange) * .pi / 180,
                                             resolution: c.gyroDegreesPerCount * .pi / 180)],
                    "±\(c.accelerometerRange) g (\(formatNumber(c.accelerometerGPerCount * 1000)) mg per count), ±\(c.gyroRange) °/s (\(formatNumber(c.gyroDegreesPerCount * 1000)) m°/s per count)",
                    rates.map(formatNumber).joined(separator: ", ") + " Hz (output data rates)")
        case .bmi160:
            let c = BMI160Configuration(), rates = BMI160Configuration.rates.map(\.hz)
            let lo = rates.first ?? 0, hi = rates.last ?? 0
            return ([.accelerometer: SensorCapability(minimumRate: lo, maximumRate: hi, range: Double(c.accelerometerRange),
                                                      resolution: 1 / c.accelerometerCountsPerG),
                     .gyro: SensorCapability(minimumRate: lo, maximumRate: hi, range: Double(c.gyroRange) * .pi / 180,
                                             resolution: .pi / 180 / c.gyroCountsPerDegree)],
                    "±\(c.accelerometerRange) g (\(formatNumber(c.accelerometerCountsPerG)) counts per g), ±\(c.gyroRange) °/s (\(formatNumber(c.gyroCountsPerDegree)) counts per °/s)",
                    rates.map(formatNumber).joined(separator: ", ") + " Hz (output data rates)")
        case .stMagnetometer:
            return ([.magnetometer: I2CMagnetometer.lsm9ds1.capability], "±4 gauss (0.014 µT per count)",
                    LSM9DS1MagnetometerDriver.rates.map { formatNumber($0.hz) }.joined(separator: ", ") + " Hz (output data rates)")
        case .icm20948:
            let c = ICM20948Configuration(), r = ICM20948Configuration.rateLimits
            return ([.accelerometer: SensorCapability(minimumRate: r.lowerBound, maximumRate: r.upperBound, range: Double(c.accelerometerRange),
                                                      resolution: 1 / c.accelerometerCountsPerG),
                     .gyro: SensorCapability(minimumRate: r.lowerBound, maximumRate: r.upperBound, range: Double(c.gyroRange) * .pi / 180,
                                             resolution: .pi / 180 / c.gyroCountsPerDegree),
                     .magnetometer: SensorCapability(minimumRate: r.lowerBound, maximumRate: 100, range: 4900, resolution: 0.15)],
                    "±\(c.accelerometerRange) g (\(formatNumber(c.accelerometerCountsPerG)) counts per g), ±\(c.gyroRange) °/s (\(formatNumber(c.gyroCountsPerDegree)) counts per °/s), magnetometer ±4900 µT (0.15 µT per count)",
                    "1100 / (1 + GYRO_SMPLRT_DIV) Hz; magnetometer 100 Hz")
        case .bno055:
            let r = BNO055Configuration.rateLimits
            return ([.accelerometer: SensorCapability(minimumRate: r.lowerBound, maximumRate: r.upperBound, range: 4, resolution: 0.01 / 9.80665),
                     .gyro: SensorCapability(minimumRate: r.lowerBound, maximumRate: r.upperBound, range: 2000 * .pi / 180, resolution: .pi / 180 / 16),
                     .magnetometer: SensorCapability(minimumRate: r.lowerBound, maximumRate: r.upperBound, range: 1300, resolution: 1.0 / 16)],
                    "±4 g (1 m/s² = 100 counts), ±2000 °/s (1 °/s = 16 counts), magnetometer (1 µT = 16 counts), quaternion (1 = 2^14 counts)",
                    "polled at up to 100 Hz (the fusion's output rate)")
        }
    }
}
