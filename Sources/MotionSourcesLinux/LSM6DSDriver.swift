import MotionSources
import MotionFusion

/// The two register maps of ST's accelerometer-and-gyroscope chips this library drives.
///
/// - ``lsm6dsx``: the LSM6DS3/LSM6DS3H, LSM6DSL/LSM6DSM/LSM6DS3TR-C, LSM6DSR and LSM6DSO/LSM6DST
///   (datasheets DocID026899, DocID030637, DS12499, DS12952): `WHO_AM_I` 0x0F, `CTRL1_XL` 0x10
///   (ODR_XL bits 7:4, FS_XL bits 3:2), `CTRL2_G` 0x11 (ODR_G bits 7:4, FS_G bits 3:2), `CTRL3_C`
///   0x12 (BDU bit 6, IF_INC bit 2), gyroscope `OUTX_L_G` 0x22…0x27 then accelerometer `OUTX_L_XL`
///   0x28…0x2D, signed little-endian 16-bit words.
/// - ``lsm9ds1``: the LSM9DS1's accelerometer and gyroscope (datasheet DocID025715): `WHO_AM_I`
///   0x0F = 0x68, `CTRL_REG1_G` 0x10 (ODR_G bits 7:5, FS_G bits 4:3), `CTRL_REG6_XL` 0x20 (ODR_XL
///   bits 7:5, FS_XL bits 4:3), `CTRL_REG8` 0x22 (BDU bit 6, IF_ADD_INC bit 2), gyroscope
///   `OUT_X_L_G` 0x18…0x1D, accelerometer `OUT_X_L_XL` 0x28…0x2D, little-endian. With the gyroscope
///   on, both run at the gyroscope's rate.
///
/// Both chips' axes are right-handed and shared by the accelerometer and the gyroscope (datasheets'
/// "Pin indicator and axes" figures), so a sample needs no axis swap, only the sign rule.
package struct LSM6DSMap: Sendable, Hashable {
    /// Which map.
    package enum Kind: Sendable, Hashable {
        /// LSM6DS3, LSM6DSL, LSM6DSR, LSM6DSO, LSM6DST.
        case lsm6dsx
        /// LSM9DS1 accelerometer and gyroscope.
        case lsm9ds1
    }
    /// Which map.
    package let kind: Kind

    /// LSM6DS3, LSM6DSL, LSM6DSR, LSM6DSO, LSM6DST.
    package static let lsm6dsx = LSM6DSMap(kind: .lsm6dsx)
    /// LSM9DS1 accelerometer and gyroscope.
    package static let lsm9ds1 = LSM6DSMap(kind: .lsm9ds1)

    /// `WHO_AM_I`.
    static let whoAmI: UInt8 = 0x0F

    /// The `WHO_AM_I` values of the chips of this map.
    package var whoAmIValues: [UInt8] { kind == .lsm6dsx ? [0x69, 0x6A, 0x6B, 0x6C, 0x6D] : [0x68] }

    /// The output data rates (Hz) and their ODR codes, slowest first: 12.5…833 Hz for the LSM6DSx
    /// (faster ones exist; polling them is pointless), 14.9…952 Hz for the LSM9DS1's gyroscope.
    package var rates: [(hz: Double, code: UInt8)] {
        kind == .lsm6dsx ? [(12.5, 1), (26, 2), (52, 3), (104, 4), (208, 5), (416, 6), (833, 7)]
            : [(14.9, 1), (59.5, 2), (119, 3), (238, 4), (476, 5), (952, 6)]
    }

    /// Accelerometer ranges (g) with their FS_XL code and sensitivity (mg per count). Both maps code
    /// ±2, ±16, ±4, ±8 g as 0, 1, 2, 3; the LSM9DS1's ±16 g is 0.732 mg per count, the LSM6DSx's 0.488.
    package var accelerometerRanges: [(g: Int, code: UInt8, mgPerCount: Double)] {
        [(2, 0, 0.061), (4, 2, 0.122), (8, 3, 0.244), (16, 1, kind == .lsm6dsx ? 0.488 : 0.732)]
    }

    /// Gyroscope ranges (°/s) with their FS_G code and sensitivity (m°/s per count).
    package var gyroRanges: [(dps: Int, code: UInt8, mdpsPerCount: Double)] {
        kind == .lsm6dsx ? [(250, 0, 8.75), (500, 1, 17.5), (1000, 2, 35), (2000, 3, 70)]
            : [(245, 0, 8.75), (500, 1, 17.5), (2000, 3, 70)]
    }

    /// The first register of one sample read and its length: gyroscope then accelerometer.
    package var dataRead: (register: UInt8, count: Int) { kind == .lsm6dsx ? (0x22, 12) : (0x18, 22) }
    /// Offsets of the gyroscope's and the accelerometer's X low byte in the sample read.
    var gyroOffset: Int { 0 }
    var accelOffset: Int { kind == .lsm6dsx ? 6 : 16 }

    /// `CTRL3_C` / `CTRL_REG8`: block data update (a sample's low and high bytes from the same
    /// output) and address auto-increment (the reset value), nothing else.
    static let control3 = (register: UInt8(0x12), lsm9ds1Register: UInt8(0x22), value: UInt8(0x44))

    /// The FIFO this driver reads on `chip`: its size in 16-bit words and the mask of
    /// `FIFO_STATUS2`'s DIFF_FIFO high bits, or `nil` for a chip whose FIFO it does not read.
    ///
    /// The LSM6DS3 (8 kbyte, 4096 words, DIFF_FIFO 12 bits) and the LSM6DSL family (4 kbyte, 2048
    /// words, 11 bits) have the *untagged* FIFO read here. The LSM6DSR, LSM6DSO and LSM6DST have
    /// a tagged one (`FIFO_DATA_OUT_TAG` 0x78, 7 bytes a word) and the LSM9DS1 a 32-level one of its
    /// own: not read (yet); they read their data registers at every rate.
    package static func untaggedFIFO(_ chip: I2CChip) -> (words: Int, diffHighMask: UInt8)? {
        switch chip {
        case .lsm6ds3: (4096, 0x0F)
        case .lsm6dsl: (2048, 0x07)
        default: nil
        }
    }
}

