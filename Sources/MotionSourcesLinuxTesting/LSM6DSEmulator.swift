import MotionSources
import MotionSourcesLinux

/// A register-level emulator of an ST LSM6DS3 or LSM6DSL and its untagged FIFO, written from the
/// datasheets (DocID026899 section 8 and the FIFO registers 0x06…0x0A, 0x3A…0x3F; DocID030637), for
/// testing ``LSM6DSDriver``'s FIFO reads against behaviour rather than plain memory.
///
/// What it models, because a driver can get it wrong:
/// - **A sample clock**: once `CTRL2_G` (0x11) has an ODR code (bits 7:4: 1 = 12.5 Hz, 2 = 26 Hz …
///   7 = 833 Hz, 8 = 1666 Hz), the chip takes a sample every period on the injected clock, times
///   ``clockScale`` (an oscillator that runs fast or slow). Sample `k` holds ``signal``'s values for
///   `k` and is taken at ``sampleTime(_:)``.
/// - **Data registers**: gyroscope 0x22…0x27, accelerometer 0x28…0x2D, the newest sample,
///   little-endian, at the ranges of `CTRL2_G` FS_G (bits 3:2) and `CTRL1_XL` FS_XL (bits 3:2).
/// - **The FIFO**: in continuous mode (`FIFO_CTRL5` 0x0A FIFO_MODE bits 2:0 = 110) with a FIFO ODR
///   (bits 6:3) at or above the sensors', each sample appends the gyroscope's three words then the
///   accelerometer's (those `FIFO_CTRL3` 0x08 does not leave out: DEC_FIFO_GYRO bits 5:3,
///   DEC_FIFO_XL bits 2:0 non-zero). It holds ``capacityWords`` words (4096 on the LSM6DS3, 2048 on
///   the LSM6DSL); when full the oldest *word* is overwritten and `FIFO_STATUS2` FIFO_OVER_RUN
///   (bit 6) reads 1 until a word is read out or the FIFO is reset. `FIFO_STATUS1`/`2` hold the
///   unread words (DIFF_FIFO, 12 or 11 bits), `FIFO_STATUS3`/`4` the position in the pattern of the
///   next word to read (words written since the FIFO was emptied, modulo the pattern's length).
///   `FIFO_DATA_OUT_L` (0x3E) reads the oldest word's low byte, `FIFO_DATA_OUT_H` (0x3F) its high
///   byte and pops it; a block read rolls back from 0x3F to 0x3E. Bypass mode (000) empties the FIFO.
///
/// ## Threading
/// Thread-safe; ``EmulatedI2CBus`` calls it under its lock.
package final class LSM6DSEmulator: EmulatedI2CChip, Sendable {
    /// A sample's physical values: specific force in g (+1 g on z face up) and rotation rate in °/s,
    /// in the chip's axes.
    package typealias Signal = MPUEmulator.Signal

    private struct State {
        var registers = [UInt8](repeating: 0, count: 128)
        var fifo: [UInt16] = []
        var head = 0
        /// Words written since the FIFO was emptied, of which `head` ones were read or lost (the
        /// pattern position of the head is `(consumed) % patternLength`).
        var consumed = 0
        var overrun = false
        var nextSample: (index: Int, time: Double)?
        var overflows = 0
    }
    private let state = Locked(State())
    private let clock: @Sendable () -> Double
    private let signal: Signal
    /// The FIFO's size in 16-bit words.
    package let capacityWords: Int
    /// `FIFO_STATUS2`'s DIFF_FIFO high bits.
    private let diffHighMask: UInt8
    /// The chip's oscillator against the clock: 1.02 takes samples 2 % faster than the ODR says.
    package let clockScale: Double

    /// The output data rates of ODR codes 1…10, Hz.
    static let rates: [Double] = [12.5, 26, 52, 104, 208, 416, 833, 1666, 3332, 6664]

    /// A chip just powered on (both sensors off), answering `WHO_AM_I` (0x0F) 0x69 (`.lsm6ds3`) or
    /// 0x6A (`.lsm6dsl`), its sample clock on `clock` (seconds), its samples from `signal`.
    package init(chip: I2CChip = .lsm6dsl, clockScale: Double = 1, clock: @escaping @Sendable () -> Double,
                 signal: @escaping Signal = { _ in ((0, 0, 1), (0, 0, 0)) }) {
        self.clock = clock
        self.signal = signal
        let f = LSM6DSMap.untaggedFIFO(chip) ?? (2048, 0x07)
        capacityWords = f.words
        diffHighMask = f.diffHighMask
        self.clockScale = clockScale.isFinite && clockScale > 0 ? clockScale : 1
        state.withLock { s in
            s.registers[0x0F] = chip.idValue
            s.registers[0x12] = 0x04  // CTRL3_C: IF_INC
        }
    }

    /// The chip's sample period now, s, on the injected clock, or `nil` while the gyroscope is off.
    package func period() -> Double? { state.withLock { period(of: $0) } }

    private func period(of s: State) -> Double? {
        let code = Int(s.registers[0x11] >> 4)
        guard code >= 1, code <= Self.rates.count else { return nil }
        return 1 / Self.rates[code - 1] / clockScale
    }

    /// The clock time of sample `index`, or `nil` while off; exact while the ODR has not changed since.
    package func sampleTime(_ index: Int) -> Double? {
        state.withLock { s in
            guard let n = s.nextSample, let p = period(of: s) else { return nil }
            return n.time + Double(index - n.index) * p
        }
    }

    /// Overflows so far (words overwritten after the FIFO had room).
    package var overflows: Int { state.withLock { $0.overflows } }

    package func read(register: UInt8, count: Int) -> [UInt8] {
        state.withLock { s in
            advance(&s)
            var out: [UInt8] = []
            out.reserveCapacity(count)
            var r = Int(register)
            let patternLength = self.patternLength(s)
            for _ in 0..<count {
                let unread = s.fifo.count - s.head
                switch r {
                case 0x3A: out.append(UInt8(min(unread, 0x0FFF) & 0xFF))
                case 0x3B: out.append((s.overrun ? 0x40 : 0) | (unread == 0 ? 0x10 : 0) | (UInt8(min(unread, 0x0FFF) >> 8) & diffHighMask))
                case 0x3C, 0x3D:
                    let p = patternLength > 0 ? s.consumed % patternLength : 0
                    out.append(r == 0x3C ? UInt8(p & 0xFF) : UInt8((p >> 8) & 0x03))
                case 0x3E: out.append(unread > 0 ? UInt8(s.fifo[s.head] & 0xFF) : 0)
                case 0x3F:
                    if unread > 0 {
                        out.append(UInt8(s.fifo[s.head] >> 8))
                        s.head += 1
                        s.consumed += 1
                        s.overrun = false
                    } else {
                        out.append(0)
                    }
                    r = 0x3D  // rolls back to 0x3E
                default: out.append(s.registers[r & 0x7F])
                }
                r = (r + 1) & 0x7F
            }
            if s.head > 8192 {
                s.fifo.removeFirst(s.head)
                s.head = 0
            }
            return out
        }
    }

    package func write(register: UInt8, value: UInt8) {
        state.withLock { s in
            advance(&s)
            switch register {
            case 0x0F, 0x1E...0x2D, 0x3A...0x3F: return  // read-only
            case 0x0A:
                s.registers[0x0A] = value & 0x7F
                if value & 0x07 == 0 { empty(&s) }  // bypass mode empties the FIFO
            case 0x11:
                let wasOff = period(of: s) == nil
                s.registers[0x11] = value
                if let p = period(of: s) {
                    if wasOff { s.nextSample = (0, clock() + p) }
                } else {
                    s.nextSample = nil
                }
            default:
                s.registers[Int(register & 0x7F)] = value
            }
        }
    }

    private func empty(_ s: inout State) {
        s.fifo.removeAll()
        s.head = 0
        s.consumed = 0
        s.overrun = false
    }

    /// Words a sample appends to the FIFO.
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
        let mgPerCount = [0.061, 0.488, 0.122, 0.244][Int((s.registers[0x10] >> 2) & 3)]
        let mdpsPerCount = [8.75, 17.5, 35, 70][Int((s.registers[0x11] >> 2) & 3)]
        func put(_ base: Int, _ x: (x: Double, y: Double, z: Double), _ countsPerUnit: Double) {
            for (i, c) in [x.x, x.y, x.z].enumerated() {
                let u = UInt16(bitPattern: emulatedCounts(c, countsPerUnit))
                s.registers[base + 2 * i] = UInt8(u & 0xFF)
                s.registers[base + 2 * i + 1] = UInt8(u >> 8)
            }
        }
        put(0x22, v.rotationRate, 1000 / mdpsPerCount)
        put(0x28, v.specificForce, 1000 / mgPerCount)
        let fifoODR = Int((s.registers[0x0A] >> 3) & 0x0F), sensorODR = Int(s.registers[0x11] >> 4)
        guard s.registers[0x0A] & 0x07 == 0x06, fifoODR >= sensorODR, sensorODR > 0 else { return }
        var pattern: [UInt16] = []
        let r = s.registers
        func words(from base: Int) -> [UInt16] { (0..<3).map { UInt16(r[base + 2 * $0]) | UInt16(r[base + 2 * $0 + 1]) << 8 } }
        if r[0x08] & 0x38 != 0 { pattern += words(from: 0x22) }
        if r[0x08] & 0x07 != 0 { pattern += words(from: 0x28) }
        for w in pattern {
            if s.fifo.count - s.head >= capacityWords {
                s.head += 1  // the oldest word is overwritten
                s.consumed += 1
                if !s.overrun { s.overflows += 1 }
                s.overrun = true
            }
            s.fifo.append(w)
        }
    }
}
