import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import Testing

/// The FIFO reads of the LSM6DS3/LSM6DSL (`LSM6DSDriver`, untagged FIFO), the LSM6DSO/LSM6DSR/LSM6DST
/// (`LSM6DSDriver`, tagged FIFO) and the BMI160 (`BMI160Driver`, header mode) against register-level
/// emulators written from their datasheets
/// (`LSM6DSEmulator`, `BMI160Emulator`: a sample clock from the ODR, a FIFO of the datasheet's size
/// that loses its oldest data when full and says so, the chip's read-out rules). `i2c-stub` is
/// plain memory and has no FIFO, so the emulators are the counterpart here; plain memory
/// (`InMemoryI2CBus`) checks the fall-back to direct reads.
///
/// As in `MPUFIFOTests`, each sample's gyroscope X and Y carry its index (X: index mod 1000 °/s,
/// Y: thousands), so a sample read out of order, twice, or from the wrong byte shows in the values;
/// its time on the emulator's clock is the truth for the timestamps.
@Suite struct ChipFIFOTests {
    /// The chips with a FIFO path.
    enum Chip: String, CaseIterable, CustomTestStringConvertible {
        case lsm6ds3, lsm6dsl, lsm6dso, lsm6dsr, lsm6dst, bmi160, lsm9ds1
        /// The chips whose driver keeps the LSM6DSx's or the BMI160's data-register read (12 bytes)
        /// and ODR steps when the FIFO is given up (not the LSM9DS1: 22 bytes, 14.9 × 2^k Hz).
        static let sixAxisRegisters: [Chip] = [.lsm6ds3, .lsm6dsl, .lsm6dso, .lsm6dsr, .lsm6dst, .bmi160]
        var testDescription: String { rawValue }
        var address: UInt8 { self == .bmi160 ? 0x69 : 0x6A }
        /// The ST chips with a tagged FIFO.
        static let tagged: [Chip] = [.lsm6dso, .lsm6dsr, .lsm6dst]
        var isTagged: Bool { Self.tagged.contains(self) }
        /// The chip an ST emulator answers as.
        var i2cChip: I2CChip {
            switch self {
            case .lsm6ds3: .lsm6ds3
            case .lsm6dsl: .lsm6dsl
            case .lsm6dso: .lsm6dso
            case .lsm6dsr: .lsm6dsr
            case .lsm6dst: .lsm6dst
            case .bmi160: .bmi160
            case .lsm9ds1: .lsm9ds1
            }
        }
        /// The fastest rate the driver offers (1666 Hz for the LSM6DSx, 952 Hz for the LSM9DS1, 800 Hz
        /// for the BMI160).
        var fastRate: Double { self == .bmi160 ? 800 : self == .lsm9ds1 ? 952 : 1666 }
        /// Seconds of samples that overflow the FIFO (LSM6DS3 4096 words, LSM6DSL 2048: 341 and
        /// 170 samples of 6 words at 1666 Hz; tagged 512 words, 256 samples of 2; BMI160 78 frames of
        /// 13 bytes at 800 Hz), with margin.
        var overflowGap: Double {
            switch self {
            case .lsm6ds3: 0.5
            case .lsm6dsl: 0.3
            case .lsm6dso, .lsm6dsr, .lsm6dst: 0.3
            case .bmi160: 0.2
            case .lsm9ds1: 0.1  // 32 levels at 952 Hz: 33.6 ms
            }
        }
        /// Transfers a sample may take at the fastest rate, polled about every 10 samples (see
        /// `samplesInOrderAndOnTime`): 0.7, or 0.8 for the tagged FIFO, whose 7-byte words come 4 to
        /// a transfer (2 status reads and ⌈9 × 14 / 28⌉ = 5 word reads for a poll of 9 samples: 0.78).
        /// The LSM9DS1 (its burst rounding, ``LSM9DS1Burst/rounded``) reads 2 levels a transfer and
        /// `FIFO_SRC` twice a poll of 8 levels at 119 Hz: 6 for 8, or 6 for 7 (0.86) in a short poll.
        var transfersPerSample: Double { self == .lsm9ds1 ? 0.9 : isTagged ? 0.8 : 0.7 }
        /// The FIFO port and the bytes a sample takes there.
        var port: (register: UInt8, sampleBytes: Int) {
            switch self {
            case .bmi160: (0x24, BMI160Driver.fifoFrameSize)
            case .lsm6dso, .lsm6dsr, .lsm6dst: (0x78, 14)
            case .lsm6ds3, .lsm6dsl: (0x3E, 12)
            case .lsm9ds1: (0x18, 12)  // a level: the gyroscope's 6 bytes, the accelerometer's
            }
        }
    }

    /// A driver on a bus, polled on a manual clock: every transfer takes 0.2 ms.
    final class Rig {
        let clock = EmulatedChipHarness.Clock()
        let bus: any I2CBus
        let chip: Chip
        var driver: any I2CChipDriver
        /// The emulator's sample time of an index, its overflow count, its period.
        let sampleTime: (Int) -> Double?
        let chipOverflows: () -> Int
        let period: () -> Double
        var samples: [RawSample] = []
        var interruptions: [SourceError] = []
        var notices: [String] = []
        var failure: SourceError?
        var afterTransfer: (I2CDriverAction) -> Void = { _ in }