/// The untagged FIFO of the LSM6DS3 and LSM6DSL (datasheets DocID026899 section 8, DocID030637):
/// `FIFO_CTRL3` (0x08: DEC_FIFO_GYRO bits 5:3, DEC_FIFO_XL bits 2:0; 001 = every sample),
/// `FIFO_CTRL5` (0x0A: ODR_FIFO bits 6:3, the sensors' ODR codes; FIFO_MODE bits 2:0, 000 bypass,
/// which also empties it, 110 continuous, where a full FIFO overwrites its oldest words),
/// `FIFO_STATUS1..4` (0x3A…0x3D: DIFF_FIFO, the unread 16-bit words; FIFO_OVER_RUN bit 6 and
/// FIFO_EMPTY bit 4 of STATUS2; FIFO_PATTERN, the place in the pattern of the next word to read) and
/// `FIFO_DATA_OUT_L/H` (0x3E/0x3F, the address rolling back from 0x3F to 0x3E so that a block read
/// pops consecutive words). With both sensors at the same rate the pattern is gyroscope X, Y, Z,
/// then accelerometer X, Y, Z: 6 words, 12 bytes a sample, the layout of the data registers.
enum LSM6DSFIFO {
    static let control3: UInt8 = 0x08, control5: UInt8 = 0x0A, status1: UInt8 = 0x3A, dataOut: UInt8 = 0x3E
    /// `FIFO_CTRL3`: gyroscope and accelerometer in the FIFO, not decimated.
    static let bothUndecimated: UInt8 = 0x09
    /// `FIFO_STATUS2` FIFO_OVER_RUN and FIFO_EMPTY.
    static let overrun: UInt8 = 0x40, empty: UInt8 = 0x10
    /// Words and bytes of one pattern (one sample of each sensor).
    static let patternWords = 6, patternBytes = 12
}

