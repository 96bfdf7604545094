import MotionSources
import MotionFusion

/// How a Bosch BMI160 is set up: full-scale ranges and the output data rate (datasheet
/// BST-BMI160-DS000: `ACC_CONF` 0x40, `ACC_RANGE` 0x41, `GYR_CONF` 0x42, `GYR_RANGE` 0x43).
package struct BMI160Configuration: Sendable, Hashable {
    /// Accelerometer full scale in g: 2, 4, 8 or 16. Default 2 (16384 counts per g).
    package let accelerometerRange: Int
    /// Gyroscope full scale in °/s: 125, 250, 500, 1000 or 2000. Default 2000 (16.4 counts per °/s),
    /// the chip's reset value, which the kernel's `bmi160` reads as its scale.
    package let gyroRange: Int
    /// The output data rate, Hz: the slowest at or above the demand, 25…800 Hz (both sensors).
    package let actualRate: Double
    let odrCode: UInt8
    /// Read the samples from the chip's FIFO (header mode, several a read) rather than one read of
    /// the data registers per sample. Default: above 100 Hz (``MPUConfiguration/fifoThreshold``).
    package let usesFIFO: Bool

    /// Accelerometer ranges (g), `ACC_RANGE` values and counts per g.
    package static let accelerometerRanges: [(g: Int, code: UInt8, countsPerG: Double)] = [(2, 0x03, 16384), (4, 0x05, 8192), (8, 0x08, 4096), (16, 0x0C, 2048)]
    /// Gyroscope ranges (°/s), `GYR_RANGE` values and counts per °/s.
    package static let gyroRanges: [(dps: Int, code: UInt8, countsPerDegree: Double)] = [(2000, 0, 16.4), (1000, 1, 32.8), (500, 2, 65.6), (250, 3, 131.2), (125, 4, 262.4)]
    /// Output data rates (Hz) both sensors offer, with their `acc_odr`/`gyr_odr` code.
    package static let rates: [(hz: Double, code: UInt8)] = [(25, 6), (50, 7), (100, 8), (200, 9), (400, 10), (800, 11)]

    /// Creates a configuration; ranges the chip lacks fall back to the defaults; the rate is the
    /// slowest output data rate at or above `rate` (800 Hz above them all; 100 Hz for a rate that is
    /// not a positive number). `fifo`: read the FIFO (`nil`: above 100 Hz).
    package init(accelerometerRange: Int = 2, gyroRange: Int = 2000, rate: Double = 100, fifo: Bool? = nil) {
        self.accelerometerRange = Self.accelerometerRanges.contains { $0.g == accelerometerRange } ? accelerometerRange : 2
        self.gyroRange = Self.gyroRanges.contains { $0.dps == gyroRange } ? gyroRange : 2000
        let want = rate.isFinite && rate > 0 ? rate : 100
        let pick = Self.rates.first { $0.hz >= want - 1e-9 } ?? Self.rates[Self.rates.count - 1]
        actualRate = pick.hz
        odrCode = pick.code
        usesFIFO = fifo ?? (pick.hz > MPUConfiguration.fifoThreshold)
    }

    /// How often the FIFO is read, Hz: about every 10 samples, at least 50 times a second (its 1024
    /// bytes hold 78 frames of 13 bytes: 97 ms at 800 Hz).
    package var fifoPollRate: Double { chipFIFOPollRate(actualRate) }

    /// Accelerometer counts per g (datasheet sensitivity).
    package var accelerometerCountsPerG: Double { Self.accelerometerRanges.first { $0.g == accelerometerRange }?.countsPerG ?? 16384 }
    /// Gyroscope counts per °/s (datasheet sensitivity).
    package var gyroCountsPerDegree: Double { Self.gyroRanges.first { $0.dps == gyroRange }?.countsPerDegree ?? 16.4 }

    /// The configuration writes after the power-up commands, in register order (0x40…0x43):
    /// `ACC_CONF` (normal filter `acc_bwp` 010, ODR), `ACC_RANGE`, `GYR_CONF` (normal filter
    /// `gyr_bwp` 10, ODR), `GYR_RANGE`.
    package var writes: [(register: UInt8, value: UInt8)] {
        [(0x40, 0x20 | odrCode),
         (0x41, Self.accelerometerRanges.first { $0.g == accelerometerRange }?.code ?? 0x03),
         (0x42, 0x20 | odrCode),
         (0x43, Self.gyroRanges.first { $0.dps == gyroRange }?.code ?? 0)]
    }
}