        /// `silentStatus`: the ST chip's FIFO_OVER_RUN and pattern position read 0 whatever happened
        /// (a chip whose flags say nothing), so only the word count can tell an overflow.
        /// `pairing`: the accelerometer's X carries the index too (``Rig/pairedExactly``); the
        /// tagged chips' emulator options as in `LSM6DSEmulator`.
        init(_ chip: Chip, rate: Double? = nil, clockScale: Double = 1, silentStatus: Bool = false, pairing: Bool = false,
             otherWords: @escaping @Sendable (Int) -> [UInt8] = { _ in [] },
             losesWord: @escaping @Sendable (Int, UInt8) -> Bool = { _, _ in false }, accelerometerFirst: Bool = false,
             roundsBurst: Bool = true) {
            self.chip = chip
            let clock = self.clock
            let emulated = EmulatedI2CBus(path: "/dev/i2c-1")
            bus = emulated
            let signal: MPUEmulator.Signal = { i in
                let x: Double = pairing ? Self.pairingG(i) : 0
                let rate: (x: Double, y: Double, z: Double) = (Double(i % 1000), Double(i / 1000), 0)
                return ((x, 0, 1), rate)
            }
            let r = rate ?? chip.fastRate
            switch chip {
            case .lsm6ds3, .lsm6dsl, .lsm6dso, .lsm6dsr, .lsm6dst:
                let e = LSM6DSEmulator(chip: chip.i2cChip, clockScale: clockScale, clock: { clock.now }, signal: signal,
                                       otherWords: otherWords, losesWord: losesWord, accelerometerFirst: accelerometerFirst)
                emulated.attach(silentStatus ? SilentFIFOStatus(e, tagged: chip.isTagged) : e, at: chip.address)
                driver = LSM6DSDriver(map: .lsm6dsx, address: chip.address, busPath: "/dev/i2c-1",
                                      configuration: LSM6DSConfiguration(map: .lsm6dsx, gyroRange: 2000, rate: r))
                sampleTime = e.sampleTime
                chipOverflows = { e.overflows }
                period = { e.period() ?? 0 }
            case .lsm9ds1:
                let e = LSM6DSEmulator(chip: .lsm9ds1, clockScale: clockScale, clock: { clock.now }, signal: signal, roundsBurst: roundsBurst)
                emulated.attach(e, at: chip.address)
                driver = LSM6DSDriver(map: .lsm9ds1, address: chip.address, busPath: "/dev/i2c-1",
                                      configuration: LSM6DSConfiguration(map: .lsm9ds1, gyroRange: 2000, rate: r))
                sampleTime = e.sampleTime
                chipOverflows = { e.overflows }
                period = { e.period() ?? 0 }
            case .bmi160:
                let e = BMI160Emulator(clockScale: clockScale, clock: { clock.now }, signal: signal)
                emulated.attach(e, at: chip.address)
                driver = BMI160Driver(address: chip.address, busPath: "/dev/i2c-1", configuration: BMI160Configuration(rate: r))
                sampleTime = e.sampleTime
                chipOverflows = { e.overflows }
                period = { e.period() }
            }
        }

        /// A rig on plain register memory (`i2c-stub`'s behaviour): identity and power status set,
        /// the pose face up in the data registers, every FIFO register 0.
        init(memory chip: Chip, rate: Double) {
            self.chip = chip
            let m = InMemoryI2CBus(path: "/dev/i2c-1")
            m.addChip(at: chip.address)
            switch chip {
            case .lsm6ds3, .lsm6dsl, .lsm6dso, .lsm6dsr, .lsm6dst:
                m.set(chip.address, 0x0F, chip.i2cChip.idValue)
                m.set(chip.address, 0x2C, 0x09)  // +1 g: 16393 counts of 0.061 mg, little-endian
                m.set(chip.address, 0x2D, 0x40)
                driver = LSM6DSDriver(map: .lsm6dsx, address: chip.address, busPath: "/dev/i2c-1",
                                      configuration: LSM6DSConfiguration(map: .lsm6dsx, rate: rate))
            case .lsm9ds1:
                m.set(chip.address, 0x0F, 0x68)
                m.set(chip.address, 0x2C, 0x09)
                m.set(chip.address, 0x2D, 0x40)
                driver = LSM6DSDriver(map: .lsm9ds1, address: chip.address, busPath: "/dev/i2c-1",
                                      configuration: LSM6DSConfiguration(map: .lsm9ds1, rate: rate))
            case .bmi160:
                m.set(chip.address, 0x00, 0xD1)
                m.set(chip.address, 0x03, 0x14)
                m.set(chip.address, 0x17, 0x40)  // +1 g: 16384 counts, little-endian
                driver = BMI160Driver(address: chip.address, busPath: "/dev/i2c-1", configuration: BMI160Configuration(rate: rate))
            }
            bus = m
            sampleTime = { _ in nil }
            chipOverflows = { 0 }
            period = { 0 }
        }

        func perform(_ first: [I2CDriverAction]) {
            var queue = first
            let address = chip.address
            while !queue.isEmpty, failure == nil {
                let action = queue.removeFirst()
                var answer: [I2CDriverAction] = []
                do throws(LinuxIOError) {
                    switch action {
                    case .read(let r, let n):
                        clock.advance(0.0002)
                        answer = driver.received(try bus.read(address: address, register: r, count: n), at: clock.now)
                    case .readFIFO(let r, let n):
                        clock.advance(0.0002)
                        answer = driver.received(try bus.readFIFO(address: address, register: r, count: n), at: clock.now)
                    case .write(let r, let v):
                        clock.advance(0.0002)
                        try bus.write(address: address, register: r, value: v)
                    case .deliver(let s): samples += s
                    case .interrupted(let e): interruptions.append(e)
                    case .notice(let m): notices.append(m)
                    case .fail(let e): failure = e
                    case .pause(let s): clock.advance(s)
                    case .streaming, .attitude: break
                    }
                } catch { answer = driver.transferFailed(error) }
                afterTransfer(action)
                queue = answer + queue
            }
        }

