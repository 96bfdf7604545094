import MotionSources
import MotionSourcesLinux

/// A register-level emulator of an InvenSense MPU-6050 or MPU-6500/9250 and its FIFO, written from the
/// register maps (RM-MPU-6000A rev. 4.2 sections 4.6, 4.29–4.31; RM-MPU-6500A), for testing
/// ``MPUDriver``'s FIFO reads against behaviour rather than plain memory.
///
/// What it models, because a driver can get it wrong:
/// - **A sample clock**: while awake (`PWR_MGMT_1` SLEEP, bit 6, clear; it resets to 0x40), the chip
///   takes a sample every `(1 + SMPLRT_DIV) / 1000` s (`DLPF_CFG` 1…6; 0 and 7 run the gyroscope at
///   8 kHz) on the injected clock, times ``clockScale`` (a chip whose oscillator runs fast or slow).
///   Sample `k` holds ``signal``'s values for `k` and is taken at ``sampleTime(_:)``.
/// - **Data registers**: 0x3B…0x48 hold the newest sample (big-endian, at the ranges of
///   `ACCEL_CONFIG` and `GYRO_CONFIG` bits 4:3), temperature 0.
/// - **The FIFO**: with `USER_CTRL` (0x6A) FIFO_EN (bit 6) set, each sample appends the registers
///   enabled in `FIFO_EN` (0x23: TEMP bit 7, XG/YG/ZG bits 6:4, ACCEL bit 3) in the order of their
///   addresses. It holds ``capacity`` bytes (1024 on the MPU-6050, 512 on the MPU-6500 generation);
///   when full, the oldest bytes are lost (not whole samples) and `INT_STATUS` (0x3A)
///   FIFO_OFLOW_INT (bit 4) is set; reading `INT_STATUS` clears it. `FIFO_COUNTH`/`L` (0x72/0x73)
///   hold the byte count, latched when the high byte is read; each read of `FIFO_R_W` (0x74) pops
///   one byte (no auto-increment: a block read from 0x74 pops `count` bytes), an empty FIFO
///   repeating the last byte. `USER_CTRL` FIFO_RESET (bit 2) empties the FIFO only when written
///   with FIFO_EN 0, and reads back 0.
///
/// ## Threading
/// Thread-safe; ``EmulatedI2CBus`` calls it under its lock.
package final class MPUEmulator: EmulatedI2CChip, Sendable {
    /// A sample's physical values: specific force in g (+1 g on z face up) and rotation rate in °/s,
    /// in the chip's axes.
    package typealias Signal = @Sendable (_ index: Int) -> (specificForce: (x: Double, y: Double, z: Double), rotationRate: (x: Double, y: Double, z: Double))

    private struct State {
        var registers = [UInt8](repeating: 0, count: 128)
        /// Bytes (``EmulatedFIFO``; its overrun flag unused: `INT_STATUS` keeps the MPU's own).
        var fifo: EmulatedFIFO<UInt8>
        var lastPopped: UInt8 = 0
        var latchedCount = 0
        /// Index and time of the next sample, once awake.
        var nextSample: (index: Int, time: Double)?
        var overflows = 0
    }
    private let state: Locked<State>
    private let clock: @Sendable () -> Double
    private let signal: Signal
    /// The FIFO's size in bytes.
    package let capacity: Int
    /// The chip's oscillator against the clock: 1.02 takes samples 2 % faster than the divider says.
    package let clockScale: Double

    /// A chip just powered on (asleep), answering `WHO_AM_I` with `chip`'s value, its sample clock on
    /// `clock` (seconds), its samples from `signal` (default: face up at rest).
    package init(chip: MPUChip = .mpu6500, clockScale: Double = 1, clock: @escaping @Sendable () -> Double,
                 signal: @escaping Signal = { _ in ((0, 0, 1), (0, 0, 0)) }) {
        self.clock = clock
        self.signal = signal
        self.capacity = chip.fifoCapacity
        self.clockScale = clockScale.isFinite && clockScale > 0 ? clockScale : 1
        state = Locked(State(fifo: EmulatedFIFO(capacity: chip.fifoCapacity)))
        state.withLock { s in
            s.registers[0x75] = chip.whoAmI
            s.registers[0x6B] = 0x40
        }
    }

    /// The chip's sample period now, s, on the injected clock (the divider's, over ``clockScale``).
    package func period() -> Double { state.withLock { Self.period(of: $0, scale: clockScale) } }

    /// The clock time of sample `index` (the first is taken one period after waking), or `nil` while
    /// asleep; exact while the divider has not changed since.
    package func sampleTime(_ index: Int) -> Double? {
        state.withLock { s in
            guard let n = s.nextSample else { return nil }
            return n.time + Double(index - n.index) * Self.period(of: s, scale: clockScale)
        }
    }

    /// Overflows so far.
    package var overflows: Int { state.withLock { $0.overflows } }

    /// Bytes in the FIFO now.
    package var fifoCount: Int { state.withLock { s in advance(&s); return s.fifo.count } }

    private static func period(of s: State, scale: Double) -> Double {
        let dlpf = s.registers[0x1A] & 0x07
        let internalRate = dlpf == 0 || dlpf == 7 ? 8000.0 : 1000.0
        return Double(1 + Int(s.registers[0x19])) / internalRate / scale
    }

    package func read(register: UInt8, count: Int) -> [UInt8] {
        state.withLock { s in
            advance(&s)
            var out: [UInt8] = []
            out.reserveCapacity(count)
            var r = Int(register)
            for _ in 0..<count {
                switch r {
                case 0x74:
                    if let b = s.fifo.pop() { s.lastPopped = b }
                    out.append(s.lastPopped)
                    continue  // FIFO_R_W does not auto-increment
                case 0x72:
                    s.latchedCount = s.fifo.count
                    out.append(UInt8((s.latchedCount >> 8) & 0xFF))
                case 0x73:
                    out.append(UInt8(s.latchedCount & 0xFF))
                case 0x3A:
                    out.append(s.registers[0x3A])
                    s.registers[0x3A] = 0
                default:
                    out.append(s.registers[r & 0x7F])
                }
                r = (r + 1) & 0x7F
            }
            return out
        }
    }

    package func write(register: UInt8, value: UInt8) {
        state.withLock { s in
            advance(&s)
            switch register {
            case 0x75, 0x3A, 0x3B...0x48, 0x72, 0x73: return  // read-only
            case 0x6A:
                if value & 0x04 != 0 && value & 0x40 == 0 {  // FIFO_RESET acts only with FIFO_EN 0
                    s.fifo.empty()
                }
                s.registers[0x6A] = value & ~0x07  // the reset bits clear themselves
            case 0x6B:
                let wasAsleep = s.registers[0x6B] & 0x40 != 0
                s.registers[0x6B] = value & 0x7F  // DEVICE_RESET not modelled
                if wasAsleep, value & 0x40 == 0 {
                    s.nextSample = (0, clock() + Self.period(of: s, scale: clockScale))
                } else if value & 0x40 != 0 {
                    s.nextSample = nil
                }
            default:
                s.registers[Int(register & 0x7F)] = value
            }
        }
    }

    /// Takes the samples due by now.
    private func advance(_ s: inout State) {
        guard var next = s.nextSample else { return }
        let now = clock()
        let p = Self.period(of: s, scale: clockScale)
        while next.time <= now {
            take(&s, index: next.index)
            next = (next.index + 1, next.time + p)
        }
        s.nextSample = next
    }

    private func take(_ s: inout State, index: Int) {
        let v = signal(index)
        let accelCounts = 16384.0 / Double(1 << Int((s.registers[0x1C] >> 3) & 3))
        let gyroCounts = [131.0, 65.5, 32.8, 16.4][Int((s.registers[0x1B] >> 3) & 3)]
        func put(_ base: Int, _ x: (x: Double, y: Double, z: Double), _ k: Double) {
            for (i, c) in [x.x, x.y, x.z].enumerated() {
                let u = UInt16(bitPattern: emulatedCounts(c, k))
                s.registers[base + 2 * i] = UInt8(u >> 8)
                s.registers[base + 2 * i + 1] = UInt8(u & 0xFF)
            }
        }
        put(0x3B, v.specificForce, accelCounts)
        s.registers[0x41] = 0
        s.registers[0x42] = 0
        put(0x43, v.rotationRate, gyroCounts)
        guard s.registers[0x6A] & 0x40 != 0 else { return }
        let enable = s.registers[0x23]
        var frame: [UInt8] = []
        if enable & 0x08 != 0 { frame += s.registers[0x3B...0x40] }
        if enable & 0x80 != 0 { frame += s.registers[0x41...0x42] }
        if enable & 0x40 != 0 { frame += s.registers[0x43...0x44] }
        if enable & 0x20 != 0 { frame += s.registers[0x45...0x46] }
        if enable & 0x10 != 0 { frame += s.registers[0x47...0x48] }
        for b in frame {
            guard s.fifo.append(b) else { continue }
            // The oldest byte was lost.
            if s.registers[0x3A] & 0x10 == 0 { s.overflows += 1 }
            s.registers[0x3A] |= 0x10
        }
    }
}