/// How an LSM6DSx or LSM9DS1 is set up: full-scale ranges and the output data rate.
package struct LSM6DSConfiguration: Sendable, Hashable {
    /// The register map.
    package let map: LSM6DSMap
    /// Accelerometer full scale in g: 2, 4, 8 or 16. Default 2, the chips' reset value, which the
    /// kernel's `st_lsm6dsx` also assumes.
    package let accelerometerRange: Int
    /// Gyroscope full scale in °/s: 250 (245 on the LSM9DS1), 500, 1000 (not the LSM9DS1) or 2000.
    /// Default the lowest, the chips' reset value, which the kernel's `st_lsm6dsx` assumes at probe
    /// (its first `fs_avl` gain), so `i2c:` and `iio:` read a chip alike.
    package let gyroRange: Int
    /// The output data rate, Hz: the slowest the chip offers at or above the demand.
    package let actualRate: Double
    let odrCode: UInt8
    /// Read the samples from the chip's FIFO, where the driver reads it (``LSM6DSMap/untaggedFIFO(_:)``),
    /// rather than one read of the data registers per sample. Default: a demand above 100 Hz
    /// (``MPUConfiguration/fifoThreshold``; a demand of 100 Hz, run at 104 Hz, reads the registers).
    package let prefersFIFO: Bool

    /// Creates a configuration (`gyroRange` `nil`: the default); ranges the chip lacks fall back to
    /// the defaults; the rate is the
    /// slowest output data rate at or above `rate` (the fastest above them all; 104 or 119 Hz for
    /// a rate that is not a positive number). `fifo`: read the FIFO where the chip has one the driver
    /// reads (`nil`: above 100 Hz).
    package init(map: LSM6DSMap, accelerometerRange: Int = 2, gyroRange: Int? = nil, rate: Double = 100, fifo: Bool? = nil) {
        self.map = map
        self.accelerometerRange = map.accelerometerRanges.contains { $0.g == accelerometerRange } ? accelerometerRange : 2
        self.gyroRange = map.gyroRanges.first { $0.dps == gyroRange }?.dps ?? map.gyroRanges[0].dps
        let want = rate.isFinite && rate > 0 ? rate : 100
        let pick = map.rates.first { $0.hz >= want - 1e-9 } ?? map.rates[map.rates.count - 1]
        actualRate = pick.hz
        odrCode = pick.code
        prefersFIFO = fifo ?? (want > MPUConfiguration.fifoThreshold)  // the demand: 100 Hz runs at 104 Hz, still one read a sample
    }

    /// How often the FIFO is read, Hz: about every 10 samples, at least 50 times a second.
    package var fifoPollRate: Double { chipFIFOPollRate(actualRate) }

    /// `FIFO_CTRL5` in continuous mode at the sensors' rate.
    var fifoContinuous: UInt8 { odrCode << 3 | 0x06 }

    /// The FIFO writes, in order: bypass (empties it), both sensors undecimated, continuous mode.
    package var fifoWrites: [(register: UInt8, value: UInt8)] {
        [(LSM6DSFIFO.control5, 0x00), (LSM6DSFIFO.control3, LSM6DSFIFO.bothUndecimated), (LSM6DSFIFO.control5, fifoContinuous)]
    }

    /// g per count at the accelerometer's range (datasheet sensitivity).
    package var accelerometerGPerCount: Double {
        (map.accelerometerRanges.first { $0.g == accelerometerRange }?.mgPerCount ?? 0.061) / 1000
    }

    /// °/s per count at the gyroscope's range (datasheet sensitivity).
    package var gyroDegreesPerCount: Double {
        (map.gyroRanges.first { $0.dps == gyroRange }?.mdpsPerCount ?? 8.75) / 1000
    }

    /// The configuration writes, in order, with the bits of each that the read-back compares.
    package var writes: [(register: UInt8, value: UInt8, mask: UInt8)] {
        let fsXL = map.accelerometerRanges.first { $0.g == accelerometerRange }?.code ?? 0
        let fsG = map.gyroRanges.first { $0.dps == gyroRange }?.code ?? 0
        switch map.kind {
        case .lsm6dsx:
            return [(LSM6DSMap.control3.register, LSM6DSMap.control3.value, 0x44),
                    (0x10, odrCode << 4 | fsXL << 2, 0xFC),   // CTRL1_XL: ODR_XL, FS_XL
                    (0x11, odrCode << 4 | fsG << 2, 0xFE)]    // CTRL2_G: ODR_G, FS_G, FS_125 (0)
        case .lsm9ds1:
            return [(LSM6DSMap.control3.lsm9ds1Register, LSM6DSMap.control3.value, 0x44),
                    (0x20, odrCode << 5 | fsXL << 3, 0xF8),   // CTRL_REG6_XL: ODR_XL, FS_XL
                    (0x10, odrCode << 5 | fsG << 3, 0xF8)]    // CTRL_REG1_G: ODR_G, FS_G (both run at it)
        }
    }
}