/// The user-space driver of a Bosch BMI160 (accelerometer and gyroscope) as a state machine
/// (``I2CChipDriver``), from its datasheet (BST-BMI160-DS000).
///
/// Sequence: read `CHIP_ID` (0x00 = 0xD1) → write `CMD` (0x7E) 0x11 (accelerometer to normal mode),
/// pause 5 ms (its start-up takes 3.8 ms), `CMD` 0x15 (gyroscope to normal mode), pause 81 ms (80 ms
/// start-up) → write the configuration (``BMI160Configuration/writes``) → read 0x40…0x43 back, then
/// `PMU_STATUS` (0x03), which must say both sensors are in normal mode (bits 5:4 and 3:2 = 01): a chip
/// left in suspend would read zeros forever → ``I2CDriverAction/streaming``; then each read of 12
/// bytes from `DATA_8` (0x0C: gyroscope X, Y, Z, then accelerometer, little-endian) gives one sample
/// of each. No soft reset: the driver never waits on a bit the chip clears.
///
/// Units and signs as for the other chips and the kernel's `bmi160`: the accelerometer reads +1 g on
/// Z face up (specific force), Core Motion −1 g, so the mount matrix times −1; the gyroscope
/// (right-handed, the datasheet's axis figure shared by both sensors) through the matrix alone, in rad/s.
///
/// ## FIFO
/// Above 100 Hz (``BMI160Configuration/usesFIFO``) the samples come from the chip's 1024-byte FIFO
/// in header mode: `FIFO_CONFIG_1` (0x47) = 0xD0 (fifo_gyr_en bit 7, fifo_acc_en bit 6,
/// fifo_header_en bit 4), then `CMD` 0xB0 (fifo_flush), read back. Each poll reads `FIFO_LENGTH_0/1`
/// (0x22/0x23, bytes in the FIFO, 11 bits), then that many bytes from `FIFO_DATA` (0x24, which does
/// not auto-increment). Frames: header 0x8C (bits 7:6 10 regular, gyroscope bit 3, accelerometer
/// bit 2; bits 1:0 interrupt tags) then gyroscope and accelerometer as in the data registers; 0x40
/// a skip frame (1 byte: frames lost because the FIFO was full); 0x44 sensor time (3 bytes); 0x48
/// input configuration changed (1 byte); 0x80 over-read (the FIFO was empty). A skip frame, or a
/// header that is none of these (the read did not start at a frame), is an overflow: the batch is
/// dropped, the FIFO flushed, one ``I2CDriverAction/interrupted(_:)``. A FIFO that stays empty for
/// 10 periods (register memory such as `i2c-stub`) is given up for direct reads, said once in the
/// log (``I2CDriverAction/notice(_:)``: no sample is lost, so the consumers see no event).
package struct BMI160Driver: I2CChipDriver {
    private enum Phase: Sendable, Hashable { case identifying, verifying, checkingPower, verifyingFIFO, streaming, failed }
    /// The reads of one FIFO poll: the length (stamps the poll), then the frames.
    private enum FIFOStep: Sendable, Hashable { case length, data(readTime: Double) }

    /// `FIFO_CONFIG_1` with gyroscope, accelerometer and headers on.
    static let fifoConfig1: UInt8 = 0xD0
    /// `CMD` fifo_flush.
    static let fifoFlush: UInt8 = 0xB0
    /// Bytes of one gyroscope-and-accelerometer frame with its header.
    package static let fifoFrameSize = 13

    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Ranges and rate.
    package let configuration: BMI160Configuration
    private var phase = Phase.identifying
    private let accelFrame: MountMatrix
    private let gyroFrame: MountMatrix
    private var fifoStep = FIFOStep.length
    private var fifoClock: FIFOTimestamps
    private var fifoWatch: ChipFIFOWatch
    /// FIFO overflows so far (each one reported as ``I2CDriverAction/interrupted(_:)``).
    package private(set) var fifoOverflows = 0
    /// `true` once the FIFO was given up for direct reads (it stayed empty from the start).
    package private(set) var fifoAbandoned = false
    private var readsFIFO: Bool { configuration.usesFIFO && !fifoAbandoned }

    /// Creates the driver of the chip at `address` on `busPath`; `mountMatrix` maps chip axes to
    /// device axes (default identity).
    package init(address: UInt8, busPath: String, configuration: BMI160Configuration = BMI160Configuration(), mountMatrix: MountMatrix = .identity) {
        self.address = address
        self.busPath = busPath
        self.configuration = configuration
        accelFrame = IIOUnits.frame(kind: .accelerometer, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        gyroFrame = IIOUnits.frame(kind: .gyro, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        fifoClock = FIFOTimestamps(period: 1 / configuration.actualRate)
        fifoWatch = ChipFIFOWatch(rate: configuration.actualRate)
    }

    package var isStreaming: Bool { phase == .streaming }
    /// 12 bytes from `DATA_8` (0x0C); with the FIFO, `FIFO_LENGTH_0/1` (0x22, 2 bytes), which the
    /// driver follows with the frames.
    package var dataRead: (register: UInt8, count: Int) { readsFIFO ? (0x22, 2) : (0x0C, 12) }
    package var actualRate: Double { configuration.actualRate }
    /// The sample rate, or with the FIFO ``BMI160Configuration/fifoPollRate``.
    package var pollRate: Double { readsFIFO ? configuration.fifoPollRate : configuration.actualRate }

    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }

    package mutating func start() -> [I2CDriverAction] {
        phase = .identifying
        return [.read(register: 0x00, count: 1)]
    }

    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no CHIP_ID from \(place)", path: busPath)) }
            guard id == I2CChip.bmi160.idValue else {
                return fail(SourceError(.unavailable, "\(place) answers CHIP_ID (0x00) \(I2CAddress.hex(id)): not a BMI160 (0xd1)", path: busPath))
            }
            phase = .verifying
            return [.write(register: 0x7E, value: 0x11), .pause(seconds: 0.005), .write(register: 0x7E, value: 0x15), .pause(seconds: 0.081)]
                + configuration.writes.map { .write(register: $0.register, value: $0.value) }
                + [.read(register: 0x40, count: 4), .read(register: 0x03, count: 1)]
        case .verifying:
            let want = configuration.writes.map(\.value)
            // ACC_CONF bit 7 (acc_us) and GYR_CONF bits 7:6 are ours too (0); GYR_RANGE bits 7:3 reserved.
            let got = bytes.count == 4 ? [bytes[0], bytes[1] & 0x0F, bytes[2], bytes[3] & 0x07] : bytes
            if got != want {
                return fail(SourceError(.io, "the BMI160 at \(place) did not keep its configuration (wrote \(want.map(I2CAddress.hex)), read back \(bytes.map(I2CAddress.hex)))", path: busPath))
            }
            phase = .checkingPower
            return []
        case .checkingPower:
            guard let p = bytes.first, p & 0x3C == 0x14 else {
                return fail(SourceError(.io, "the BMI160 at \(place) did not enter normal mode (PMU_STATUS \(I2CAddress.hex(bytes.first ?? 0)), want accelerometer and gyroscope 01)", path: busPath))
            }
            if configuration.usesFIFO {
                phase = .verifyingFIFO
                return [.write(register: 0x47, value: Self.fifoConfig1), .write(register: 0x7E, value: Self.fifoFlush),
                        .read(register: 0x47, count: 1)]
            }
            phase = .streaming
            return [.streaming]
        case .verifyingFIFO:
            // Bits 3:1 (interrupt tags, sensor time frames) are ours too (0); bit 0 reserved.
            guard let b = bytes.first, b & 0xFE == Self.fifoConfig1 else {
                return fail(SourceError(.io, "the BMI160 at \(place) did not keep its FIFO configuration (FIFO_CONFIG_1 \(I2CAddress.hex(bytes.first ?? 0)), wrote \(I2CAddress.hex(Self.fifoConfig1)))", path: busPath))
            }
            phase = .streaming
            fifoStep = .length
            fifoClock.reset()
            return [.streaming]
        case .streaming where readsFIFO:
            return receivedFIFO(bytes, at: timestamp)
        case .streaming:
            guard bytes.count == 12 else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of 12 from \(place)", path: busPath))
            }
            return [.deliver(decode(bytes, at: timestamp))]
        case .failed:
            return []
        }
    }

    /// One step of a FIFO poll: the length (stamps the poll), then the frames.
    private mutating func receivedFIFO(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        switch fifoStep {
        case .length:
            guard bytes.count == 2 else { return malformed(bytes.count, expected: 2) }
            let length = (Int(bytes[1] & 0x07) << 8) | Int(bytes[0])
            if fifoWatch.counted(length / Self.fifoFrameSize, at: timestamp) {
                // Nothing was lost: a log line, not an error in the app's handler (``MPUDriver``'s rule).
                fifoAbandoned = true
                return [.notice("the BMI160 at \(place): its FIFO stays empty; reading the data registers instead, one read per sample")]
            }
            guard length > 0 else { return [] }
            fifoStep = .data(readTime: timestamp)
            return [.readFIFO(register: 0x24, count: length)]
        case .data(let readTime):
            fifoStep = .length
            var frames: [Int] = []
            var i = 0
            parse: while i < bytes.count {
                let header = bytes[i]
                switch header {
                case _ where header & 0xFC == 0x8C:
                    // A frame cut short by the read's end stays in the chip for the next read; its
                    // bytes here are not a sample. Whole frames only.
                    guard i + Self.fifoFrameSize <= bytes.count else { return overflowed() }
                    frames.append(i + 1)
                    i += Self.fifoFrameSize
                case 0x80: break parse                  // over-read: the FIFO is empty
                case 0x40: return overflowed()          // skip frame: frames were lost
                case 0x44: i += 4                       // sensor time
                case 0x48: i += 2                       // input configuration changed
                default: return overflowed()            // not at a frame's header
                }
            }
            guard !frames.isEmpty else { return [] }
            let stamps = fifoClock.stamps(count: frames.count, readTime: readTime)
            var samples: [RawSample] = []
            samples.reserveCapacity(2 * frames.count)
            for (k, at) in frames.enumerated() { samples += decode(Array(bytes[at..<(at + 12)]), at: stamps[k]) }
            return [.deliver(samples)]
        }
    }

    /// The FIFO overflowed (or a read did not start at a frame): drop the batch, flush, say so.
    private mutating func overflowed() -> [I2CDriverAction] {
        fifoOverflows += 1
        fifoClock.reset()
        fifoStep = .length
        let e = SourceError(.io, "the BMI160 at \(place): its FIFO overflowed (read too late), samples were lost; FIFO flushed", path: busPath)
        return [.interrupted(e), .write(register: 0x7E, value: Self.fifoFlush)]
    }

    private mutating func malformed(_ got: Int, expected: Int) -> [I2CDriverAction] {
        fail(SourceError(.malformedInput, "\(got) bytes instead of \(expected) from \(place)", path: busPath))
    }

    package mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction] {
        fail(i2cTransferError(error, chip: "BMI160", place: place, busPath: busPath))
    }

    private mutating func fail(_ error: SourceError) -> [I2CDriverAction] {
        phase = .failed
        return [.fail(error)]
    }

    /// Decodes 12 bytes from `DATA_8` (0x0C) into an accelerometer and a gyroscope sample.
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        let c = configuration
        let gyro = Vector3(int16LE(b, 0), int16LE(b, 2), int16LE(b, 4)) * (.pi / 180 / c.gyroCountsPerDegree)
        let accel = Vector3(int16LE(b, 6), int16LE(b, 8), int16LE(b, 10)) * (1 / c.accelerometerCountsPerG)
        return [RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero),
                RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero)]
    }
}
