#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionFusion

/// The chips of InvenSense's MPU-6050/6500/9250 family this library drives from user space, told
/// apart by their `WHO_AM_I` register (0x75).
///
/// Their accelerometer and gyroscope share one register map (product specifications and register
/// maps: MPU-6000/6050 RM-MPU-6000A, MPU-6500 RM-MPU-6500A, MPU-9250 RM-MPU-9250A): the data at
/// 0x3B…0x48 (accelerometer X, Y, Z, temperature, gyroscope X, Y, Z, each a signed big-endian 16-bit
/// word), `SMPLRT_DIV` 0x19, `CONFIG` 0x1A, `GYRO_CONFIG` 0x1B, `ACCEL_CONFIG` 0x1C, `PWR_MGMT_1` 0x6B.
package enum MPUChip: String, Sendable, Hashable, CaseIterable {
    /// MPU-6050 (`WHO_AM_I` 0x68; the MPU-6000 and the MPU-9150's accelerometer and gyroscope answer the same).
    case mpu6050
    /// MPU-6500 (`WHO_AM_I` 0x70): accelerometer and gyroscope, no magnetometer.
    case mpu6500
    /// MPU-9250 (`WHO_AM_I` 0x71): an MPU-6500 with an AK8963 magnetometer behind its I2C bypass.
    case mpu9250
    /// MPU-9255 (`WHO_AM_I` 0x73): as the MPU-9250.
    case mpu9255

    /// The chip answering `WHO_AM_I` with `value`, or `nil` for another chip.
    package init?(whoAmI value: UInt8) {
        guard let c = Self.allCases.first(where: { $0.whoAmI == value }) else { return nil }
        self = c
    }

    /// The value of its `WHO_AM_I` register.
    package var whoAmI: UInt8 { I2CChip(self).idValue }

    /// `MPU-6050`, `MPU-6500`, …
    package var displayName: String { I2CChip(self).displayName }

    /// What `coremotion sensors` says of it: `an MPU-6500, no magnetometer`.
    package var explanation: String {
        switch self {
        case .mpu6050: "an MPU-6050 (or MPU-6000, MPU-9150), no magnetometer read"
        case .mpu6500: "an MPU-6500, no magnetometer"
        case .mpu9250, .mpu9255: "an \(displayName)"
        }
    }

    /// `true` for the MPU-6500 generation, which has `ACCEL_CONFIG2` (0x1D) for the accelerometer's filter.
    var hasAccelConfig2: Bool { self != .mpu6050 }

    /// `true` for the chips with an AK8963 magnetometer behind their I2C bypass (MPU-9250, MPU-9255).
    package var hasAK8963: Bool { self == .mpu9250 || self == .mpu9255 }

    /// The FIFO's size in bytes: 1024 on the MPU-6050 (RM-MPU-6000A), 512 on the MPU-6500 generation
    /// (MPU-6500 and MPU-9250 product specifications).
    package var fifoCapacity: Int { self == .mpu6050 ? 1024 : 512 }
}

/// The registers of the MPU family used here.
enum MPURegister {
    static let sampleRateDivider: UInt8 = 0x19, config: UInt8 = 0x1A, gyroConfig: UInt8 = 0x1B
    static let accelConfig: UInt8 = 0x1C, accelConfig2: UInt8 = 0x1D
    static let accelXHigh: UInt8 = 0x3B, powerManagement1: UInt8 = 0x6B, powerManagement2: UInt8 = 0x6C
    static let whoAmI: UInt8 = 0x75
    /// `INT_PIN_CFG` (BYPASS_EN bit 1: the auxiliary I2C bus, and the AK8963 on it, joins the host's)
    /// and `USER_CTRL` (I2C_MST_EN bit 5 must be 0 for the bypass).
    static let intPinConfig: UInt8 = 0x37, userControl: UInt8 = 0x6A
    /// `FIFO_EN` (0x23: TEMP bit 7, XG/YG/ZG bits 6:4, ACCEL bit 3), `INT_STATUS` (0x3A, cleared
    /// when read; FIFO_OFLOW_INT bit 4 is set when the FIFO overflowed and its oldest bytes were
    /// lost), `FIFO_COUNTH`/`FIFO_COUNTL` (0x72/0x73, bytes in the FIFO, latched when the high byte
    /// is read) and `FIFO_R_W` (0x74: each read pops one byte). The FIFO holds the enabled data
    /// registers in the order of their addresses, one set per sample.
    static let fifoEnable: UInt8 = 0x23, intStatus: UInt8 = 0x3A, fifoCountHigh: UInt8 = 0x72, fifoData: UInt8 = 0x74
    /// `USER_CTRL` bits: FIFO_EN (6) and FIFO_RESET (2, acts only while FIFO_EN is 0, clears itself).
    static let userControlFIFOEnable: UInt8 = 0x40, userControlFIFOReset: UInt8 = 0x04
    /// `FIFO_EN` for the accelerometer and the three gyroscope axes: 12 bytes a sample.
    static let fifoAccelGyro: UInt8 = 0x78
    /// `INT_STATUS` FIFO_OFLOW_INT.
    static let fifoOverflow: UInt8 = 0x10
}

