import MotionSources
import MotionSourcesLinux

/// A register-level emulator of an ST LSM6DS3, LSM6DSL (untagged FIFO) or LSM6DSR, LSM6DSO,
/// LSM6DST (tagged FIFO), written from the datasheets (DocID026899 section 8 and the FIFO
/// registers 0x06…0x0A, 0x3A…0x3F; DocID030637; DS12140 and DS12498 section 6.5 and the FIFO
/// registers 0x07…0x0A, 0x3A/0x3B, 0x78…0x7E), for testing ``LSM6DSDriver``'s FIFO reads against
/// behaviour rather than plain memory.
///
/// What it models, because a driver can get it wrong:
/// - **A sample clock**: once `CTRL2_G` (0x11) has an ODR code (bits 7:4: 1 = 12.5 Hz, 2 = 26 Hz …
///   7 = 833 Hz, 8 = 1666 Hz), the chip takes a sample every period on the injected clock, times
///   ``clockScale`` (an oscillator that runs fast or slow). Sample `k` holds ``signal``'s values for
///   `k` and is taken at ``sampleTime(_:)``.
/// - **Data registers**: gyroscope 0x22…0x27, accelerometer 0x28…0x2D, the newest sample,
///   little-endian, at the ranges of `CTRL2_G` FS_G (bits 3:2) and `CTRL1_XL` FS_XL (bits 3:2).
/// - **The untagged FIFO** (LSM6DS3, LSM6DSL): in continuous mode (`FIFO_CTRL5` 0x0A FIFO_MODE
///   bits 2:0 = 110) with a FIFO ODR (bits 6:3) at or above the sensors', each sample appends the
///   gyroscope's three words then the accelerometer's (those `FIFO_CTRL3` 0x08 does not leave out:
///   DEC_FIFO_GYRO bits 5:3, DEC_FIFO_XL bits 2:0 non-zero). It holds ``capacityWords`` words
///   (4096 on the LSM6DS3, 2048 on the LSM6DSL); when full the oldest *word* is overwritten and
///   `FIFO_STATUS2` FIFO_OVER_RUN (bit 6) reads 1 until a word is read out or the FIFO is reset.
///   `FIFO_STATUS1`/`2` hold the unread words (DIFF_FIFO, 12 or 11 bits), `FIFO_STATUS3`/`4` the
///   position in the pattern of the next word to read (words written since the FIFO was emptied,
///   modulo the pattern's length). `FIFO_DATA_OUT_L` (0x3E) reads the oldest word's low byte,
///   `FIFO_DATA_OUT_H` (0x3F) its high byte and pops it; a block read rolls back from 0x3F to 0x3E.
///   Bypass mode (000) empties the FIFO.
/// - **The tagged FIFO** (LSM6DSR, LSM6DSO, LSM6DST): in continuous mode (`FIFO_CTRL4` 0x0A
///   FIFO_MODE = 110), each sample whose index the batch rate divides (`FIFO_CTRL3` 0x09: BDR_GY
///   bits 7:4, BDR_XL bits 3:0, ODR codes, 0 = not batched; a BDR below the ODR batches every
///   2^(ODR − BDR)th sample) appends a gyroscope word then an accelerometer word (``accelerometerFirst``:
///   the other way round), after the words ``otherWords`` adds for that sample. A word is 7 bytes:
///   the tag (TAG_SENSOR bits 7:3, TAG_CNT bits 2:1, a counter of the batch time slots the words of
///   one sample share, TAG_PARITY bit 0: 1 when bits 7:1 hold an odd number of ones) and X, Y, Z
///   little-endian. ``losesWord`` leaves words out (a word lost). It holds ``capacityWords`` (512)
///   words; when full the oldest is overwritten and `FIFO_STATUS2` FIFO_OVR_IA (bit 6) reads 1
///   until a word is read or the FIFO is reset, FIFO_OVR_LATCHED (bit 3) until `FIFO_STATUS2` is
///   read; FIFO_FULL_IA (bit 5) while one more sample would fill it. `FIFO_STATUS1`/`2` hold the
///   unread words (DIFF_FIFO, 10 bits). `FIFO_DATA_OUT_TAG` (0x78) reads the oldest word's tag,
///   0x79…0x7E its data; reading 0x7E pops it and the address rolls back to 0x78.
/// - **The LSM9DS1** (`chip: .lsm9ds1`, datasheet DocID025715): `WHO_AM_I` 0x68; the sample clock
///   from `CTRL_REG1_G` (0x10) ODR_G bits 7:5 (1 = 14.9 Hz … 6 = 952 Hz), ranges from FS_G (0x10
///   bits 4:3) and `CTRL_REG6_XL` FS_XL (0x20 bits 4:3); data registers gyroscope 0x18…0x1D,
///   accelerometer 0x28…0x2D. Its FIFO: with `CTRL_REG9` (0x23) FIFO_EN (bit 1) and `FIFO_CTRL`
///   (0x2E) FMODE (bits 7:5) = 110, each sample appends a 32-level FIFO's level (both sensors); full,
///   the oldest level is overwritten and `FIFO_SRC` (0x2F) OVRN (bit 6) reads 1 until a level is
///   read or the FIFO is emptied; FSS (bits 5:0) the unread levels, FTH (bit 7) FSS at or above
///   `FIFO_CTRL`'s FTH (bits 4:0). Outside bypass mode the output registers read the oldest level,
///   and reading its last byte (0x2D, the accelerometer's Z high byte) pops it: a model of the
///   datasheet's "oldest level in the output registers", whose popping byte the datasheet does
///   not name. FMODE 000 (bypass) empties it. While the gyroscope runs, a burst goes from 0x1D on
///   at 0x28 and from 0x2D back to 0x18 (``roundsBurst``; the "Multiple reads (burst)" rule of the
///   datasheets of the same block, LSM6DS0 and LSM6DB0), so a 24-byte read from 0x18 reads two
///   levels.
///
/// ## Threading
/// Thread-safe; ``EmulatedI2CBus`` calls it under its lock.
package final class LSM6DSEmulator: EmulatedI2CChip, Sendable {
    /// A sample's physical values: specific force in g (+1 g on z face up) and rotation rate in °/s,
    /// in the chip's axes.
    package typealias Signal = MPUEmulator.Signal

    private struct State {
        var registers = [UInt8](repeating: 0, count: 128)
        /// Untagged: 2-byte words (low, high); tagged: 7-byte words (tag, data).
        var fifo: EmulatedFIFO<[UInt8]>
        /// Tagged: FIFO_OVR_LATCHED.
        var overrunLatched = false
        /// Tagged: TAG_CNT of the next batch time slot.
        var tagCounter = 0
        var nextSample: (index: Int, time: Double)?
    }
    private let state: Locked<State>
    private let clock: @Sendable () -> Double
    private let signal: Signal
    /// `true` for the tagged FIFO (LSM6DSR, LSM6DSO, LSM6DST).
    package let tagged: Bool
    /// `true` for the LSM9DS1's accelerometer and gyroscope (its own map and 32-level FIFO).
    package let lsm9ds1: Bool
    /// The FIFO's size in words (16-bit words untagged, 7-byte words tagged).
    package let capacityWords: Int
    /// `FIFO_STATUS2`'s DIFF_FIFO high bits.
    private let diffHighMask: UInt8
    /// The chip's oscillator against the clock: 1.02 takes samples 2 % faster than the ODR says.
    package let clockScale: Double
    /// Tagged: TAG_SENSOR values of words written before sample `k`'s (timestamp 0x04, temperature
    /// 0x03, configuration change 0x05…), data bytes from `k`.
    private let otherWords: @Sendable (Int) -> [UInt8]
    /// Tagged: whether sample `k`'s word of TAG_SENSOR `tag` is left out.
    private let losesWord: @Sendable (Int, UInt8) -> Bool
    /// Tagged: the accelerometer's word before the gyroscope's.
    package let accelerometerFirst: Bool
    /// LSM9DS1: a burst of the output registers goes from 0x1D on at 0x28 and from 0x2D back to
    /// 0x18 while the gyroscope runs (``LSM9DS1Burst/rounded``); `false` reads the addresses in
    /// turn, as register memory does.
    package let roundsBurst: Bool

    /// The output data rates of ODR codes 1…10, Hz.
    static let rates: [Double] = [12.5, 26, 52, 104, 208, 416, 833, 1666, 3332, 6664]
    /// The LSM9DS1's gyroscope output data rates of ODR_G codes 1…6, Hz.
    static let lsm9ds1Rates: [Double] = [14.9, 59.5, 119, 238, 476, 952]

    /// A chip just powered on (both sensors off), answering `WHO_AM_I` (0x0F) with `chip`'s value
    /// (0x69 `.lsm6ds3`, 0x6A `.lsm6dsl`, 0x6B `.lsm6dsr`, 0x6C `.lsm6dso`, 0x6D `.lsm6dst`), its
    /// sample clock on `clock` (seconds), its samples from `signal`. The tagged chips' options:
    /// `otherWords`, `losesWord`, `accelerometerFirst` (defaults: none, none, gyroscope first); the
    /// LSM9DS1's (0x68, `.lsm9ds1`) `roundsBurst` (default `true`).
    package init(chip: I2CChip = .lsm6dsl, clockScale: Double = 1, clock: @escaping @Sendable () -> Double,
                 signal: @escaping Signal = { _ in ((0, 0, 1), (0, 0, 0)) },
                 otherWords: @escaping @Sendable (Int) -> [UInt8] = { _ in [] },
                 losesWord: @escaping @Sendable (Int, UInt8) -> Bool = { _, _ in false },
                 accelerometerFirst: Bool = false, roundsBurst: Bool = true) {
        self.roundsBurst = roundsBurst
        self.clock = clock
        self.signal = signal
        self.otherWords = otherWords
        self.losesWord = losesWord
        self.accelerometerFirst = accelerometerFirst
        lsm9ds1 = chip == .lsm9ds1
        if chip == .lsm9ds1 {
            tagged = false
            capacityWords = 32
            diffHighMask = 0
        } else if let words = LSM6DSMap.taggedFIFO(chip) {
            tagged = true
            capacityWords = words
            diffHighMask = 0x03
        } else {
            let f = LSM6DSMap.untaggedFIFO(chip) ?? (2048, 0x07)
            tagged = false
            capacityWords = f.words
            diffHighMask = f.diffHighMask
        }
        self.clockScale = clockScale.isFinite && clockScale > 0 ? clockScale : 1
        var s = State(fifo: EmulatedFIFO(capacity: capacityWords))
        s.registers[0x0F] = chip.idValue
        s.registers[lsm9ds1 ? 0x22 : 0x12] = 0x04  // CTRL3_C / CTRL_REG8: IF_INC / IF_ADD_INC
        state = Locked(s)
    }

    /// The chip's sample period now, s, on the injected clock, or `nil` while the gyroscope is off.
    package func period() -> Double? { state.withLock { period(of: $0) } }

    private func period(of s: State) -> Double? {
        let code = lsm9ds1 ? Int(s.registers[0x10] >> 5) : Int(s.registers[0x11] >> 4)
        let rates = lsm9ds1 ? Self.lsm9ds1Rates : Self.rates
        guard code >= 1, code <= rates.count else { return nil }
        return 1 / rates[code - 1] / clockScale
    }

    /// LSM9DS1: the FIFO is on (FIFO_EN and a mode other than bypass).
    private func lsm9ds1FIFOOn(_ s: State) -> Bool { s.registers[0x23] & 0x02 != 0 && s.registers[0x2E] >> 5 != 0 }

    private func readLSM9DS1(_ s: inout State, register: UInt8, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var r = Int(register)
        for _ in 0..<count {
            switch r {
            case 0x2F:
                let unread = s.fifo.count, fth = Int(s.registers[0x2E] & 0x1F)
                out.append((s.fifo.overrun ? 0x40 : 0) | (unread >= fth ? 0x80 : 0) | UInt8(min(unread, 0x3F)))
            case 0x18...0x1D where lsm9ds1FIFOOn(s) && s.fifo.count > 0:
                out.append(s.fifo.first?[r - 0x18] ?? 0)
            case 0x28...0x2D where lsm9ds1FIFOOn(s) && s.fifo.count > 0:
                out.append(s.fifo.first?[r - 0x28 + 6] ?? 0)
                if r == 0x2D { _ = s.fifo.pop() }
            default: out.append(s.registers[r & 0x7F])
            }
            if roundsBurst, period(of: s) != nil, r == 0x1D || r == 0x2D {
                r = r == 0x1D ? 0x28 : 0x18
                continue
            }
            r = (r + 1) & 0x7F
        }
        return out
    }

    /// The clock time of sample `index`, or `nil` while off; exact while the ODR has not changed since.
    package func sampleTime(_ index: Int) -> Double? {
        state.withLock { s in
            guard let n = s.nextSample, let p = period(of: s) else { return nil }
            return n.time + Double(index - n.index) * p
        }
    }

    /// Overflows so far (words overwritten after the FIFO had room).
    package var overflows: Int { state.withLock { $0.fifo.overflows } }

    /// The FIFO port: its first register and the bytes of a word.
    private var port: (base: Int, bytes: Int) { tagged ? (0x78, 7) : (0x3E, 2) }

    package func read(register: UInt8, count: Int) -> [UInt8] {
        state.withLock { s in
            advance(&s)
            if lsm9ds1 { return readLSM9DS1(&s, register: register, count: count) }
            var out: [UInt8] = []
            out.reserveCapacity(count)
            var r = Int(register)
            let patternLength = self.patternLength(s), port = self.port
            for _ in 0..<count {
                let unread = s.fifo.count
                switch r {
                case 0x3A: out.append(UInt8(min(unread, 0x0FFF) & 0xFF))
                case 0x3B where tagged:
                    let full = unread + 2 >= capacityWords
                    out.append((s.fifo.overrun ? 0x40 : 0) | (full ? 0x20 : 0) | (s.overrunLatched ? 0x08 : 0) | (UInt8(unread >> 8) & diffHighMask))
                    s.overrunLatched = false
                case 0x3B: out.append((s.fifo.overrun ? 0x40 : 0) | (unread == 0 ? 0x10 : 0) | (UInt8(min(unread, 0x0FFF) >> 8) & diffHighMask))
                case 0x3C where !tagged, 0x3D where !tagged:
                    let p = patternLength > 0 ? s.fifo.consumed % patternLength : 0
                    out.append(r == 0x3C ? UInt8(p & 0xFF) : UInt8((p >> 8) & 0x03))
                case port.base..<(port.base + port.bytes):
                    let k = r - port.base
                    out.append(s.fifo.first?[k] ?? 0)
                    if k == port.bytes - 1 {
                        _ = s.fifo.pop()
                        r = port.base - 1  // rolls back to the word's first register
                    }
                default: out.append(s.registers[r & 0x7F])
                }
                r = (r + 1) & 0x7F
            }
            return out
        }
    }

    package func write(register: UInt8, value: UInt8) {
        state.withLock { s in
            advance(&s)
            if lsm9ds1 {
                switch register {
                case 0x0F, 0x15...0x1D, 0x27...0x2D, 0x2F: return  // read-only
                case 0x2E:
                    s.registers[0x2E] = value
                    if value >> 5 == 0 { empty(&s) }  // bypass mode empties the FIFO
                case 0x10: setODR(&s, register: 0x10, value: value)
                default: s.registers[Int(register & 0x7F)] = value
                }
                return
            }
            switch register {
            case 0x0F, 0x1E...0x2D, 0x3A...0x3F, 0x78...0x7E: return  // read-only
            case 0x0A:
                s.registers[0x0A] = tagged ? value : value & 0x7F
                if value & 0x07 == 0 { empty(&s) }  // bypass mode empties the FIFO
            case 0x11: setODR(&s, register: 0x11, value: value)
            default:
                s.registers[Int(register & 0x7F)] = value
            }
        }
    }

    /// Writes the gyroscope's ODR register: the sample clock starts when it was off.
    private func setODR(_ s: inout State, register: Int, value: UInt8) {
        let wasOff = period(of: s) == nil
        s.registers[register] = value
        if let p = period(of: s) {
            if wasOff { s.nextSample = (0, clock() + p) }
        } else {
            s.nextSample = nil
        }
    }

    private func empty(_ s: inout State) {
        s.fifo.empty()
        s.overrunLatched = false
        s.tagCounter = 0
    }

    /// Untagged: words a sample appends to the FIFO.
    private func patternLength(_ s: State) -> Int {
        (s.registers[0x08] & 0x38 != 0 ? 3 : 0) + (s.registers[0x08] & 0x07 != 0 ? 3 : 0)
    }

    /// Takes the samples due by now.
    private func advance(_ s: inout State) {
        guard var next = s.nextSample, let p = period(of: s) else { return }
        let now = clock()
        while next.time <= now {
            take(&s, index: next.index)
            next = (next.index + 1, next.time + p)
        }
        s.nextSample = next
    }

    private func take(_ s: inout State, index: Int) {
        let v = signal(index)
        // The ranges' sensitivities (mg and m°/s per count, by FS code) and the gyroscope's output
        // registers; the accelerometer's are at 0x28 on both maps.
        let mgPerCount: Double, mdpsPerCount: Double, gyroOut: Int
        if lsm9ds1 {
            mgPerCount = [0.061, 0.732, 0.122, 0.244][Int((s.registers[0x20] >> 3) & 3)]
            mdpsPerCount = [8.75, 17.5, 70, 70][Int((s.registers[0x10] >> 3) & 3)]  // code 2 is not a range
            gyroOut = 0x18
        } else {
            mgPerCount = [0.061, 0.488, 0.122, 0.244][Int((s.registers[0x10] >> 2) & 3)]
            mdpsPerCount = [8.75, 17.5, 35, 70][Int((s.registers[0x11] >> 2) & 3)]
            gyroOut = 0x22
        }
        func put(_ base: Int, _ x: (x: Double, y: Double, z: Double), _ countsPerUnit: Double) {
            for (i, c) in [x.x, x.y, x.z].enumerated() {
                let u = UInt16(bitPattern: emulatedCounts(c, countsPerUnit))
                s.registers[base + 2 * i] = UInt8(u & 0xFF)
                s.registers[base + 2 * i + 1] = UInt8(u >> 8)
            }
        }
        put(gyroOut, v.rotationRate, 1000 / mdpsPerCount)
        put(0x28, v.specificForce, 1000 / mgPerCount)
        if lsm9ds1 {
            // FIFO_EN and continuous mode: a level, the gyroscope's 6 bytes then the accelerometer's.
            if s.registers[0x23] & 0x02 != 0, s.registers[0x2E] >> 5 == 0b110 {
                s.fifo.append(Array(s.registers[0x18...0x1D]) + Array(s.registers[0x28...0x2D]))
            }
        } else if tagged {
            batchTagged(&s, index: index)
        } else {
            batchUntagged(&s)
        }
    }

    private func batchUntagged(_ s: inout State) {
        let fifoODR = Int((s.registers[0x0A] >> 3) & 0x0F), sensorODR = Int(s.registers[0x11] >> 4)
        guard s.registers[0x0A] & 0x07 == 0x06, fifoODR >= sensorODR, sensorODR > 0 else { return }
        let r = s.registers
        func words(from base: Int) -> [[UInt8]] { (0..<3).map { [r[base + 2 * $0], r[base + 2 * $0 + 1]] } }
        var pattern: [[UInt8]] = []
        if r[0x08] & 0x38 != 0 { pattern += words(from: 0x22) }
        if r[0x08] & 0x07 != 0 { pattern += words(from: 0x28) }
        for w in pattern { s.fifo.append(w) }
    }

    private func batchTagged(_ s: inout State, index: Int) {
        let r = s.registers
        guard r[0x0A] & 0x07 == 0x06 else { return }
        let odr = Int(r[0x11] >> 4)
        /// Whether a batch rate code takes this sample.
        func batched(_ bdr: Int) -> Bool { bdr > 0 && index % (1 << max(0, odr - bdr)) == 0 }
        var sensors: [UInt8] = otherWords(index)
        var data: [UInt8] = []
        if batched(Int(r[0x09] >> 4)) { data.append(0x01) }
        if batched(Int(r[0x09] & 0x0F)) { data.append(0x02) }
        guard !data.isEmpty else { return }
        sensors += accelerometerFirst ? data.reversed() : data
        let counter = s.tagCounter
        s.tagCounter = (counter + 1) % 4
        for sensor in sensors where !losesWord(index, sensor) {
            let bits = sensor << 3 | UInt8(counter) << 1  // safe: counter is tagCounter, kept in 0...3
            let tag = bits | UInt8(bits.nonzeroBitCount % 2)
            let payload: [UInt8]
            switch sensor {
            case 0x01: payload = Array(r[0x22...0x27])
            case 0x02: payload = Array(r[0x28...0x2D])
            default: payload = (0..<6).map { UInt8(truncatingIfNeeded: (index >> (8 * ($0 % 4))) ^ 0x5A) }  // safe: truncating, never traps
            }
            if s.fifo.append([tag] + payload) { s.overrunLatched = true }
        }
    }
}
