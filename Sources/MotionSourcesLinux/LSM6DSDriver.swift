import MotionSources
import MotionFusion

/// The two register maps of ST's accelerometer-and-gyroscope chips this library drives.
///
/// - ``lsm6dsx``: the LSM6DS3/LSM6DS3H, LSM6DSL/LSM6DSM/LSM6DS3TR-C, LSM6DSR and LSM6DSO/LSM6DST
///   (datasheets DocID026899, DocID030637, DS12498, DS12140, DocID033525): `WHO_AM_I` 0x0F, `CTRL1_XL` 0x10
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

    /// The output data rates (Hz) and their ODR codes, slowest first: 12.5…1666 Hz for the LSM6DSx
    /// (1666 Hz, code 8, only read through the FIFO: ``LSM6DSConfiguration`` polls at most
    /// ``polledRateLimit``; faster ODRs exist, 3.33 and 6.66 kHz, and are not offered), 14.9…952 Hz
    /// for the LSM9DS1's gyroscope.
    package var rates: [(hz: Double, code: UInt8)] {
        kind == .lsm6dsx ? [(12.5, 1), (26, 2), (52, 3), (104, 4), (208, 5), (416, 6), (833, 7), (1666, 8)]
            : [(14.9, 1), (59.5, 2), (119, 3), (238, 4), (476, 5), (952, 6)]
    }

    /// The fastest rate read one sample at a time (Hz): 833 on the LSM6DSx, where 1666 Hz would be
    /// 1666 transfers a second; no limit below the LSM9DS1's fastest.
    package var polledRateLimit: Double { kind == .lsm6dsx ? 833 : 952 }

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

    /// The untagged FIFO of `chip`: its size in 16-bit words and the mask of `FIFO_STATUS2`'s
    /// DIFF_FIFO high bits, or `nil` for a chip without one.
    ///
    /// The LSM6DS3 (8 kbyte, 4096 words, DIFF_FIFO 12 bits) and the LSM6DSL family (4 kbyte, 2048
    /// words, 11 bits) have the *untagged* FIFO (``LSM6DSFIFO``). The LSM6DSR, LSM6DSO and LSM6DST
    /// have a tagged one (``taggedFIFO(_:)``) and the LSM9DS1 a 32-level one of its own
    /// (``LSM9DS1FIFO``).
    package static func untaggedFIFO(_ chip: I2CChip) -> (words: Int, diffHighMask: UInt8)? {
        switch chip {
        case .lsm6ds3: (4096, 0x0F)
        case .lsm6dsl: (2048, 0x07)
        default: nil
        }
    }

    /// The tagged FIFO of `chip`, its size in 7-byte words (``LSM6DSTaggedFIFO``), or `nil`: 512
    /// words on the LSM6DSR, LSM6DSO/LSM6DSOX and LSM6DST (3 kbyte of 6-byte data, DIFF_FIFO
    /// 10 bits; datasheets DS12498, DS12140 section 6.5 and DocID033525 (LSM6DST) — the "9 kbyte" of their front
    /// pages is with the FIFO compression, which is not enabled here; the kernel's `st_lsm6dsx`
    /// uses 512 too).
    package static func taggedFIFO(_ chip: I2CChip) -> Int? {
        switch chip {
        case .lsm6dsr, .lsm6dso, .lsm6dst: 512
        default: nil
        }
    }

    /// The FIFO the driver reads on `chip`, if any; an LSM9DS1's read as `burst` says.
    static func fifo(_ chip: I2CChip, burst: LSM9DS1Burst = .linear) -> LSM6DSFIFOFormat? {
        if chip == .lsm9ds1 { return .lsm9ds1(burst: burst) }
        if let u = untaggedFIFO(chip) { return .untagged(words: u.words, diffHighMask: u.diffHighMask) }
        return taggedFIFO(chip).map { .tagged(words: $0) }
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

/// The tagged FIFO of the LSM6DSR, LSM6DSO/LSM6DSOX and LSM6DST (datasheets DS12498, DS12140
/// section 6.5 "FIFO" and 9 "Register description", and the LSM6DST's, which share the map):
/// - `FIFO_CTRL3` (0x09): BDR_GY bits 7:4 and BDR_XL bits 3:0, the rates the sensors are batched
///   at, with the ODR codes (0 = not batched; 8 = 1667 Hz).
/// - `FIFO_CTRL4` (0x0A): DEC_TS_BATCH bits 7:6 and ODR_T_BATCH bits 5:4 (timestamp and
///   temperature words; 0 = none), FIFO_MODE bits 2:0: 000 bypass (the FIFO is emptied), 110
///   continuous (a full FIFO overwrites its oldest word).
/// - `FIFO_STATUS1/2` (0x3A/0x3B): DIFF_FIFO bits 9:0, the unread *words*; in STATUS2 FIFO_OVR_IA
///   bit 6 (overrun), FIFO_FULL_IA bit 5 (full at the next ODR), FIFO_OVR_LATCHED bit 3 (overrun,
///   cleared by reading STATUS2).
/// - `FIFO_DATA_OUT_TAG` (0x78) then `FIFO_DATA_OUT_X_L…Z_H` (0x79…0x7E): one 7-byte word, the
///   tag byte then 6 data bytes (X, Y, Z little-endian for the sensors). The tag's bits 7:3 are
///   TAG_SENSOR (0x01 gyroscope, 0x02 accelerometer; 0x03 temperature, 0x04 timestamp, 0x05
///   configuration change and others this driver skips), bits 2:1 TAG_CNT, a 2-bit counter of
///   the batch time slot (the words of one slot share it), bit 0 TAG_PARITY (not checked).
///   Reading 0x7E pops the word and the address rolls back to 0x78, so a block read returns
///   consecutive words (what the kernel's `st_lsm6dsx` relies on, reading 4 words per 32-byte
///   transfer); reads here are whole words, at most ``blockBytes`` each.
enum LSM6DSTaggedFIFO {
    static let control3: UInt8 = 0x09, control4: UInt8 = 0x0A, status1: UInt8 = 0x3A, dataOut: UInt8 = 0x78
    /// `FIFO_CTRL4` FIFO_MODE continuous (no timestamp or temperature words).
    static let continuous: UInt8 = 0x06
    /// `FIFO_STATUS2` FIFO_OVR_IA and FIFO_OVR_LATCHED; DIFF_FIFO's high bits.
    static let overrun: UInt8 = 0x48, diffHighMask: UInt8 = 0x03
    /// TAG_SENSOR of the gyroscope and accelerometer words (uncompressed, "NC").
    static let gyroTag: UInt8 = 0x01, accelTag: UInt8 = 0x02
    /// Bytes of a word, words of a sample (a gyroscope and an accelerometer word).
    static let wordBytes = 7, sampleWords = 2
    /// The most bytes one FIFO read asks for: whole words within an SMBus block (32 bytes).
    static let blockBytes = (I2CDevABI.blockMax / 7) * 7
}

/// The LSM9DS1's FIFO (datasheet DocID025715, FIFO section and registers `CTRL_REG9` 0x23,
/// `FIFO_CTRL` 0x2E, `FIFO_SRC` 0x2F): 32 levels; with the gyroscope and the accelerometer both on,
/// a level holds one sample of each. `CTRL_REG9` FIFO_EN (bit 1) enables it; `FIFO_CTRL` FMODE
/// (bits 7:5: 000 bypass, which empties it; 110 continuous, a full FIFO overwriting its oldest
/// level) and FTH (bits 4:0, threshold, unused here); `FIFO_SRC` FTH (bit 7), OVRN (bit 6: a level
/// was overwritten) and FSS (bits 5:0: unread levels, 0…32). Outside bypass mode the output
/// registers read the oldest level, gyroscope `OUT_X_L_G` 0x18…0x1D and accelerometer `OUT_X_L_XL`
/// 0x28…0x2D; a level is done once its accelerometer's Z high byte (0x2D) is read.
///
/// How a level is read depends on the chip's burst rule (``LSM9DS1Burst``): where a burst from 0x18
/// goes on at 0x28 after 0x1D and back to 0x18 after 0x2D (``LSM9DS1Burst/rounded``, the rule the
/// datasheets of the same accelerometer-and-gyroscope block describe), whole levels come in one
/// read, two levels (24 bytes) a transfer within the 32-byte SMBus block; where it does not
/// (``LSM9DS1Burst/linear``), a level is two 6-byte reads, gyroscope then accelerometer.
enum LSM9DS1FIFO {
    static let control9: UInt8 = 0x23, control: UInt8 = 0x2E, source: UInt8 = 0x2F
    static let gyroOut: UInt8 = 0x18, accelOut: UInt8 = 0x28
    /// `CTRL_REG9` FIFO_EN; the bits compared on read-back (FIFO_TEMP_EN, FIFO_EN, STOP_ON_FTH).
    static let enable: UInt8 = 0x02, control9Mask: UInt8 = 0x13
    /// `FIFO_CTRL` FMODE continuous (threshold 0); FMODE's bits.
    static let continuous: UInt8 = 0xC0, modeMask: UInt8 = 0xE0
    /// `FIFO_SRC` OVRN and FSS.
    static let overrun: UInt8 = 0x40, levelMask: UInt8 = 0x3F
    /// Levels, bytes of one level (gyroscope then accelerometer), bytes of one sensor's half.
    static let levels = 32, levelBytes = 12, readBytes = 6
    /// Levels per read where the burst rounds: two (24 bytes) within an SMBus block of 32.
    static let levelsPerBurst = I2CDevABI.blockMax / levelBytes
}

/// The LSM9DS1's burst probe (``LSM9DS1Burst``): `CTRL_REG4` (0x1E) … `CTRL_REG9` (0x23), read
/// alone and as the second half of a 12-byte read from `OUT_X_L_G` (0x18).
enum LSM9DS1Probe {
    static let controls: UInt8 = 0x1E, count = 6
}

/// How a multi-byte read of the LSM9DS1's output registers walks its addresses, found by the
/// driver when it configures the chip (``LSM6DSDriver``).
///
/// The LSM9DS1's datasheet (DocID025715) says the address auto-increments (`CTRL_REG8` IF_ADD_INC);
/// the datasheets of ST's chips with the same accelerometer-and-gyroscope block (LSM6DS0, LSM6DB0:
/// "Multiple reads (burst)") add that with both sensors on at one rate a burst starting at
/// `OUT_X_G` (0x18) reads the gyroscope, then the accelerometer (0x28…0x2D), then starts again at
/// 0x18. Register memory (`i2c-stub`) and a chip that does not do this read the addresses in turn.
/// The driver does not assume either: it reads `CTRL_REG4..CTRL_REG9` (0x1E…0x23) alone, then
/// 12 bytes from 0x18, and compares the second half with the first read.
package enum LSM9DS1Burst: Sendable, Hashable {
    /// Addresses in turn: a sample is one 22-byte read from 0x18 (the accelerometer at offset 16),
    /// a FIFO level two 6-byte reads.
    case linear
    /// 0x1D is followed by 0x28 and 0x2D by 0x18: a sample is one 12-byte read from 0x18 (the
    /// accelerometer at offset 6), FIFO levels come two to a read.
    case rounded
}

/// The FIFO the driver reads on the chip identified.
enum LSM6DSFIFOFormat: Sendable, Hashable {
    /// LSM6DS3 / LSM6DSL (``LSM6DSFIFO``): `words` 16-bit words.
    case untagged(words: Int, diffHighMask: UInt8)
    /// LSM6DSR / LSM6DSO / LSM6DST (``LSM6DSTaggedFIFO``): `words` 7-byte words.
    case tagged(words: Int)
    /// LSM9DS1 (``LSM9DS1FIFO``): 32 levels, a "word" here is a level (12 bytes, both sensors),
    /// read as `burst` says.
    case lsm9ds1(burst: LSM9DS1Burst)

    /// The size, in the format's words.
    var capacity: Int {
        switch self {
        case .untagged(let w, _), .tagged(let w): w
        case .lsm9ds1: LSM9DS1FIFO.levels
        }
    }
    /// `true` for the tagged FIFO.
    var isTagged: Bool {
        if case .tagged = self { return true }
        return false
    }
    /// Words of one sample (gyroscope and accelerometer).
    var sampleWords: Int {
        switch self {
        case .untagged: LSM6DSFIFO.patternWords
        case .tagged: LSM6DSTaggedFIFO.sampleWords
        case .lsm9ds1: 1
        }
    }
    /// Bytes of one word.
    var wordBytes: Int {
        switch self {
        case .untagged: 2
        case .tagged: LSM6DSTaggedFIFO.wordBytes
        case .lsm9ds1: LSM9DS1FIFO.levelBytes
        }
    }
    /// Every read's length is a multiple of this (bytes): a word, or the LSM9DS1's half level where
    /// its burst does not round.
    var readGrain: Int { self == .lsm9ds1(burst: .linear) ? LSM9DS1FIFO.readBytes : wordBytes }
    /// The longest single read of the format (bytes), for messages.
    var longestRead: Int {
        switch self {
        case .untagged(let w, _): 2 * w
        case .tagged: LSM6DSTaggedFIFO.blockBytes
        case .lsm9ds1(let burst): burst == .rounded ? LSM9DS1FIFO.levelsPerBurst * LSM9DS1FIFO.levelBytes : LSM9DS1FIFO.readBytes
        }
    }
    /// The status read: `FIFO_STATUS1..4` (untagged), `FIFO_STATUS1..2` (tagged), `FIFO_SRC` (LSM9DS1).
    var statusRead: (register: UInt8, count: Int) {
        switch self {
        case .untagged: (LSM6DSFIFO.status1, 4)
        case .tagged: (LSM6DSTaggedFIFO.status1, 2)
        case .lsm9ds1: (LSM9DS1FIFO.source, 1)
        }
    }

    /// A status read decoded: the unread words; `lost`, the flags say words were lost (overrun, or
    /// an untagged FIFO whose next word is not the first of a pattern); `wrapped`, a count of 0
    /// that is not an empty FIFO (a full untagged FIFO whose count does not fit DIFF_FIFO).
    func status(_ b: [UInt8]) -> (words: Int, lost: Bool, wrapped: Bool) {
        switch self {
        case .untagged(_, let mask):
            let words = (Int(b[1] & mask) << 8) | Int(b[0])
            let pattern = (Int(b[3] & 0x03) << 8) | Int(b[2])
            return (words, b[1] & LSM6DSFIFO.overrun != 0 || pattern != 0, words == 0 && b[1] & LSM6DSFIFO.empty == 0)
        case .tagged:
            return ((Int(b[1] & LSM6DSTaggedFIFO.diffHighMask) << 8) | Int(b[0]), b[1] & LSM6DSTaggedFIFO.overrun != 0, false)
        case .lsm9ds1:
            return (Int(b[0] & LSM9DS1FIFO.levelMask), b[0] & LSM9DS1FIFO.overrun != 0, false)
        }
    }

    /// The words to read of `words` unread: whole patterns (untagged: a partial one would leave
    /// the next read mid-pattern), every word (tagged: each word says what it is; LSM9DS1: a level).
    func readable(_ words: Int) -> Int {
        isTagged ? words : words / sampleWords * sampleWords
    }

    /// The reads of `words` words: one FIFO read of the untagged port, tagged words in reads of at
    /// most ``LSM6DSTaggedFIFO/blockBytes``; LSM9DS1 levels two to a read from 0x18 where the burst
    /// rounds, else each level as its gyroscope's and its accelerometer's output registers.
    func reads(_ words: Int) -> [I2CDriverAction] {
        switch self {
        case .untagged:
            return [.readFIFO(register: LSM6DSFIFO.dataOut, count: words * 2)]
        case .tagged:
            let total = words * LSM6DSTaggedFIFO.wordBytes
            return stride(from: 0, to: total, by: LSM6DSTaggedFIFO.blockBytes).map {
                .readFIFO(register: LSM6DSTaggedFIFO.dataOut, count: min(LSM6DSTaggedFIFO.blockBytes, total - $0))
            }
        case .lsm9ds1(.rounded):
            return stride(from: 0, to: words, by: LSM9DS1FIFO.levelsPerBurst).map {
                .read(register: LSM9DS1FIFO.gyroOut, count: min(LSM9DS1FIFO.levelsPerBurst, words - $0) * LSM9DS1FIFO.levelBytes)
            }
        case .lsm9ds1(.linear):
            return (0..<words).flatMap { _ in
                [I2CDriverAction.read(register: LSM9DS1FIFO.gyroOut, count: LSM9DS1FIFO.readBytes),
                 .read(register: LSM9DS1FIFO.accelOut, count: LSM9DS1FIFO.readBytes)]
            }
        }
    }
}

/// Pairs the tagged FIFO's words into samples (``LSM6DSTaggedFIFO``): a gyroscope and an
/// accelerometer word with the same TAG_CNT, in either order, are one sample; words of other
/// sensors are skipped. A batch whose partner word is missing (the counter moved on first) is
/// dropped; a counter that skips (TAG_CNT advanced by more than one) marks whole batches missing.
/// Both keep their time slot, so the samples around them keep their times. A batch whose second
/// word has not been written yet when the FIFO is read waits for the next read.
struct LSM6DSTagPairing: Sendable, Hashable {
    /// TAG_CNT of the last time slot handed out (delivered or dropped), `nil` after a reset.
    private var lastCounter: Int?
    /// The words of the batch still waiting for its partner (7 bytes each).
    private var waiting: [[UInt8]] = []
    /// Batches dropped for a missing word, and whole batches the counter skipped, so far.
    private(set) var droppedBatches = 0

    /// Forgets everything (the FIFO was reset).
    mutating func reset() {
        lastCounter = nil
        waiting = []
    }

    /// The time slots of the words `bytes` (whole 7-byte words, oldest first), oldest first: each a
    /// sample's gyroscope then accelerometer data (12 bytes), or `nil` for a batch lost.
    mutating func slots(_ bytes: [UInt8]) -> [[UInt8]?] {
        let w = LSM6DSTaggedFIFO.wordBytes
        var words = waiting
        waiting = []
        words.reserveCapacity(words.count + bytes.count / w)
        for at in stride(from: 0, to: bytes.count - w + 1, by: w) { words.append(Array(bytes[at..<(at + w)])) }
        var out: [[UInt8]?] = []
        var batch: (counter: Int, gyro: [UInt8]?, accel: [UInt8]?, words: [[UInt8]])?
        func open(_ counter: Int) {
            // The slots from the last one handed out to this one: those in between were lost whole.
            // The same counter again (no batch open) is four slots on: the counter wrapped.
            if let last = lastCounter {
                let step = (counter - last + 4) % 4
                let missing = (step == 0 ? 4 : step) - 1
                droppedBatches += missing
                out += Array(repeating: nil, count: missing)
            }
            lastCounter = counter
            out.append(nil)
            batch = (counter, nil, nil, [])
        }
        for word in words {
            let sensor = word[0] >> 3, counter = Int(word[0] >> 1) & 0x03
            guard sensor == LSM6DSTaggedFIFO.gyroTag || sensor == LSM6DSTaggedFIFO.accelTag else { continue }
            let isGyro = sensor == LSM6DSTaggedFIFO.gyroTag
            if let b = batch, b.counter != counter || (isGyro ? b.gyro != nil : b.accel != nil) {
                // The open batch will not complete: its partner was lost. Its slot stays empty.
                droppedBatches += 1
                batch = nil
            }
            if batch == nil { open(counter) }
            let data = Array(word[1...])
            if isGyro { batch?.gyro = data } else { batch?.accel = data }
            batch?.words.append(word)
            if let b = batch, let g = b.gyro, let a = b.accel {
                out[out.count - 1] = g + a
                batch = nil
            }
        }
        if let b = batch {
            // Its partner may still be written: read again next time, its slot with it.
            waiting = b.words
            // (the slots it skipped stay handed out).
            out.removeLast()
            lastCounter = (b.counter + 3) % 4
        }
        return out
    }
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
        let prefersFIFO = fifo ?? (want > MPUConfiguration.fifoThreshold)  // the demand: 100 Hz runs at 104 Hz, still one read a sample
        // 1666 Hz only where the samples may come from the FIFO: polled, one read a sample, 833 at most.
        let offered = map.rates.filter { prefersFIFO || $0.hz <= map.polledRateLimit }
        let pick = offered.first { $0.hz >= want - 1e-9 } ?? offered[offered.count - 1]
        actualRate = pick.hz
        odrCode = pick.code
        self.prefersFIFO = prefersFIFO
    }

    /// How often the FIFO is read, Hz: about every 10 samples, at least 50 times a second; on the
    /// LSM9DS1 (32 levels, 33.6 ms at 952 Hz) also at least 4 times per FIFO fill, so a poll may come
    /// three quarters of a fill late (25 ms at 952 Hz, polled at 119 Hz) before samples are lost.
    package var fifoPollRate: Double {
        chipFIFOPollRate(actualRate, capacity: map.kind == .lsm9ds1 ? LSM9DS1FIFO.levels : nil)
    }

    /// `FIFO_CTRL5` in continuous mode at the sensors' rate.
    var fifoContinuous: UInt8 { odrCode << 3 | 0x06 }

    /// The untagged FIFO's writes, in order: bypass (empties it), both sensors undecimated,
    /// continuous mode.
    package var fifoWrites: [(register: UInt8, value: UInt8)] {
        [(LSM6DSFIFO.control5, 0x00), (LSM6DSFIFO.control3, LSM6DSFIFO.bothUndecimated), (LSM6DSFIFO.control5, fifoContinuous)]
    }

    /// `FIFO_CTRL3` of the tagged FIFO: both sensors batched at their output data rate.
    var taggedBatchRates: UInt8 { odrCode << 4 | odrCode }

    /// The tagged FIFO's writes (``LSM6DSTaggedFIFO``), in order: bypass (empties it), both sensors
    /// batched at their rate (`FIFO_CTRL3`), continuous mode without timestamp or temperature words.
    package var taggedFIFOWrites: [(register: UInt8, value: UInt8)] {
        [(LSM6DSTaggedFIFO.control4, 0x00), (LSM6DSTaggedFIFO.control3, taggedBatchRates), (LSM6DSTaggedFIFO.control4, LSM6DSTaggedFIFO.continuous)]
    }

    /// The LSM9DS1's FIFO writes (``LSM9DS1FIFO``), in order: bypass (empties it), FIFO_EN,
    /// continuous mode.
    package var lsm9ds1FIFOWrites: [(register: UInt8, value: UInt8)] {
        [(LSM9DS1FIFO.control, 0x00), (LSM9DS1FIFO.control9, LSM9DS1FIFO.enable), (LSM9DS1FIFO.control, LSM9DS1FIFO.continuous)]
    }

    /// The FIFO set-up of `format`: the writes, then the registers read back with the bits compared,
    /// and the mode register's continuous value (written again after an overflow's bypass).
    func fifoSetUp(_ format: LSM6DSFIFOFormat) -> (writes: [(register: UInt8, value: UInt8)],
                                                   readBack: [(register: UInt8, value: UInt8, mask: UInt8)], continuous: UInt8) {
        switch format {
        case .untagged:
            return (fifoWrites, [(LSM6DSFIFO.control3, LSM6DSFIFO.bothUndecimated, 0x3F), (LSM6DSFIFO.control5, fifoContinuous, 0x7F)], fifoContinuous)
        case .tagged:
            return (taggedFIFOWrites, [(LSM6DSTaggedFIFO.control3, taggedBatchRates, 0xFF),
                                       (LSM6DSTaggedFIFO.control4, LSM6DSTaggedFIFO.continuous, 0xF7)], LSM6DSTaggedFIFO.continuous)
        case .lsm9ds1:
            return (lsm9ds1FIFOWrites, [(LSM9DS1FIFO.control9, LSM9DS1FIFO.enable, LSM9DS1FIFO.control9Mask),
                                        (LSM9DS1FIFO.control, LSM9DS1FIFO.continuous, LSM9DS1FIFO.modeMask)], LSM9DS1FIFO.continuous)
        }
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
/// rate) → read each back → (LSM9DS1: the burst probe, ``LSM9DS1Burst``) →
/// ``I2CDriverAction/streaming``; then each ``dataRead`` (gyroscope and accelerometer in one read)
/// decodes into one accelerometer and one gyroscope sample. No software
/// reset: its bit clears itself, and waiting for that could hang on a bus (or `i2c-stub`) where it
/// never does.
///
/// Units and signs as for the MPU family and the kernel's `st_lsm6dsx`: the accelerometer reads
/// +1 g on Z face up (specific force), Core Motion −1 g, so the mount matrix times −1; the gyroscope
/// (counter-clockwise positive, right-handed) through the matrix alone, in rad/s.
///
/// ## FIFO
/// Which chips: every LSM6DSx. The untagged FIFO of the LSM6DS3/LSM6DS3H (`WHO_AM_I` 0x69) and
/// of the LSM6DSL family (0x6A: LSM6DSL, LSM6DSM, LSM6DS3TR-C, ISM330DLC) (``LSM6DSFIFO``), the
/// tagged FIFO of the LSM6DSR (0x6B: also ISM330DHCX, ASM330LHH), LSM6DSO/LSM6DSOX (0x6C) and
/// LSM6DST (0x6D) (``LSM6DSTaggedFIFO``: a tag byte before each 6-byte word), and the LSM9DS1's
/// 32-level FIFO (``LSM9DS1FIFO``: `FIFO_SRC`, then the levels from the output registers, two to a
/// read or two reads a level as its burst walks, ``LSM9DS1Burst``; polled at least 4 times per
/// fill, 119 Hz at 952 Hz).
///
/// Above 100 Hz (``LSM6DSConfiguration/prefersFIFO``, ``LSM6DSMap/untaggedFIFO(_:)``,
/// ``LSM6DSMap/taggedFIFO(_:)``; 1666 Hz is offered only then) the samples come from the FIFO:
/// after the control registers, ``LSM6DSConfiguration/fifoWrites`` (untagged) or
/// ``LSM6DSConfiguration/taggedFIFOWrites``, read back. Each poll reads the status (untagged
/// `FIFO_STATUS1..4`, tagged `FIFO_STATUS1..2`; it stamps the poll), the words it counts (untagged:
/// whole patterns from `FIFO_DATA_OUT_L`; tagged: every word from `FIFO_DATA_OUT_TAG`), then the
/// status again. An overrun flag (untagged FIFO_OVER_RUN; tagged FIFO_OVR_IA or
/// FIFO_OVR_LATCHED), an untagged pattern position that is not 0 (the words read no longer start at
/// a gyroscope X), or a FIFO with no room for another sample (or an untagged count of 0 without
/// FIFO_EMPTY: a full count that does not fit DIFF_FIFO), before or after the read, is an
/// overflow: the batch is dropped, the FIFO reset (bypass, then continuous), one
/// ``I2CDriverAction/interrupted(_:)``, and the stream goes on from the next poll. A FIFO that
/// stays empty for 10 periods (at least 50 ms; register memory such as `i2c-stub`) is given up for
/// direct reads, said once in the log (``I2CDriverAction/notice(_:)``: no sample is lost, so the
/// consumers see no event).
///
/// The tagged words are paired by their tag counter (``LSM6DSTagPairing``): a gyroscope and an
/// accelerometer word of the same time slot are one sample, in either order; timestamp,
/// temperature and other words are skipped; a word whose partner is missing, or slots the counter
/// skips, lose their samples only (``fifoDroppedBatches``; not reported as an interruption, the
/// FIFO is not reset; the log is told at the first loss and at each tenfold count), and the samples
/// around them keep their times. Four slots lost in a row are
/// invisible to the 2-bit counter; only an overflow loses that many, and the status tells.
///
/// The transfers: per poll one status read, the words, one status read. Untagged words in SMBus
/// block reads of at most 32 bytes (``I2CBus/readFIFO(address:register:count:)``; one `I2C_RDWR`
/// where the adapter carries plain I2C); tagged words 4 to a read (28 bytes: a read never ends
/// mid-word). At 1666 Hz polled about every 10 samples that is 6 transfers for 10 samples
/// (untagged, SMBus) or 7 (tagged: 20 words, 5 reads) instead of 10.
package struct LSM6DSDriver: I2CChipDriver {
    private enum Phase: Sendable, Hashable {
        case identifying, verifying(Int)
        /// LSM9DS1: the burst probe (``LSM9DS1Burst``), with `CTRL_REG4..9` once read.
        case probingBurst(controls: [UInt8]?)
        case verifyingFIFO(Int), streaming, failed
    }
    /// The reads of one FIFO poll: the status (stamps the poll), the patterns, the status again.
    private enum FIFOStep: Sendable, Hashable { case status, data(readTime: Double, bytes: Int), check(readTime: Double) }

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
    /// The FIFO read on the chip identified, if any.
    private var fifo: LSM6DSFIFOFormat?
    private var fifoStep = FIFOStep.status
    private var fifoBytes: [UInt8] = []
    /// The tagged FIFO's words into samples.
    private var pairing = LSM6DSTagPairing()
    private var fifoClock: FIFOTimestamps
    private var fifoWatch: ChipFIFOWatch
    /// FIFO overflows so far (each one reported as ``I2CDriverAction/interrupted(_:)``).
    package private(set) var fifoOverflows = 0
    /// `true` once the FIFO was given up for direct reads (it stayed empty from the start).
    package private(set) var fifoAbandoned = false
    /// `true` while the samples come from the FIFO.
    package var readsFIFO: Bool { fifo != nil && !fifoAbandoned }
    /// LSM9DS1: how its output registers read in one burst, once configured (`nil` before, and on
    /// the LSM6DSx, whose output registers are in one block).
    package private(set) var burst: LSM9DS1Burst?
    /// Tagged FIFO: batches lost so far without an overflow, a word whose partner was missing or a
    /// time slot the tag counter skipped (``LSM6DSTagPairing``); their samples are not delivered.
    package var fifoDroppedBatches: Int { pairing.droppedBatches }
    /// The count of ``fifoDroppedBatches`` at which the log is told next: the first loss, then each
    /// tenfold (1, 10, 100, …), so a chip that keeps losing words is heard without flooding the log.
    private var nextDropNotice = 1

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
    /// One sample's data registers (``LSM6DSMap/dataRead``; an LSM9DS1 whose burst rounds,
    /// ``LSM9DS1Burst/rounded``: 12 bytes from 0x18); with the FIFO its status, `FIFO_STATUS1..4`
    /// (0x3A, 4 bytes; tagged: `FIFO_STATUS1..2`, 2 bytes; LSM9DS1: `FIFO_SRC`, 1 byte), which the
    /// driver follows with the words and the status again.
    package var dataRead: (register: UInt8, count: Int) {
        if readsFIFO, let f = fifo { return f.statusRead }
        return burst == .rounded ? (map.dataRead.register, LSM9DS1FIFO.levelBytes) : map.dataRead
    }
    /// Offset of the accelerometer's X low byte in ``dataRead``'s bytes.
    private var directAccelOffset: Int { burst == .rounded ? LSM9DS1FIFO.readBytes : map.accelOffset }
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
            if map.kind == .lsm9ds1 {
                phase = .probingBurst(controls: nil)
                return [.read(register: LSM9DS1Probe.controls, count: LSM9DS1Probe.count),
                        .read(register: LSM9DS1FIFO.gyroOut, count: 2 * LSM9DS1Probe.count)]
            }
            return configured()
        case .probingBurst(nil):
            guard bytes.count == LSM9DS1Probe.count else { return malformed(bytes.count, expected: LSM9DS1Probe.count) }
            phase = .probingBurst(controls: bytes)
            return []
        case .probingBurst(let controls?):
            guard bytes.count == 2 * LSM9DS1Probe.count else { return malformed(bytes.count, expected: 2 * LSM9DS1Probe.count) }
            // Linear: bytes 6…11 are 0x1E…0x23, as read alone. Rounded: the accelerometer's data.
            burst = Array(bytes[LSM9DS1Probe.count...]) == controls ? .linear : .rounded
            return configured()
        case .verifyingFIFO(let i):
            // Untagged: FIFO_CTRL3 (bits 5:0), then FIFO_CTRL5 (bits 6:0); tagged: FIFO_CTRL3, FIFO_CTRL4.
            guard let f = fifo else { return fail(SourceError(.io, "no FIFO read-back from \(place)", path: busPath)) }
            let want = configuration.fifoSetUp(f).readBack
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
            pairing.reset()
            return [.streaming]
        case .streaming where readsFIFO:
            return receivedFIFO(bytes, at: timestamp)
        case .streaming:
            let expected = dataRead.count
            guard bytes.count == expected else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of \(expected) from \(place)", path: busPath))
            }
            return [.deliver(decode(bytes, accelOffset: directAccelOffset, at: timestamp))]
        case .failed:
            return []
        }
    }

    /// The control registers are set (and, on an LSM9DS1, its burst known): the FIFO's set-up above
    /// 100 Hz on a chip with one, else streaming from the data registers.
    private mutating func configured() -> [I2CDriverAction] {
        if configuration.prefersFIFO, let c = chip, let f = LSM6DSMap.fifo(c, burst: burst ?? .linear) {
            fifo = f
            phase = .verifyingFIFO(0)
            let setUp = configuration.fifoSetUp(f)
            return setUp.writes.map { .write(register: $0.register, value: $0.value) }
                + setUp.readBack.map { .read(register: $0.register, count: 1) }
        }
        phase = .streaming
        return [.streaming]
    }

    /// One step of a FIFO poll, both formats: the status (stamps the poll), the words, the status again.
    private mutating func receivedFIFO(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        guard let format = fifo else { return [] }
        let capacity = format.capacity, sampleWords = format.sampleWords, statusRead = format.statusRead
        switch fifoStep {
        case .status:
            guard bytes.count == statusRead.count else { return malformed(bytes.count, expected: statusRead.count) }
            let s = format.status(bytes)
            // Words were overwritten (or the next untagged word is not a gyroscope X): the FIFO no
            // longer starts at a sample. A FIFO without room for the next sample counts as
            // overflowed too (DIFF_FIFO cannot say "full": 12 bits top out at 4095 on the LSM6DS3's
            // 4096 words). A wrapped count only once the FIFO has delivered: register memory
            // (`i2c-stub`) reads 0 everywhere, FIFO_EMPTY included, and is given up below.
            if s.lost || (s.wrapped && fifoWatch.seenData) || s.words + sampleWords > capacity { return overflowed() }
            let words = format.readable(s.words)
            if fifoWatch.counted(words / sampleWords, at: timestamp) {
                // Nothing was lost: a log line, not an error in the app's handler (``MPUDriver``'s rule).
                fifoAbandoned = true
                return [.notice("the \(name) at \(place): its FIFO stays empty; reading the data registers instead, one read per sample")]
            }
            guard words > 0 else { return [] }
            fifoStep = .data(readTime: timestamp, bytes: words * format.wordBytes)
            fifoBytes.removeAll(keepingCapacity: true)
            return format.reads(words)
        case .data(let readTime, let expected):
            // One read (untagged) or several of whole words (tagged), in order.
            fifoBytes += bytes
            guard !bytes.isEmpty, fifoBytes.count <= expected, fifoBytes.count % format.readGrain == 0 else {
                fifoStep = .status
                return malformed(bytes.count, expected: min(expected, format.longestRead))
            }
            guard fifoBytes.count == expected else { return [] }
            fifoStep = .check(readTime: readTime)
            return [.read(register: statusRead.register, count: statusRead.count)]
        case .check(let readTime):
            fifoStep = .status
            guard bytes.count == statusRead.count else { return malformed(bytes.count, expected: statusRead.count) }
            let s = format.status(bytes)
            // Words lost during the read: those read may not start at a sample. None is delivered.
            // An overrun flag may already be cleared by the words read, and a loss of whole patterns
            // keeps the untagged pattern position at 0; what was read plus what is left filling the
            // FIFO (no room for another sample) tells regardless.
            let read = fifoBytes.count / format.wordBytes
            if s.lost || s.wrapped || s.words + read + sampleWords > capacity { return overflowed() }
            let slots: [[UInt8]?]
            switch format {
            case .untagged:
                slots = stride(from: 0, to: fifoBytes.count, by: LSM6DSFIFO.patternBytes).map { Array(fifoBytes[$0..<($0 + LSM6DSFIFO.patternBytes)]) }
            case .tagged:
                slots = pairing.slots(fifoBytes)
            case .lsm9ds1:
                // A level: the gyroscope's 6 bytes, then the accelerometer's.
                slots = stride(from: 0, to: fifoBytes.count, by: LSM9DS1FIFO.levelBytes).map { Array(fifoBytes[$0..<($0 + LSM9DS1FIFO.levelBytes)]) }
            }
            fifoBytes.removeAll(keepingCapacity: true)
            let stamps = fifoClock.stamps(count: slots.count, readTime: readTime)
            var samples: [RawSample] = []
            samples.reserveCapacity(2 * slots.count)
            // Every format's sample is the gyroscope's 6 bytes, then the accelerometer's.
            for (slot, at) in zip(slots, stamps) {
                if let b = slot { samples += decode(b, accelOffset: 6, at: at) }
            }
            var actions: [I2CDriverAction] = samples.isEmpty ? [] : [.deliver(samples)]
            if pairing.droppedBatches >= nextDropNotice {
                actions.append(.notice("the \(name) at \(place): samples lost in its FIFO so far: \(pairing.droppedBatches) (a word without its partner, or a time slot its counter skipped); the stream goes on"))
                nextDropNotice = pairing.droppedBatches * 10
            }
            return actions
        }
    }

    /// The FIFO overflowed: drop what was read, empty the FIFO (bypass) and start it again, say so.
    private mutating func overflowed() -> [I2CDriverAction] {
        fifoOverflows += 1
        fifoBytes.removeAll(keepingCapacity: true)
        fifoClock.reset()
        pairing.reset()
        fifoStep = .status
        let e = SourceError(.io, "the \(name) at \(place): its FIFO overflowed (read too late), samples were lost; FIFO reset", path: busPath)
        guard let f = fifo else { return [.interrupted(e)] }
        let setUp = configuration.fifoSetUp(f), mode = setUp.writes[0].register
        return [.interrupted(e), .write(register: mode, value: 0x00), .write(register: mode, value: setUp.continuous)]
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

    /// Decodes one ``LSM6DSMap/dataRead`` into an accelerometer and a gyroscope sample (`bytes`
    /// must hold ``LSM6DSMap/dataRead`` bytes).
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        decode(b, accelOffset: map.accelOffset, at: timestamp)
    }

    /// Decodes the gyroscope at offset 0 and the accelerometer at `accelOffset` of `b`.
    private func decode(_ b: [UInt8], accelOffset a: Int, at timestamp: Double) -> [RawSample] {
        let g = map.gyroOffset
        let accel = Vector3(int16LE(b, a), int16LE(b, a + 2), int16LE(b, a + 4)) * configuration.accelerometerGPerCount
        let gyro = Vector3(int16LE(b, g), int16LE(b, g + 2), int16LE(b, g + 4)) * (configuration.gyroDegreesPerCount * .pi / 180)
        return [RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero),
                RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero)]
    }
}