/// How an MPU chip is set up: full-scale ranges and the sample rate.
package struct MPUConfiguration: Sendable, Hashable {
    /// Accelerometer full scale in g: 2, 4, 8 or 16. Default 2, as the kernel's `inv_mpu6050` sets at
    /// probe, so `i2c:` and `iio:` read a chip alike.
    package var accelerometerRange: Int
    /// Gyroscope full scale in °/s: 250, 500, 1000 or 2000. Default 2000, as the kernel's driver.
    package var gyroRange: Int
    /// Sample rate in Hz, 4…1000; the chip's is `1000 / (1 + SMPLRT_DIV)` (see ``actualRate``).
    package private(set) var rate: Double
    /// Read the samples from the chip's FIFO (several a read, timed by the rate divider) rather than
    /// one read of the data registers per sample. Default: above ``fifoThreshold``.
    package var usesFIFO: Bool

    /// The rate above which the FIFO is read by default, Hz (at 100 Hz and below one read per sample
    /// costs little, and the data registers are what `i2c-stub`, which has no FIFO, can hold).
    package static let fifoThreshold = 100.0

    /// The accelerometer ranges the chips offer, in g.
    package static let accelerometerRanges = [2, 4, 8, 16]
    /// The gyroscope ranges the chips offer, in °/s.
    package static let gyroRanges = [250, 500, 1000, 2000]
    /// The slowest and fastest rates, Hz (`SMPLRT_DIV` 255 and 0 at the 1 kHz internal rate).
    package static let rateLimits: ClosedRange<Double> = 1000.0 / 256...1000

    /// Creates a configuration; ranges not offered fall back to the defaults, the rate is clamped.
    /// `fifo`: read the FIFO (`nil`: above ``fifoThreshold``).
    package init(accelerometerRange: Int = 2, gyroRange: Int = 2000, rate: Double = 100, fifo: Bool? = nil) {
        self.accelerometerRange = Self.accelerometerRanges.contains(accelerometerRange) ? accelerometerRange : 2
        self.gyroRange = Self.gyroRanges.contains(gyroRange) ? gyroRange : 2000
        self.rate = rate.isFinite && rate > 0 ? min(max(rate, Self.rateLimits.lowerBound), Self.rateLimits.upperBound) : 100
        usesFIFO = false
        usesFIFO = fifo ?? (actualRate > Self.fifoThreshold)
    }

    /// How often the FIFO is read, Hz: about every 10 samples, at least 50 times a second (a 512-byte
    /// FIFO holds 42 samples of 12 bytes: 42 ms at 1 kHz).
    package var fifoPollRate: Double { min(actualRate, max(50, actualRate / 10)) }

    /// `SMPLRT_DIV`: the divider of the 1 kHz internal rate giving the lowest rate at or above ``rate``.
    package var sampleRateDivider: UInt8 {
        UInt8(min(255, max(0, Int((1000 / rate).rounded(.down)) - 1)))  // safe: `rate` is set only by `init`, clamped to `rateLimits` (finite, 3.9…1000 Hz)
    }

    /// The rate the chip really runs at, Hz: `1000 / (1 + SMPLRT_DIV)`.
    package var actualRate: Double { 1000 / Double(1 + Int(sampleRateDivider)) }

    /// `DLPF_CFG`: the digital low-pass filter with a bandwidth below half the rate (which also keeps
    /// the internal rate at 1 kHz): 184, 94, 44, 21, 10 or 5 Hz.
    package var lowPassSetting: UInt8 {
        let r = actualRate
        if r >= 400 { return 1 }
        if r >= 200 { return 2 }
        if r >= 100 { return 3 }
        if r >= 50 { return 4 }
        if r >= 20 { return 5 }
        return 6
    }

    /// `FS_SEL` / `AFS_SEL` bits 4:3 for a range.
    static func rangeBits(_ range: Int, in ranges: [Int]) -> UInt8 { UInt8(ranges.firstIndex(of: range) ?? 0) << 3 }

    /// Accelerometer counts per g (datasheet sensitivity): 16384 at ±2 g, halving with each range.
    package var accelerometerCountsPerG: Double { 32768 / Double(accelerometerRange) }

    /// Gyroscope counts per °/s (datasheet sensitivity): 131, 65.5, 32.8, 16.4.
    package var gyroCountsPerDegree: Double {
        switch gyroRange {
        case 250: 131
        case 500: 65.5
        case 1000: 32.8
        default: 16.4
        }
    }
}