/// The user-space driver of an ST LSM6DSx or of an LSM9DS1's accelerometer and gyroscope
/// (``LSM6DSMap``), as a state machine (``I2CChipDriver``).
///
/// Sequence: read `WHO_AM_I` (0x0F) → write the control registers (block data update, ranges, data
/// rate) → read each back → ``I2CDriverAction/streaming``; then each ``dataRead`` (gyroscope and
/// accelerometer in one read) decodes into one accelerometer and one gyroscope sample. No software
/// reset: its bit clears itself, and waiting for that could hang on a bus (or `i2c-stub`) where it
/// never does.
///
/// Units and signs as for the MPU family and the kernel's `st_lsm6dsx`: the accelerometer reads
/// +1 g on Z face up (specific force), Core Motion −1 g, so the mount matrix times −1; the gyroscope
/// (counter-clockwise positive, right-handed) through the matrix alone, in rad/s.
///
/// ## FIFO
/// Which chips: the untagged FIFO of the LSM6DS3/LSM6DS3H (`WHO_AM_I` 0x69) and of the LSM6DSL
/// family (0x6A: LSM6DSL, LSM6DSM, LSM6DS3TR-C, ISM330DLC). The LSM6DSR, LSM6DSO/LSM6DSOX and
/// LSM6DST have a *tagged* FIFO (a tag byte before each 6-byte word, `FIFO_DATA_OUT_TAG` 0x78), a
/// different format this driver does not read, and the LSM9DS1 a 32-level one of its own: they
/// read their data registers, one read per sample, at every rate.
///
/// On those chips above 100 Hz (``LSM6DSConfiguration/prefersFIFO``,
/// ``LSM6DSMap/untaggedFIFO(_:)``) the samples come from the FIFO (``LSM6DSFIFO``): after the
/// control registers, ``LSM6DSConfiguration/fifoWrites``, read back. Each poll reads
/// `FIFO_STATUS1..4` (stamps the poll), the whole patterns it counts from `FIFO_DATA_OUT_L`, then
/// the status again: FIFO_OVER_RUN set, a pattern position that is not 0 (a word was lost, the
/// words read no longer start at a gyroscope X), or a FIFO with no room for another sample (or a
/// word count of 0 without FIFO_EMPTY: a full count that does not fit DIFF_FIFO), before
/// or after the read, is an overflow: the batch is dropped, the FIFO reset (bypass, then
/// continuous), one ``I2CDriverAction/interrupted(_:)``, and the stream goes on from the next poll.
/// A FIFO that stays empty for 10 periods (at least 50 ms; register memory such as `i2c-stub`) is
/// given up for direct reads, said once in the log (``I2CDriverAction/notice(_:)``: no sample is
/// lost, so the consumers see no event).
///
/// The transfers: per poll one status read, the patterns in SMBus block reads of at most 32
/// bytes (``I2CBus/readFIFO(address:register:count:)``; one `I2C_RDWR` where the adapter carries
/// plain I2C), one status read. At 833 Hz polled about every 10 samples that is 6 transfers for 10
/// samples (SMBus) instead of 10.
package struct LSM6DSDriver: I2CChipDriver {
    private enum Phase: Sendable, Hashable { case identifying, verifying(Int), verifyingFIFO(Int), streaming, failed }
    /// The reads of one FIFO poll: the status (stamps the poll), the patterns, the status again.
    private enum FIFOStep: Sendable, Hashable { case status, data(readTime: Double), check(readTime: Double) }

    /// The register map.
    package let map: LSM6DSMap
    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Ranges and rate.
    package let configuration: LSM6DSConfiguration
    /// The chip identified, once `WHO_AM_I` was read.
    package private(set) var chip: I2CChip?
    private var phase = Phase.identifying
    private let accelFrame: MountMatrix
    private let gyroFrame: MountMatrix
    /// The FIFO read on the chip identified (size in words, DIFF_FIFO high mask), if any.
    private var fifo: (words: Int, diffHighMask: UInt8)?
    private var fifoStep = FIFOStep.status
    private var fifoBytes: [UInt8] = []
    private var fifoClock: FIFOTimestamps
    private var fifoWatch: ChipFIFOWatch
    /// FIFO overflows so far (each one reported as ``I2CDriverAction/interrupted(_:)``).
    package private(set) var fifoOverflows = 0
    /// `true` once the FIFO was given up for direct reads (it stayed empty from the start).
    package private(set) var fifoAbandoned = false
    /// `true` while the samples come from the FIFO.
    package var readsFIFO: Bool { fifo != nil && !fifoAbandoned }

    /// Creates the driver of the chip at `address` on `busPath`; `mountMatrix` maps chip axes to
    /// device axes (the kernel's `mount_matrix` sense; default identity).
    package init(map: LSM6DSMap, address: UInt8, busPath: String, configuration: LSM6DSConfiguration? = nil,
                 mountMatrix: MountMatrix = .identity) {
        self.map = map
        self.address = address
        self.busPath = busPath
        self.configuration = configuration.flatMap { $0.map == map ? $0 : nil } ?? LSM6DSConfiguration(map: map)
        accelFrame = IIOUnits.frame(kind: .accelerometer, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        gyroFrame = IIOUnits.frame(kind: .gyro, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        fifoClock = FIFOTimestamps(period: 1 / self.configuration.actualRate)
        fifoWatch = ChipFIFOWatch(rate: self.configuration.actualRate)
    }

    package var isStreaming: Bool { phase == .streaming }
    /// One sample's data registers (``LSM6DSMap/dataRead``); with the FIFO, `FIFO_STATUS1..4`
    /// (0x3A, 4 bytes), which the driver follows with the patterns and the status again.
    package var dataRead: (register: UInt8, count: Int) { readsFIFO ? (LSM6DSFIFO.status1, 4) : map.dataRead }
    package var actualRate: Double { configuration.actualRate }
    /// The sample rate, or with the FIFO ``LSM6DSConfiguration/fifoPollRate``.
    package var pollRate: Double { readsFIFO ? configuration.fifoPollRate : configuration.actualRate }

    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }
    private var name: String { chip?.displayName ?? (map.kind == .lsm9ds1 ? "LSM9DS1" : "LSM6DSx") }

    package mutating func start() -> [I2CDriverAction] {
        phase = .identifying
        return [.read(register: LSM6DSMap.whoAmI, count: 1)]
    }

    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        let writes = configuration.writes
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no WHO_AM_I from \(place)", path: busPath)) }
            guard map.whoAmIValues.contains(id), let c = I2CChip(register: LSM6DSMap.whoAmI, value: id, address: 0x6A) else {
                let what = map.kind == .lsm6dsx ? "an LSM6DSx (0x69, 0x6a, 0x6b, 0x6c or 0x6d)" : "an LSM9DS1's accelerometer and gyroscope (0x68)"
                return fail(SourceError(.unavailable, "\(place) answers WHO_AM_I (0x0f) \(I2CAddress.hex(id)): not \(what)", path: busPath))
            }
            chip = c
            phase = .verifying(0)
            return writes.map { .write(register: $0.register, value: $0.value) } + writes.map { .read(register: $0.register, count: 1) }
        case .verifying(let i):
            guard i < writes.count, let got = bytes.first else { return fail(SourceError(.io, "no read-back from \(place)", path: busPath)) }
            let w = writes[i]
            if got & w.mask != w.value & w.mask {
                return fail(SourceError(.io, "the \(name) at \(place) did not keep its configuration (wrote \(I2CAddress.hex(w.value)) to \(I2CAddress.hex(w.register)), read back \(I2CAddress.hex(got)))", path: busPath))
            }
            if i + 1 < writes.count {
                phase = .verifying(i + 1)
                return []
            }
            if configuration.prefersFIFO, map.kind == .lsm6dsx, let c = chip, let f = LSM6DSMap.untaggedFIFO(c) {
                fifo = f
                phase = .verifyingFIFO(0)
                return configuration.fifoWrites.map { .write(register: $0.register, value: $0.value) }
                    + [.read(register: LSM6DSFIFO.control3, count: 1), .read(register: LSM6DSFIFO.control5, count: 1)]
            }
            phase = .streaming
            return [.streaming]
        case .verifyingFIFO(let i):
            // FIFO_CTRL3 (bits 5:0), then FIFO_CTRL5 (bits 6:0).
            let want: [(UInt8, UInt8, UInt8)] = [(LSM6DSFIFO.control3, LSM6DSFIFO.bothUndecimated, 0x3F),
                                                 (LSM6DSFIFO.control5, configuration.fifoContinuous, 0x7F)]
            guard i < want.count, let got = bytes.first else { return fail(SourceError(.io, "no FIFO read-back from \(place)", path: busPath)) }
            let (register, value, mask) = want[i]
            if got & mask != value {
                return fail(SourceError(.io, "the \(name) at \(place) did not keep its FIFO configuration (wrote \(I2CAddress.hex(value)) to \(I2CAddress.hex(register)), read back \(I2CAddress.hex(got)))", path: busPath))
            }
            if i + 1 < want.count {
                phase = .verifyingFIFO(i + 1)
                return []
            }
            phase = .streaming
            fifoStep = .status
            fifoClock.reset()
            return [.streaming]
        case .streaming where readsFIFO:
            return receivedFIFO(bytes, at: timestamp)
        case .streaming:
            guard bytes.count == map.dataRead.count else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of \(map.dataRead.count) from \(place)", path: busPath))
            }
            return [.deliver(decode(bytes, at: timestamp))]
        case .failed:
            return []
        }
    }

    /// `FIFO_STATUS1..4`: unread words, overrun, the pattern position of the next word; `wrapped`:
    /// DIFF_FIFO reads 0 but FIFO_EMPTY is not set (a full FIFO whose word count does not fit the
    /// field: 2048 words in the LSM6DSL's 11 bits).
    private func status(_ b: [UInt8]) -> (words: Int, overrun: Bool, pattern: Int, wrapped: Bool) {
        let mask = fifo?.diffHighMask ?? 0x07
        let words = (Int(b[1] & mask) << 8) | Int(b[0])
        return (words, b[1] & LSM6DSFIFO.overrun != 0, (Int(b[3] & 0x03) << 8) | Int(b[2]), words == 0 && b[1] & LSM6DSFIFO.empty == 0)
    }

    /// One step of a FIFO poll: the status (stamps the poll), the patterns, the status again.
    private mutating func receivedFIFO(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        let capacity = fifo?.words ?? 2048
        switch fifoStep {
        case .status:
            guard bytes.count == 4 else { return malformed(bytes.count, expected: 4) }
            let s = status(bytes)
            // Words were overwritten (or the next word is not a gyroscope X): the FIFO no longer
            // starts at a sample. A FIFO without room for the next sample counts as overflowed
            // too (DIFF_FIFO cannot say "full": 12 bits top out at 4095 on the LSM6DS3's 4096 words).
            // A wrapped count only once the FIFO has delivered: register memory (`i2c-stub`) reads
            // 0 everywhere, FIFO_EMPTY included, and is given up below.
            if s.overrun || s.pattern != 0 || (s.wrapped && fifoWatch.seenData) || s.words + LSM6DSFIFO.patternWords > capacity { return overflowed() }
            let samples = s.words / LSM6DSFIFO.patternWords
            if fifoWatch.counted(samples, at: timestamp) {
                // Nothing was lost: a log line, not an error in the app's handler (``MPUDriver``'s rule).
                fifoAbandoned = true
                return [.notice("the \(name) at \(place): its FIFO stays empty; reading the data registers instead, one read per sample")]
            }
            guard samples > 0 else { return [] }
            fifoStep = .data(readTime: timestamp)
            return [.readFIFO(register: LSM6DSFIFO.dataOut, count: samples * LSM6DSFIFO.patternBytes)]
        case .data(let readTime):
            guard !bytes.isEmpty, bytes.count % LSM6DSFIFO.patternBytes == 0 else {
                fifoStep = .status
                return malformed(bytes.count, expected: LSM6DSFIFO.patternBytes)
            }
            fifoBytes = bytes
            fifoStep = .check(readTime: readTime)
            return [.read(register: LSM6DSFIFO.status1, count: 4)]
        case .check(let readTime):
            fifoStep = .status
            guard bytes.count == 4 else { return malformed(bytes.count, expected: 4) }
            let s = status(bytes)
            // Words lost during the read: those read may not start at a sample. None is delivered.
            // FIFO_OVER_RUN may already be cleared by the words read, and a loss of whole patterns
            // keeps the pattern position at 0; what was read plus what is left filling the FIFO
            // (no room for another sample) tells regardless.
            let n = fifoBytes.count / LSM6DSFIFO.patternBytes
            if s.overrun || s.pattern != 0 || s.wrapped || s.words + n * LSM6DSFIFO.patternWords + LSM6DSFIFO.patternWords > capacity { return overflowed() }
            let stamps = fifoClock.stamps(count: n, readTime: readTime)
            var samples: [RawSample] = []
            samples.reserveCapacity(2 * n)
            for k in 0..<n {
                let at = k * LSM6DSFIFO.patternBytes
                samples += decode(Array(fifoBytes[at..<(at + LSM6DSFIFO.patternBytes)]), at: stamps[k])
            }
            fifoBytes.removeAll(keepingCapacity: true)
            return [.deliver(samples)]
        }
    }

    /// The FIFO overflowed: drop what was read, empty the FIFO (bypass) and start it again, say so.
    private mutating func overflowed() -> [I2CDriverAction] {
        fifoOverflows += 1
        fifoBytes.removeAll(keepingCapacity: true)
        fifoClock.reset()
        fifoStep = .status
        let e = SourceError(.io, "the \(name) at \(place): its FIFO overflowed (read too late), samples were lost; FIFO reset", path: busPath)
        return [.interrupted(e), .write(register: LSM6DSFIFO.control5, value: 0x00),
                .write(register: LSM6DSFIFO.control5, value: configuration.fifoContinuous)]
    }

    private mutating func malformed(_ got: Int, expected: Int) -> [I2CDriverAction] {
        fail(SourceError(.malformedInput, "\(got) bytes instead of \(expected) from \(place)", path: busPath))
    }

    package mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction] {
        fail(i2cTransferError(error, chip: name, place: place, busPath: busPath))
    }

    private mutating func fail(_ error: SourceError) -> [I2CDriverAction] {
        phase = .failed
        return [.fail(error)]
    }

    /// Decodes one ``dataRead`` into an accelerometer and a gyroscope sample (`bytes` must hold
    /// ``LSM6DSMap/dataRead`` bytes).
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        let a = map.accelOffset, g = map.gyroOffset
        let accel = Vector3(int16LE(b, a), int16LE(b, a + 2), int16LE(b, a + 4)) * configuration.accelerometerGPerCount
        let gyro = Vector3(int16LE(b, g), int16LE(b, g + 2), int16LE(b, g + 4)) * (configuration.gyroDegreesPerCount * .pi / 180)
        return [RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero),
                RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero)]
    }
}