        func setUp() { perform(driver.start()) }
        func poll() { perform([.read(register: driver.dataRead.register, count: driver.dataRead.count)]) }

        /// Polls at the driver's poll rate (plus `jitter(i)`) until `seconds` have passed.
        func run(seconds: Double, jitter: (Int) -> Double = { _ in 0 }) {
            let end = clock.now + seconds
            var i = 0
            while clock.now < end, failure == nil {
                clock.advance(1 / driver.pollRate + jitter(i))
                poll()
                i += 1
            }
        }

        var gyro: [RawSample] { samples.filter { $0.sensor == .gyro } }
        var indices: [Int] { gyro.map(MPUFIFOTests.index) }
        var consecutive: Bool {
            let i = indices
            guard let f = i.first else { return false }
            return i == Array(f..<(f + i.count))
        }
        /// Every accelerometer sample face up within a count: no sample read from the wrong byte.
        var accelerationExact: Bool {
            let count = chip == .bmi160 ? 1.0 / 16384 : 0.000061
            return samples.filter { $0.sensor == .accelerometer }.allSatisfy { EmulatedChipHarness.near($0.value, Vector3(0, 0, -1), count) }
        }
        /// The accelerometer's X (g) that carries sample `i`'s index with `pairing`: (i mod 512) / 1024.
        static func pairingG(_ i: Int) -> Double { Double(i % 512) / 1024 }
        /// With `pairing`: every accelerometer sample has the gyroscope sample of its own index
        /// (the same timestamp), within a count: no word paired with another sample's.
        var pairedExactly: Bool {
            let accel = samples.filter { $0.sensor == .accelerometer }
            guard accel.count == gyro.count, !accel.isEmpty else { return false }
            return zip(accel, gyro).allSatisfy { a, g in
                a.timestamp == g.timestamp
                    && EmulatedChipHarness.near(a.value, Vector3(-Self.pairingG(MPUFIFOTests.index(g)), 0, -1), 0.000061)
            }
        }
        /// The worst distance of a gyroscope sample's timestamp from when the chip took it, s.
        func worstTimestampError(after start: Double = -.infinity) throws -> Double {
            var worst = 0.0
            for (k, s) in zip(indices, gyro) where s.timestamp > start {
                worst = max(worst, abs(s.timestamp - (try #require(sampleTime(k)))))
            }
            return worst
        }
    }

    @Test func fifoAboveOneHundredHertzOnly() {
        #expect(LSM6DSConfiguration(map: .lsm6dsx, rate: 833).prefersFIFO && LSM6DSConfiguration(map: .lsm6dsx, rate: 200).prefersFIFO)
        #expect(!LSM6DSConfiguration(map: .lsm6dsx, rate: 100).prefersFIFO, "100 Hz runs at 104 Hz and still reads its registers")
        #expect(LSM6DSConfiguration(map: .lsm6dsx, rate: 833).fifoPollRate == 83.3)
        #expect(BMI160Configuration(rate: 800).usesFIFO && !BMI160Configuration(rate: 100).usesFIFO && !BMI160Configuration(rate: 800, fifo: false).usesFIFO)
        #expect(BMI160Configuration(rate: 800).fifoPollRate == 80 && BMI160Configuration(rate: 200).fifoPollRate == 50)
        #expect(LSM6DSMap.untaggedFIFO(.lsm6dso) == nil && LSM6DSMap.untaggedFIFO(.lsm6dsr) == nil, "tagged FIFO: not read")
        #expect(LSM6DSConfiguration(map: .lsm6dsx, rate: 833).fifoWrites.map { [$0.register, $0.value] } == [[0x0A, 0x00], [0x08, 0x09], [0x0A, 0x3E]],
                "bypass (empties the FIFO), gyroscope and accelerometer undecimated, continuous mode at 833 Hz (ODR_FIFO 0111)")
    }

    /// The fastest rate for 2 s: every sample once, in order, the pose in Core Motion's units, each
    /// stamped within a period of when the chip took it; SMBus block reads of at most 32 bytes.
    ///
    /// The transfers, from the read-out rules: a poll about every 10 samples reads the count (ST:
    /// `FIFO_STATUS1..4`, BMI160: `FIFO_LENGTH`), the samples (10 × 12 bytes, BMI160 10 × 13 with
    /// headers) in SMBus blocks of at most 32 bytes (⌈120 / 32⌉ = 4, ⌈130 / 32⌉ = 5) and, on ST, the
    /// status again: 6 transfers for 10 samples, 0.6 a sample, against 1 a sample for direct reads.
    /// The bound allows polls that find 9 samples (1 + ⌈108 / 32⌉ + 1 = 6, 0.67 a sample) but not one
    /// read a sample; and each FIFO byte is read once (no sample read twice, no over-read).
    @Test(arguments: Chip.allCases) func samplesInOrderAndOnTime(chip: Chip) throws {
        let rig = Rig(chip)
        rig.setUp()
        #expect(rig.failure == nil && rig.driver.isStreaming)
        rig.run(seconds: 2)
        #expect(rig.failure == nil && rig.interruptions.isEmpty, "\(rig.interruptions)")
        let gyro = rig.gyro
        #expect(Double(gyro.count) > 1.9 * chip.fastRate, "\(gyro.count) samples in 2 s at \(chip.fastRate) Hz")
        #expect(rig.consecutive, "every sample once, oldest first: \(rig.indices.prefix(30))")
        #expect(rig.indices.first.map { $0 < 100 } == true, "the FIFO started within the set-up: \(rig.indices.first ?? -1)")
        #expect(rig.accelerationExact)
        let p = rig.period()
        let worst = try rig.worstTimestampError()
        #expect(worst <= p, "worst timestamp error \(worst) s at a period of \(p) s")
        #expect(zip(gyro, gyro.dropFirst()).allSatisfy { $1.timestamp > $0.timestamp })
        let log = (rig.bus as? EmulatedI2CBus)?.log ?? []
        let reads = log.compactMap { t -> (register: UInt8, count: Int)? in if case .read(_, let r, let n) = t { (r, n) } else { nil } }
        #expect(reads.allSatisfy { $0.count <= 32 }, "SMBus block reads")
        #expect(Double(reads.count) < chip.transfersPerSample * Double(gyro.count), "\(reads.count) transfers for \(gyro.count) samples")
        #expect(Double(reads.count) / 2 < chip.transfersPerSample * chip.fastRate, "\(Double(reads.count) / 2) transfers a second at \(chip.fastRate) Hz")
        let (port, frame) = chip.port
        // The LSM9DS1's burst probe reads 12 bytes from 0x18 once, before the FIFO is on.
        let fifoBytes = reads.filter { $0.register == port }.reduce(0) { $0 + $1.count } - (chip == .lsm9ds1 ? 12 : 0)
        // Tagged: a sample's first word read at the end of a poll waits for its partner (7 bytes).
        #expect((0...(chip.isTagged ? 7 : 0)).contains(fifoBytes - frame * gyro.count), "\(fifoBytes) FIFO bytes read for \(gyro.count) samples of \(frame)")
    }

    /// A chip whose oscillator runs 3 % fast, polls late by up to 6 ms at random: the timestamps
    /// follow the chip's clock (the measured period), not the ODR's nominal one.
    @Test(arguments: Chip.allCases) func timestampsFollowTheChipsClock(chip: Chip) throws {
        let rig = Rig(chip, rate: 400, clockScale: 1.03)
        rig.setUp()
        var rng = JitterRandom(seed: 11)
        rig.run(seconds: 3) { _ in rng.unit() * 0.006 }
        #expect(rig.failure == nil && rig.interruptions.isEmpty)
        #expect(rig.consecutive)
        let gyro = rig.gyro, p = rig.period()
        let worst = try rig.worstTimestampError(after: gyro[0].timestamp + 1)
        #expect(worst <= 1.5 * p, "worst timestamp error \(worst) s at a period of \(p) s")
        let last = gyro.suffix(200)
        let spacing = (last.last!.timestamp - last.first!.timestamp) / Double(last.count - 1)
        #expect(abs(spacing - p) < 0.01 * p, "spacing \(spacing) s, chip's period \(p) s")
    }

    /// A poll that comes too late: the FIFO overflows. Reported once, the FIFO reset, nothing from
    /// the overflowed FIFO delivered, and the stream goes on with correct values and times.
    @Test(arguments: Chip.allCases) func overflowIsReportedOnceAndNothingGarbledIsDelivered(chip: Chip) throws {
        let rig = Rig(chip)
        rig.setUp()
        rig.run(seconds: 0.2)
        let before = rig.gyro.count
        rig.clock.advance(chip.overflowGap)
        rig.run(seconds: 0.4)
        #expect(rig.failure == nil)
        #expect(rig.interruptions.count == 1, "\(rig.interruptions)")
        #expect(rig.interruptions.first?.message.contains("FIFO overflowed") == true)
        #expect(rig.chipOverflows() >= 1)
        let idx = rig.indices
        #expect(zip(idx, idx.dropFirst()).allSatisfy { $1 > $0 }, "in order")
        #expect(Array(idx.prefix(before)) == Array(idx[0]..<(idx[0] + before)))
        let after = Array(idx.dropFirst(before))
        #expect(after.count > 250, "\(after.count) samples after the overflow")
        #expect(after.first.map { $0 >= idx[before - 1] + 50 } == true, "a gap where samples were lost")
        #expect(after == Array((after.first ?? 0)..<((after.first ?? 0) + after.count)), "every sample after the reset")
        #expect(rig.accelerationExact)
        #expect(try rig.worstTimestampError() <= rig.period())
    }

    /// An overflow between the count and the FIFO read: the count was fine, the data read no longer
    /// starts at a sample. The status after the data (ST: pattern, overrun) or the skip frame at the
    /// head of the data (BMI160) tells; the batch is dropped.
    @Test(arguments: Chip.allCases) func overflowDuringThePollIsCaught(chip: Chip) throws {
        let rig = Rig(chip)
        rig.setUp()
        rig.run(seconds: 0.1)
        let before = rig.gyro.count
        var once = true
        let countRead = rig.driver.dataRead
        rig.afterTransfer = { [unowned rig] a in
            if once, case .read(countRead.register, countRead.count) = a {
                once = false
                rig.clock.advance(chip.overflowGap)
            }
        }
        // One poll (its count read followed by the gap), then 0.3 s of polls after it: as in
        // MPUFIFOTests, the overflowed batch is dropped and the stream goes on after the reset.
        rig.clock.advance(1 / rig.driver.pollRate)
        rig.poll()
        #expect(!once, "the gap came after the count read")
        rig.run(seconds: 0.3)
        #expect(rig.failure == nil && rig.interruptions.count == 1 && rig.chipOverflows() >= 1, "\(rig.interruptions)")
        #expect(rig.interruptions.first?.message.contains("FIFO overflowed") == true)
        let idx = rig.indices
        #expect(zip(idx, idx.dropFirst()).allSatisfy { $1 > $0 })
        #expect(Array(idx.prefix(before)) == Array(idx[0]..<(idx[0] + before)), "the samples before the overflow")
        let after = Array(idx.dropFirst(before))
        // 0.3 s at 833 or 800 Hz is 240 samples or more; the first poll after the reset may find few.
        #expect(after.count > 200, "\(after.count) samples after the overflow")
        #expect(after.first.map { $0 >= idx[before - 1] + 50 } == true, "a gap where samples were lost")
        #expect(after == Array((after.first ?? 0)..<((after.first ?? 0) + after.count)), "every sample after the reset")
        #expect(rig.accelerationExact)
        #expect(try rig.worstTimestampError() <= rig.period())
    }

    /// The ST chips: an overflow that FIFO_OVER_RUN and the pattern position do not show (a chip
    /// that clears its overrun flag on the first word read and lost whole patterns) is still caught by
    /// the word count, before the read (no room for another sample) and after it (what was read
    /// plus what is left fills the FIFO). Nothing garbled is delivered.
    @Test(arguments: [Chip.lsm6ds3, .lsm6dsl] + Chip.tagged) func anOverflowTheFlagsDoNotShowIsCaughtByTheCount(chip: Chip) throws {
        for duringThePoll in [false, true] {
            let rig = Rig(chip, silentStatus: true)
            rig.setUp()
            rig.run(seconds: 0.1)
            let before = rig.gyro.count
            if duringThePoll {
                var once = true
                let countRead = rig.driver.dataRead
                rig.afterTransfer = { [unowned rig] a in
                    if once, case .read(countRead.register, countRead.count) = a {
                        once = false
                        rig.clock.advance(chip.overflowGap)
                    }
                }
                rig.clock.advance(1 / rig.driver.pollRate)
                rig.poll()
            } else {
                rig.clock.advance(chip.overflowGap)
            }
            rig.run(seconds: 0.3)
            #expect(rig.failure == nil && rig.interruptions.count == 1 && rig.chipOverflows() >= 1, "during the poll: \(duringThePoll), \(rig.interruptions)")
            let idx = rig.indices
            #expect(zip(idx, idx.dropFirst()).allSatisfy { $1 > $0 }, "during the poll: \(duringThePoll)")
            #expect(idx.count > before + 200)
            #expect(rig.accelerationExact, "during the poll: \(duringThePoll): a sample read from the wrong word")
        }
    }

    /// Plain register memory (`i2c-stub`): the FIFO count stays 0, so after 10 periods (at least
    /// 50 ms) the driver reads the data registers, says so once in the log, and decodes them. As
    /// for the MPU (MPUFIFOTests): a notice, not an interruption, since no sample was lost.
    @Test(arguments: Chip.sixAxisRegisters) func anEmptyFIFOIsGivenUpForDirectReads(chip: Chip) {
        let rig = Rig(memory: chip, rate: 400)
        rig.setUp()
        #expect(rig.failure == nil && rig.driver.isStreaming)
        // 400 Hz asked: ST's ODRs are 12.5 × 2^k Hz (416), the BMI160's 25 × 2^k (400).
        #expect(rig.driver.actualRate == (chip == .bmi160 ? 400 : 416))
        #expect(rig.driver.pollRate == 50, "the FIFO's poll rate")
        rig.run(seconds: 0.2)
        #expect(rig.failure == nil)
        #expect(rig.interruptions.isEmpty, "nothing was lost: \(rig.interruptions)")
        #expect(rig.notices.count == 1 && rig.notices.first?.contains("FIFO stays empty") == true, "\(rig.notices)")
        #expect(rig.driver.pollRate == rig.driver.actualRate && rig.driver.dataRead.count == 12, "one read of the data registers per sample")
        #expect(!rig.samples.isEmpty && rig.accelerationExact)
    }

    /// At 100 Hz and below nothing changes: one read of the data registers per sample, no FIFO
    /// register written (what the `i2c-stub` scenario in the VM checks).
    @Test(arguments: Chip.sixAxisRegisters) func oneHundredHertzReadsTheRegisters(chip: Chip) {
        let rig = Rig(memory: chip, rate: 100)
        rig.setUp()
        #expect(rig.failure == nil && rig.driver.isStreaming)
        #expect(rig.driver.dataRead.count == 12 && rig.driver.pollRate == rig.driver.actualRate)
        let writes = (rig.bus as? InMemoryI2CBus)?.log.compactMap { t -> UInt8? in if case .write(_, let r, _) = t { r } else { nil } } ?? []
        #expect(!writes.contains { [0x08, 0x09, 0x0A, 0x47].contains($0) }, "\(writes)")
        rig.run(seconds: 0.1)
        #expect(rig.interruptions.isEmpty && rig.samples.count >= 18)
    }

    /// The tagged FIFO's set-up: both sensors batched at the output data rate (`FIFO_CTRL3` 0x09
    /// BDR_GY, BDR_XL), continuous mode without timestamp or temperature words (`FIFO_CTRL4` 0x0A
    /// = 0x06), after bypass; read back.
    /// The LSM9DS1's FIFO set-up (`FIFO_CTRL` 0x2E bypass, `CTRL_REG9` 0x23 FIFO_EN, `FIFO_CTRL`
    /// continuous 0xC0) and its poll rate: at least 4 polls per fill of its 32 levels.
    @Test func lsm9ds1FIFOConfiguration() {
        #expect(LSM6DSConfiguration(map: .lsm9ds1, rate: 952).lsm9ds1FIFOWrites.map { [$0.register, $0.value] } == [[0x2E, 0x00], [0x23, 0x02], [0x2E, 0xC0]])
        #expect(LSM6DSConfiguration(map: .lsm9ds1, rate: 952).fifoPollRate == 119, "32 levels at 952 Hz: 4 polls a fill")
        #expect(abs(LSM6DSConfiguration(map: .lsm9ds1, rate: 476).fifoPollRate - 59.5) < 1e-9)
        #expect(LSM6DSConfiguration(map: .lsm9ds1, rate: 200).fifoPollRate == 50)
        #expect(LSM6DSConfiguration(map: .lsm6dsx, rate: 833).fifoPollRate == 83.3, "the large FIFOs keep every 10 samples")
        let rig = Rig(.lsm9ds1, rate: 952)
        rig.setUp()
        #expect(rig.failure == nil && (rig.driver as? LSM6DSDriver)?.readsFIFO == true)
        #expect(rig.driver.pollRate == 119 && rig.driver.dataRead.register == 0x2F && rig.driver.dataRead.count == 1)
        let writes = (rig.bus as? EmulatedI2CBus)?.log.compactMap { t -> [UInt8]? in if case .write(_, let r, let v) = t { [r, v] } else { nil } } ?? []
        #expect(writes.suffix(3) == [[0x2E, 0x00], [0x23, 0x02], [0x2E, 0xC0]], "\(writes)")
    }

    /// The LSM9DS1's burst (``LSM9DS1Burst``), found by the driver: where the chip goes from 0x1D
    /// on at 0x28 and from 0x2D back to 0x18 (the emulator's default, the datasheets' rule), a
    /// sample is 12 bytes from 0x18 and FIFO levels come two to a read; where it reads the
    /// addresses in turn (register memory, `i2c-stub`), a sample is 22 bytes from 0x18 and a level
    /// two 6-byte reads. Either way every sample once, in order, face up exactly.
    @Test(arguments: [true, false]) func lsm9ds1ReadsAsItsBurstWalks(rounds: Bool) {
        let direct = Rig(.lsm9ds1, rate: 50, roundsBurst: rounds)
        direct.setUp()
        let d = direct.driver as? LSM6DSDriver
        #expect(direct.failure == nil && d?.readsFIFO == false && d?.burst == (rounds ? .rounded : .linear))
        #expect(direct.driver.dataRead.register == 0x18 && direct.driver.dataRead.count == (rounds ? 12 : 22))
        direct.run(seconds: 1)
        #expect(direct.failure == nil && direct.gyro.count >= 40 && direct.accelerationExact)
        #expect(zip(direct.indices, direct.indices.dropFirst()).allSatisfy { $1 > $0 }, "\(direct.indices.prefix(20))")

        let rig = Rig(.lsm9ds1, rate: 952, roundsBurst: rounds)
        rig.setUp()
        #expect(rig.failure == nil && (rig.driver as? LSM6DSDriver)?.readsFIFO == true)
        rig.run(seconds: 1)
        #expect(rig.failure == nil && rig.interruptions.isEmpty && rig.consecutive && rig.accelerationExact)
        #expect(Double(rig.gyro.count) > 0.9 * 952)
        let log = (rig.bus as? EmulatedI2CBus)?.log ?? []
        let dataReads = log.compactMap { t -> [Int]? in
            if case .read(_, let r, let n) = t, r != 0x2F, r != 0x1E { [Int(r), n] } else { nil }
        }.suffix(40)
        #expect(dataReads.allSatisfy { rounds ? $0[0] == 0x18 && ($0[1] == 12 || $0[1] == 24) : ($0[0] == 0x18 || $0[0] == 0x28) && $0[1] == 6 }, "\(dataReads)")
    }

    /// `FIFO_SRC`: OVRN (bit 6) is an overflow whatever the count, and so is a count of 32 (full)
    /// without OVRN, whose flag a chip may clear before it is read; 20 levels without OVRN are read.
    @Test func lsm9ds1OverrunOrAFullCountIsAnOverflow() {
        func streaming() -> LSM6DSDriver {
            let rig = Rig(.lsm9ds1, rate: 952)
            rig.setUp()
            return rig.driver as! LSM6DSDriver
        }
        var d = streaming()
        #expect(d.readsFIFO && d.dataRead == (0x2F, 1))
        let reset: [I2CDriverAction] = [.write(register: 0x2E, value: 0x00), .write(register: 0x2E, value: 0xC0)]
        let overrun = d.received([0x40 | 20], at: 1)
        #expect(overrun.count == 3 && Array(overrun.dropFirst()) == reset && d.fifoOverflows == 1, "\(overrun)")
        var e = streaming()
        let full = e.received([32], at: 1)
        #expect(full.count == 3 && Array(full.dropFirst()) == reset && e.fifoOverflows == 1, "\(full)")
        var f = streaming()
        #expect(f.received([20], at: 1) == stride(from: 0, to: 20, by: 2).map { _ in .read(register: 0x18, count: 24) })
        #expect(f.fifoOverflows == 0)
    }

    @Test func taggedFIFOConfiguration() {
        #expect(LSM6DSConfiguration(map: .lsm6dsx, rate: 1666).taggedFIFOWrites.map { [$0.register, $0.value] } == [[0x0A, 0x00], [0x09, 0x88], [0x0A, 0x06]])
        #expect(LSM6DSConfiguration(map: .lsm6dsx, rate: 400).taggedFIFOWrites.map { [$0.register, $0.value] } == [[0x0A, 0x00], [0x09, 0x66], [0x0A, 0x06]])
        #expect(LSM6DSMap.taggedFIFO(.lsm6dso) == 512 && LSM6DSMap.taggedFIFO(.lsm6dsr) == 512 && LSM6DSMap.taggedFIFO(.lsm6dst) == 512)
        #expect(LSM6DSMap.taggedFIFO(.lsm6dsl) == nil && LSM6DSMap.untaggedFIFO(.lsm6dso) == nil)
        let rig = Rig(.lsm6dso, rate: 1666)
        rig.setUp()
        let writes = (rig.bus as? EmulatedI2CBus)?.log.compactMap { t -> [UInt8]? in if case .write(_, let r, let v) = t { [r, v] } else { nil } } ?? []
        #expect(writes.suffix(3) == [[0x0A, 0x00], [0x09, 0x88], [0x0A, 0x06]], "\(writes)")
        #expect(rig.driver.dataRead == (0x3A, 2) && rig.driver.pollRate == 166.6)
    }

    /// 416 Hz and 1.66 kHz for 2 s on each tagged chip: every sample once, in order, the
    /// accelerometer word paired with the gyroscope word of its own sample (the index in both), in
    /// Core Motion's units (gyroscope rad/s from °/s, accelerometer g negated), each within one period
    /// of when the chip took it; nothing dropped, nothing reported.
    @Test(arguments: Chip.tagged) func taggedSamplesAt416And1666Hz(chip: Chip) throws {
        for rate in [416.0, 1666] {
            let rig = Rig(chip, rate: rate, pairing: true)
            rig.setUp()
            #expect(rig.failure == nil && rig.driver.isStreaming && rig.driver.actualRate == rate)
            rig.run(seconds: 2)
            #expect(rig.failure == nil && rig.interruptions.isEmpty && rig.notices.isEmpty, "\(rate) Hz: \(rig.interruptions) \(rig.notices)")
            #expect(Double(rig.gyro.count) > 1.9 * rate, "\(rate) Hz: \(rig.gyro.count) samples in 2 s")
            #expect(rig.consecutive && rig.indices.first.map { $0 < 100 } == true, "\(rate) Hz: \(rig.indices.prefix(20))")
            #expect(rig.pairedExactly, "\(rate) Hz: each accelerometer word with its own sample's gyroscope word")
            let g = try #require(rig.gyro.last)
            let k = MPUFIFOTests.index(g)
            #expect(abs(g.value.x - Double(k % 1000) * .pi / 180) < 0.07 * .pi / 180 && g.value.z == 0, "rad/s within a count of 70 m°/s")
            #expect(try rig.worstTimestampError() <= rig.period(), "\(rate) Hz")
            #expect((rig.driver as? LSM6DSDriver)?.fifoDroppedBatches == 0)
        }
    }

    /// Words of the sensors the driver does not read (timestamp 0x04 every 4th sample, temperature
    /// 0x03 every 8th, a configuration change 0x05 once) are skipped, and a batch whose
    /// accelerometer word comes first pairs as well: every sample once, paired, on time.
    @Test func taggedWordsOfOtherSensorsAreSkipped() throws {
        let others: @Sendable (Int) -> [UInt8] = { i in (i % 4 == 0 ? [0x04] : []) + (i % 8 == 0 ? [0x03] : []) + (i == 100 ? [0x05] : []) }
        for accelFirst in [false, true] {
            let rig = Rig(.lsm6dso, pairing: true, otherWords: others, accelerometerFirst: accelFirst)
            rig.setUp()
            rig.run(seconds: 1)
            #expect(rig.failure == nil && rig.interruptions.isEmpty, "accelerometer first: \(accelFirst), \(rig.interruptions)")
            #expect(Double(rig.gyro.count) > 0.9 * 1666 && rig.consecutive, "accelerometer first: \(accelFirst), \(rig.indices.prefix(20))")
            #expect(rig.pairedExactly, "accelerometer first: \(accelFirst)")
            #expect((rig.driver as? LSM6DSDriver)?.fifoDroppedBatches == 0)
            #expect(try rig.worstTimestampError() <= rig.period())
        }
    }

    /// A word lost (the tag counter tells): sample 300's accelerometer word, 700's gyroscope word,
    /// both words of 1000, 1001 and 1002 (three slots: the counter comes back to its value, which
    /// reads as four slots on, so three lost). Only those samples are missing; the others are
    /// delivered once, paired and within one period of when the chip took them, the lost slots
    /// keeping their time (999 and 1003 four periods apart), with no overflow reported and no
    /// FIFO reset.
    @Test func aTagCounterThatSkipsLosesOnlyItsSamples() throws {
        let lost: Set<Int> = [300, 700, 1000, 1001, 1002]
        let rig = Rig(.lsm6dso, pairing: true, losesWord: { i, tag in
            (i == 300 && tag == 0x02) || (i == 700 && tag == 0x01) || ((1000...1002).contains(i) && tag <= 0x02)
        })
        rig.setUp()
        rig.run(seconds: 1)
        #expect(rig.failure == nil && rig.interruptions.isEmpty && rig.chipOverflows() == 0, "\(rig.interruptions)")
        let idx = rig.indices
        let first = try #require(idx.first), last = try #require(idx.last)
        #expect(last > 1100)
        #expect(idx == Array(first...last).filter { !lost.contains($0) }, "missing: \(Set(first...last).subtracting(idx).sorted())")
        #expect(rig.pairedExactly)
        #expect((rig.driver as? LSM6DSDriver)?.fifoDroppedBatches == 5)
        // The log hears of it at the first loss only (the next notice is due at 10).
        #expect(rig.notices.count == 1 && rig.notices.first?.contains("samples lost in its FIFO so far: 1 ") == true, "\(rig.notices)")
        let p = rig.period()
        let before = try #require(rig.gyro.first { MPUFIFOTests.index($0) == 999 }), after = try #require(rig.gyro.first { MPUFIFOTests.index($0) == 1003 })
        #expect(abs(after.timestamp - before.timestamp - 4 * p) < p / 2, "999 to 1003: \((after.timestamp - before.timestamp) / p) periods")
        #expect(try rig.worstTimestampError() <= p)
    }

    /// Through the `i2c:` source on its own thread, on the real clock: samples in order, several per
    /// read (the tagged chip's words in several reads a poll, carried out in order by the source).
    @Test(arguments: [Chip.lsm6dsl, .lsm6dso, .bmi160, .lsm9ds1]) func streamsThroughTheSource(chip: Chip) async throws {
        let (options, bus) = emulatedBus()
        // The source's default gyroscope range on the LSM6DSL is ±245 °/s (it saturates at 286.7):
        // the index is carried below 200 °/s, X = index mod 200, Y = index / 200.
        let signal: MPUEmulator.Signal = { i in ((0, 0, 1), (Double(i % 200), Double(i / 200), 0)) }
        if chip == .bmi160 {
            bus.attach(BMI160Emulator(clock: { LinuxClock.monotonic() }, signal: signal), at: chip.address)
        } else {
            bus.attach(LSM6DSEmulator(chip: chip.i2cChip, clock: { LinuxClock.monotonic() }, signal: signal), at: chip.address)
        }
        let source = try I2CDiscovery.source(forSpec: "i2c:/dev/i2c-1:\(I2CAddress.hex(chip.address))", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.gyro: 400]), sink: got.sink)
        try await eventually { got.samples.count >= 150 }
        _ = try source.apply(.none, sink: got.sink)
        // The index runs on the real clock from the chip's power-up: Y reaches the LSM6DSL's 286.7 °/s
        // after 57 400 samples, 138 s at 416 Hz, and a starved test task can resume that late (a full
        // run, first test done after 3 minutes, saw clipped indices: 80 "gaps", none reported). The
        // first 10 s are checked; every sample is still counted against the polls below.
        let samples = got.samples
        let checked = samples.prefix(4000)
        #expect(got.failure == nil)
        let idx = checked.map { Int(($0.value.x * 180 / .pi).rounded()) + 200 * Int(($0.value.y * 180 / .pi).rounded()) }
        // On the real clock a stall of the test machine longer than the FIFO holds (0.8 s at 416 Hz
        // on the LSM6DSL, 195 ms at 400 Hz on the BMI160, 67 ms at 476 Hz on the LSM9DS1) loses
        // samples: then, and only then, a gap, each one reported.
        let gaps = zip(idx, idx.dropFirst()).filter { $1 != $0 + 1 }.count
        #expect(zip(idx, idx.dropFirst()).allSatisfy { $1 > $0 }, "\(idx.prefix(40))")
        #expect(gaps <= got.interruptions, "\(gaps) gaps, \(got.interruptions) overflows reported: \(idx.prefix(40))")
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $1.timestamp > $0.timestamp })
        let (register, count) = chip == .bmi160 ? (UInt8(0x22), 2) : chip == .lsm9ds1 ? (UInt8(0x2F), 1)
            : chip.isTagged ? (UInt8(0x3A), 2) : (UInt8(0x3A), 4)
        let polls = bus.log.filter { if case .read(_, register, count) = $0 { true } else { false } }.count
        #expect(polls * 2 < samples.count, "\(polls) FIFO polls for \(samples.count) samples")
    }
}

/// An ST chip whose `FIFO_STATUS2` FIFO_OVER_RUN (bit 6) and `FIFO_STATUS3/4` pattern position read
/// 0 whatever happened (tagged: FIFO_OVR_IA bit 6 and FIFO_OVR_LATCHED bit 3): only the word count
/// (DIFF_FIFO) is left to tell an overflow.
final class SilentFIFOStatus: EmulatedI2CChip, Sendable {
    let chip: any EmulatedI2CChip
    let tagged: Bool
    init(_ chip: any EmulatedI2CChip, tagged: Bool) {
        self.chip = chip
        self.tagged = tagged
    }
    func read(register: UInt8, count: Int) -> [UInt8] {
        var out = chip.read(register: register, count: count)
        for k in out.indices {
            switch Int(register) + k {
            case 0x3B: out[k] &= tagged ? ~0x48 : ~0x40
            case 0x3C where !tagged, 0x3D where !tagged: out[k] = 0
            default: break
            }
        }
        return out
    }
    func write(register: UInt8, value: UInt8) { chip.write(register: register, value: value) }
}