/// The user-space driver of an MPU-6050/6500/9250 chip as a pure state machine: it says which
/// registers to read and write, and turns what was read into Core Motion samples. ``I2CSource``
/// carries its actions out on an ``I2CBus``; tests feed it bytes.
///
/// Sequence: read `WHO_AM_I` → write `PWR_MGMT_1` (wake, gyro PLL clock), `PWR_MGMT_2` (all axes
/// on), `SMPLRT_DIV`, `CONFIG`, `GYRO_CONFIG`, `ACCEL_CONFIG` (and `ACCEL_CONFIG2` on the 6500
/// generation; `USER_CTRL` 0 and `INT_PIN_CFG` BYPASS_EN on the MPU-9250/9255, so that their AK8963
/// answers at 0x0C: ``AK8963Driver``) → read them back → ``Action/streaming``; then each ``sampleRead`` of 14 bytes decodes
/// into one accelerometer and one gyroscope sample.
///
/// Units and signs are those of the IIO path for `inv_mpu6050` (see ``IIOUnits``): the chip measures
/// specific force (face up, +1 g on its Z), which Core Motion reads as −1 g, so the accelerometer goes
/// through the mount matrix times −1; the gyroscope through the matrix alone, in rad/s.
package struct MPUDriver: I2CChipDriver {
    /// What the driver asks for (the actions of every chip driver).
    package typealias Action = I2CDriverAction

    private enum Phase: Sendable, Hashable { case identifying, verifying, verifyingFIFO, clearingStatus, streaming, failed }
    /// The reads of one FIFO poll: the count, the samples, then `INT_STATUS`; `discard` reads
    /// `INT_STATUS` only to clear it.
    private enum FIFOStep: Sendable, Hashable { case count, data(readTime: Double), status(readTime: Double), discard }

    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Ranges and rate.
    package let configuration: MPUConfiguration
    /// Chip axes → device axes (the kernel's `mount_matrix` sense). Default identity.
    package let mountMatrix: MountMatrix
    /// The chip identified, once `WHO_AM_I` was read.
    package private(set) var chip: MPUChip?
    private var phase = Phase.identifying
    private var fifoStep = FIFOStep.count
    /// The samples of the poll under way, until `INT_STATUS` says the FIFO did not overflow.
    private var fifoBytes: [UInt8] = []
    private var fifoClock: FIFOTimestamps
    /// FIFO overflows so far (each one reported as ``I2CDriverAction/interrupted(_:)``).
    package private(set) var fifoOverflows = 0
    /// `true` once the FIFO was given up for direct reads: it stayed empty from the start (a chip
    /// whose FIFO does not fill, or register memory such as `i2c-stub`).
    package private(set) var fifoAbandoned = false
    /// The first FIFO count's read time, until a sample has come through the FIFO.
    private var fifoEmptySince: Double?
    private var fifoSeenData = false
    /// How long an empty FIFO is waited for before reading the data registers instead, s: 10 sample
    /// periods, at least 50 ms.
    package var fifoGiveUpAfter: Double { max(0.05, 10 / configuration.actualRate) }
    private var readsFIFO: Bool { configuration.usesFIFO && !fifoAbandoned }
    private let accelFrame: MountMatrix
    private let gyroFrame: MountMatrix

    /// Creates the driver of the chip at `address` on `busPath`.
    package init(address: UInt8, busPath: String, configuration: MPUConfiguration = MPUConfiguration(), mountMatrix: MountMatrix = .identity) {
        self.address = address
        self.busPath = busPath
        self.configuration = configuration
        self.mountMatrix = mountMatrix
        accelFrame = IIOUnits.frame(kind: .accelerometer, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        gyroFrame = IIOUnits.frame(kind: .gyro, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        fifoClock = FIFOTimestamps(period: 1 / configuration.actualRate)
    }

    /// Bytes of one sample in the FIFO: accelerometer X, Y, Z then gyroscope X, Y, Z, big-endian.
    package static let fifoFrameSize = 12

    /// The read of one sample: accelerometer, temperature and gyroscope, 0x3B…0x48.
    package static let sampleRead = Action.read(register: MPURegister.accelXHigh, count: 14)

    /// `true` once the chip is set up.
    package var isStreaming: Bool { phase == .streaming }

    /// The read of one sample: 14 bytes from `ACCEL_XOUT_H` (0x3B); with the FIFO, the FIFO count
    /// (2 bytes from `FIFO_COUNTH`, 0x72), which the driver follows with the samples and `INT_STATUS`.
    package var dataRead: (register: UInt8, count: Int) {
        readsFIFO ? (MPURegister.fifoCountHigh, 2) : (MPURegister.accelXHigh, 14)
    }

    /// The configured rate, Hz (``MPUConfiguration/actualRate``).
    package var actualRate: Double { configuration.actualRate }

    /// The sample rate, or with the FIFO ``MPUConfiguration/fifoPollRate``.
    package var pollRate: Double { readsFIFO ? configuration.fifoPollRate : configuration.actualRate }

    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }

    /// The first actions: read `WHO_AM_I`.
    package mutating func start() -> [Action] {
        phase = .identifying
        return [.read(register: MPURegister.whoAmI, count: 1)]
    }

    /// The configuration writes, in order.
    package func configurationWrites(for chip: MPUChip) -> [(register: UInt8, value: UInt8)] {
        let c = configuration
        var w: [(UInt8, UInt8)] = [
            (MPURegister.powerManagement1, 0x01),  // SLEEP off, clock from the X gyro's PLL
            (MPURegister.powerManagement2, 0x00),  // every axis on
            (MPURegister.sampleRateDivider, c.sampleRateDivider),
            (MPURegister.config, c.lowPassSetting),
            (MPURegister.gyroConfig, MPUConfiguration.rangeBits(c.gyroRange, in: MPUConfiguration.gyroRanges)),
            (MPURegister.accelConfig, MPUConfiguration.rangeBits(c.accelerometerRange, in: MPUConfiguration.accelerometerRanges)),
        ]
        if chip.hasAccelConfig2 { w.append((MPURegister.accelConfig2, c.lowPassSetting)) }
        if chip.hasAK8963 {
            // The I2C bypass, for the AK8963: the MPU's own I2C master off, BYPASS_EN on.
            w += [(MPURegister.userControl, 0x00), (MPURegister.intPinConfig, 0x02)]
        }
        if c.usesFIFO {
            // Accelerometer and gyroscope into the FIFO, then reset it (FIFO_EN off) and start it.
            w += [(MPURegister.fifoEnable, MPURegister.fifoAccelGyro)] + Self.fifoResetWrites
        }
        return w.map { (register: $0.0, value: $0.1) }
    }

    /// `USER_CTRL` writes that empty the FIFO and start it again: FIFO off, FIFO_RESET (which acts
    /// only while the FIFO is off), FIFO on. `I2C_MST_EN` stays 0 (an MPU-9250's bypass needs it so).
    static let fifoResetWrites: [(UInt8, UInt8)] = [
        (MPURegister.userControl, 0x00), (MPURegister.userControl, MPURegister.userControlFIFOReset),
        (MPURegister.userControl, MPURegister.userControlFIFOEnable),
    ]

    /// Bytes read for the last ``Action/read(register:count:)``, at `timestamp` (seconds on `CLOCK_MONOTONIC`).
    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [Action] {
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no WHO_AM_I from \(place)", path: busPath)) }
            guard let c = MPUChip(whoAmI: id) else {
                return fail(SourceError(.unavailable, "\(place) answers WHO_AM_I \(I2CAddress.hex(id)): not a chip of the MPU-6050/6500/9250 family", path: busPath))
            }
            chip = c
            phase = .verifying
            return configurationWrites(for: c).map { .write(register: $0.register, value: $0.value) }
                + [.read(register: MPURegister.sampleRateDivider, count: 4), .read(register: MPURegister.powerManagement1, count: 1)]
        case .verifying:
            // Two reads come back in turn: 0x19…0x1C, then PWR_MGMT_1.
            guard let c = chip else { return [] }
            let w = configurationWrites(for: c)
            if bytes.count == 4 {
                let expected = w.filter { (MPURegister.sampleRateDivider...MPURegister.accelConfig).contains($0.register) }.sorted { $0.register < $1.register }.map { $0.value }
                // Bits 7:5 of the range registers start self-tests, bits 2:0 are reserved: compare 4:3.
                let got = [bytes[0], bytes[1] & 0x07, bytes[2] & 0x18, bytes[3] & 0x18]
                let want = [expected[0], expected[1] & 0x07, expected[2] & 0x18, expected[3] & 0x18]
                if got != want {
                    return fail(SourceError(.io, "the \(c.displayName) at \(place) did not keep its configuration (wrote \(want.map(I2CAddress.hex)), read back \(got.map(I2CAddress.hex)))", path: busPath))
                }
                return []
            }
            if let p = bytes.first, p & 0x40 != 0 {
                return fail(SourceError(.io, "the \(c.displayName) at \(place) stays asleep (PWR_MGMT_1 \(I2CAddress.hex(p)))", path: busPath))
            }
            if configuration.usesFIFO {
                phase = .verifyingFIFO
                return [.read(register: MPURegister.fifoEnable, count: 1), .read(register: MPURegister.userControl, count: 1)]
            }
            phase = .streaming
            return [.streaming]
        case .verifyingFIFO:
            // FIFO_EN, then USER_CTRL (its FIFO_EN bit; FIFO_RESET clears itself).
            guard let c = chip, let b = bytes.first else { return fail(SourceError(.io, "no FIFO configuration from \(place)", path: busPath)) }
            if fifoBytes.isEmpty {
                guard b == MPURegister.fifoAccelGyro else {
                    return fail(SourceError(.io, "the \(c.displayName) at \(place) did not keep its FIFO configuration (FIFO_EN \(I2CAddress.hex(b)), wrote \(I2CAddress.hex(MPURegister.fifoAccelGyro)))", path: busPath))
                }
                fifoBytes = [b]
                return []
            }
            fifoBytes = []
            guard b & MPURegister.userControlFIFOEnable != 0 else {
                return fail(SourceError(.io, "the \(c.displayName) at \(place) did not start its FIFO (USER_CTRL \(I2CAddress.hex(b)))", path: busPath))
            }
            // A stale overflow flag from before the reset is cleared by reading INT_STATUS.
            phase = .clearingStatus
            return [.read(register: MPURegister.intStatus, count: 1)]
        case .clearingStatus:
            phase = .streaming
            fifoStep = .count
            fifoClock.reset()
            return [.streaming]
        case .streaming where readsFIFO:
            return receivedFIFO(bytes, at: timestamp)
        case .streaming:
            guard bytes.count == 14 else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of 14 from \(place)", path: busPath))
            }
            return [.deliver(decode(bytes, at: timestamp))]
        case .failed:
            return []
        }
    }

    /// One step of a FIFO poll: the count (stamps the poll), the samples, `INT_STATUS`.
    private mutating func receivedFIFO(_ bytes: [UInt8], at timestamp: Double) -> [Action] {
        let capacity = chip?.fifoCapacity ?? 512, frame = Self.fifoFrameSize
        switch fifoStep {
        case .count:
            guard bytes.count == 2 else { return malformed(bytes.count, expected: 2) }
            let count = Int(bytes[0]) << 8 | Int(bytes[1])
            // A full FIFO has lost its oldest bytes: its frames no longer start where they seem to.
            if count >= capacity { return overflowed(clearStatus: true) }
            let frames = count / frame
            if frames > 0 { fifoSeenData = true }
            if !fifoSeenData {
                // Never a sample: a FIFO that does not fill (register memory, a clone without one).
                let since = fifoEmptySince ?? timestamp
                fifoEmptySince = since
                if timestamp - since >= fifoGiveUpAfter {
                    fifoAbandoned = true
                    return [.notice("the \(chip?.displayName ?? "chip") at \(place): its FIFO stays empty; reading the data registers instead, one read per sample")]
                }
            }
            guard frames > 0 else { return [] }
            fifoStep = .data(readTime: timestamp)
            return [.readFIFO(register: MPURegister.fifoData, count: frames * frame)]
        case .data(let readTime):
            guard bytes.count % frame == 0, !bytes.isEmpty else { fifoStep = .count; return malformed(bytes.count, expected: frame) }
            fifoBytes = bytes
            fifoStep = .status(readTime: readTime)
            return [.read(register: MPURegister.intStatus, count: 1)]
        case .status(let readTime):
            fifoStep = .count
            guard let status = bytes.first else { return malformed(0, expected: 1) }
            // An overflow since the last poll's INT_STATUS (before or during this poll's reads):
            // the bytes read may not start at a sample's first byte. None is delivered.
            if status & MPURegister.fifoOverflow != 0 { return overflowed(clearStatus: false) }
            let n = fifoBytes.count / frame
            let stamps = fifoClock.stamps(count: n, readTime: readTime)
            var samples: [RawSample] = []
            samples.reserveCapacity(2 * n)
            for k in 0..<n { appendFrame(fifoBytes, at: k * frame, timestamp: stamps[k], to: &samples) }
            fifoBytes.removeAll(keepingCapacity: true)
            return [.deliver(samples)]
        case .discard:
            fifoStep = .count
            return []
        }
    }

    /// The FIFO overflowed: drop what was read, empty the FIFO and start again, say so.
    private mutating func overflowed(clearStatus: Bool) -> [Action] {
        fifoOverflows += 1
        fifoBytes.removeAll(keepingCapacity: true)
        fifoClock.reset()
        let name = chip?.displayName ?? "chip"
        let e = SourceError(.io, "the \(name) at \(place): its FIFO overflowed (read too late), samples were lost; FIFO reset", path: busPath)
        var out: [Action] = [.interrupted(e)]
        out += Self.fifoResetWrites.map { .write(register: $0.0, value: $0.1) }
        if clearStatus {
            // The overflow flag is still set: clear it, or the next poll would be dropped too.
            fifoStep = .discard
            out.append(.read(register: MPURegister.intStatus, count: 1))
        } else {
            fifoStep = .count
        }
        return out
    }

    private mutating func malformed(_ got: Int, expected: Int) -> [Action] {
        fail(SourceError(.malformedInput, "\(got) bytes instead of \(expected) from \(place)", path: busPath))
    }

    /// A failed transfer: the error as Core Motion reports it (a chip that stops answering is a removed device).
    package mutating func transferFailed(_ error: LinuxIOError) -> [Action] {
        let e = i2cTransferError(error, chip: chip?.displayName ?? "chip", place: place, busPath: busPath)
        return fail(e)
    }

    private mutating func fail(_ error: SourceError) -> [Action] {
        phase = .failed
        return [.fail(error)]
    }

    /// Decodes the FIFO sample at `b[i]` (12 bytes: accelerometer, gyroscope) into two samples.
    private func appendFrame(_ b: [UInt8], at i: Int, timestamp: Double, to out: inout [RawSample]) {
        let c = configuration
        let accel = Vector3(int16BE(b, i), int16BE(b, i + 2), int16BE(b, i + 4)) * (1 / c.accelerometerCountsPerG)
        let gyro = Vector3(int16BE(b, i + 6), int16BE(b, i + 8), int16BE(b, i + 10)) * (.pi / 180 / c.gyroCountsPerDegree)
        out.append(RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero))
        out.append(RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero))
    }

    /// Decodes 14 bytes from 0x3B into an accelerometer and a gyroscope sample.
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        let c = configuration
        let accel = Vector3(int16BE(b, 0), int16BE(b, 2), int16BE(b, 4)) * (1 / c.accelerometerCountsPerG)
        let gyro = Vector3(int16BE(b, 8), int16BE(b, 10), int16BE(b, 12)) * (.pi / 180 / c.gyroCountsPerDegree)
        return [RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero),
                RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero)]
    }
}
