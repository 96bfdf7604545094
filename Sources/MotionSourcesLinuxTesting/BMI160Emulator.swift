import MotionSources
import MotionSourcesLinux

/// A register-level emulator of a Bosch BMI160 and its FIFO, written from the datasheet
/// (BST-BMI160-DS000 sections 2.5 "FIFO", 2.11.x registers 0x22…0x24, 0x46/0x47, 0x7E), for testing
/// ``BMI160Driver``'s FIFO reads against behaviour rather than plain memory.
///
/// What it models, because a driver can get it wrong:
/// - **Power modes**: `CMD` (0x7E) 0x11 puts the accelerometer, 0x15 the gyroscope in normal mode
///   (`PMU_STATUS` 0x03 bits 5:4 and 3:2 = 01); the sample clock runs once the gyroscope is.
/// - **A sample clock**: every `1 / (100 × 2^(gyr_odr − 8))` s (`GYR_CONF` 0x42 bits 3:0, 25…3200 Hz)
///   on the injected clock, times ``clockScale``. Sample `k` holds ``signal``'s values for `k` and is
///   taken at ``sampleTime(_:)``. `DATA_8` (0x0C…0x17) holds the newest sample, gyroscope then
///   accelerometer, little-endian, at the ranges of `GYR_RANGE` (0x43) and `ACC_RANGE` (0x41).
/// - **The FIFO** (1024 bytes): each sample appends a frame of the sensors `FIFO_CONFIG_1` (0x47)
///   enables (fifo_gyr_en bit 7, fifo_acc_en bit 6), gyroscope before accelerometer; in header mode
///   (fifo_header_en bit 4, the reset value 0x10) with a header byte (0x80 | gyroscope 0x08 |
///   accelerometer 0x04). When a frame does not fit, the oldest whole frames are dropped and the
///   next read starts with a skip frame (0x40, then the number of frames lost, at most 255).
///   `FIFO_LENGTH_0/1` (0x22/0x23) hold the bytes to read (11 bits). Each read of `FIFO_DATA`
///   (0x24, no auto-increment) pops one byte; a frame read in part is finished by the next read;
///   reading an empty FIFO returns the over-read byte 0x80. `CMD` 0xB0 (fifo_flush) empties it.
///
/// ## Threading
/// Thread-safe; ``EmulatedI2CBus`` calls it under its lock.
package final class BMI160Emulator: EmulatedI2CChip, Sendable {
    /// A sample's physical values: specific force in g (+1 g on z face up) and rotation rate in °/s.
    package typealias Signal = MPUEmulator.Signal

    private struct State {
        var registers = [UInt8](repeating: 0, count: 128)
        var frames: [[UInt8]] = []
        var firstFrame = 0
        var bytes = 0
        /// The frame being read out (the rest of it), and frames lost since the last read.
        var current: [UInt8] = []
        var skipped = 0
        var nextSample: (index: Int, time: Double)?
        var overflows = 0
    }
    private let state = Locked(State())
    private let clock: @Sendable () -> Double
    private let signal: Signal
    /// The FIFO's size in bytes.
    package static let capacity = 1024
    /// The chip's oscillator against the clock.
    package let clockScale: Double

    /// A chip just powered on (both sensors suspended), its sample clock on `clock` (seconds), its
    /// samples from `signal` (default: face up at rest).
    package init(clockScale: Double = 1, clock: @escaping @Sendable () -> Double,
                 signal: @escaping Signal = { _ in ((0, 0, 1), (0, 0, 0)) }) {
        self.clock = clock
        self.signal = signal
        self.clockScale = clockScale.isFinite && clockScale > 0 ? clockScale : 1
        state.withLock { s in
            s.registers[0x00] = 0xD1
            s.registers[0x40] = 0x28  // ACC_CONF reset
            s.registers[0x41] = 0x03  // ACC_RANGE ±2 g
            s.registers[0x42] = 0x28  // GYR_CONF reset
            s.registers[0x47] = 0x10  // FIFO_CONFIG_1: header mode, no sensor
        }
    }

    private func period(of s: State) -> Double {
        let code = Int(s.registers[0x42] & 0x0F)
        let hz = 100 * pow2(min(max(code, 6), 13) - 8)
        return 1 / hz / clockScale
    }

    private func pow2(_ n: Int) -> Double { n >= 0 ? Double(1 << n) : 1 / Double(1 << -n) }

    /// The chip's sample period now, s.
    package func period() -> Double { state.withLock { period(of: $0) } }

    /// The clock time of sample `index`, or `nil` while the gyroscope is suspended.
    package func sampleTime(_ index: Int) -> Double? {
        state.withLock { s in
            guard let n = s.nextSample else { return nil }
            return n.time + Double(index - n.index) * period(of: s)
        }
    }

    /// Overflows so far (reads that began with a skip frame).
    package var overflows: Int { state.withLock { $0.overflows } }

    private func length(_ s: State) -> Int { s.current.count + (s.skipped > 0 ? 2 : 0) + s.bytes }

    package func read(register: UInt8, count: Int) -> [UInt8] {
        state.withLock { s in
            advance(&s)
            var out: [UInt8] = []
            out.reserveCapacity(count)
            var r = Int(register)
            for _ in 0..<count {
                switch r {
                case 0x22: out.append(UInt8(min(length(s), 0x7FF) & 0xFF))
                case 0x23: out.append(UInt8(min(length(s), 0x7FF) >> 8))
                case 0x24:
                    if s.current.isEmpty {
                        if s.skipped > 0 {
                            s.current = [0x40, UInt8(min(s.skipped, 255))]
                            s.skipped = 0
                            s.overflows += 1
                        } else if s.firstFrame < s.frames.count {
                            s.current = s.frames[s.firstFrame]
                            s.firstFrame += 1
                            s.bytes -= s.current.count
                        }
                    }
                    if s.current.isEmpty {
                        out.append(0x80)  // over-read
                    } else {
                        out.append(s.current.removeFirst())
                    }
                    continue  // FIFO_DATA does not auto-increment
                default: out.append(s.registers[r & 0x7F])
                }
                r = (r + 1) & 0x7F
            }
            compact(&s)
            return out
        }
    }

    private func compact(_ s: inout State) {
        if s.firstFrame > 1024 {
            s.frames.removeFirst(s.firstFrame)
            s.firstFrame = 0
        }
    }

    package func write(register: UInt8, value: UInt8) {
        state.withLock { s in
            advance(&s)
            switch register {
            case 0x00...0x3F: return  // read-only (data, status, FIFO length and data)
            case 0x7E:
                switch value {
                case 0x11: s.registers[0x03] = (s.registers[0x03] & ~0x30) | 0x10
                case 0x15:
                    let wasOff = s.registers[0x03] & 0x0C == 0
                    s.registers[0x03] = (s.registers[0x03] & ~0x0C) | 0x04
                    if wasOff { s.nextSample = (0, clock() + period(of: s)) }
                case 0xB0:
                    s.frames.removeAll()
                    s.firstFrame = 0
                    s.bytes = 0
                    s.current = []
                    s.skipped = 0
                default: break
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
        let p = period(of: s)
        while next.time <= now {
            take(&s, index: next.index)
            next = (next.index + 1, next.time + p)
        }
        s.nextSample = next
    }

    private func take(_ s: inout State, index: Int) {
        let v = signal(index)
        let countsPerG: Double = [0x05: 8192, 0x08: 4096, 0x0C: 2048][s.registers[0x41] & 0x0F] ?? 16384
        let countsPerDps = 16.4 * pow2(Int(min(s.registers[0x43] & 0x07, 4)))
        func put(_ base: Int, _ x: (x: Double, y: Double, z: Double), _ k: Double) {
            for (i, c) in [x.x, x.y, x.z].enumerated() {
                let u = UInt16(bitPattern: emulatedCounts(c, k))
                s.registers[base + 2 * i] = UInt8(u & 0xFF)
                s.registers[base + 2 * i + 1] = UInt8(u >> 8)
            }
        }
        put(0x0C, v.rotationRate, countsPerDps)
        put(0x12, v.specificForce, countsPerG)
        let config = s.registers[0x47], gyro = config & 0x80 != 0, accel = config & 0x40 != 0
        guard gyro || accel else { return }
        var frame: [UInt8] = []
        if config & 0x10 != 0 { frame.append(0x80 | (gyro ? 0x08 : 0) | (accel ? 0x04 : 0)) }
        if gyro { frame += s.registers[0x0C...0x11] }
        if accel { frame += s.registers[0x12...0x17] }
        while s.bytes + frame.count > Self.capacity, s.firstFrame < s.frames.count {
            s.bytes -= s.frames[s.firstFrame].count  // the oldest frame is lost
            s.firstFrame += 1
            s.skipped += 1
        }
        s.frames.append(frame)
        s.bytes += frame.count
    }
}
