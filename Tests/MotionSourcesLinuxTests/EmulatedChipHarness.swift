import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting

/// Runs a chip driver's actions against a register-level emulator, synchronously, on a clock that
/// the driver's pauses advance, so tests can also run *mutants*: the same driver with one kind of
/// action changed or left out, as a buggy driver would (a forgotten bank switch, no pause after a
/// mode change), and check that the emulator catches them.
struct EmulatedChipHarness {
    /// The clock the emulator sees: advanced by the driver's pauses and 0.1 ms per transfer.
    final class Clock: Sendable {
        private let t = Locked(100.0)
        var now: Double { t.withLock { $0 } }
        func advance(_ s: Double) { t.withLock { $0 += s } }
    }

    /// What a run ended with: the samples of one data read and the attitude, or the failure.
    enum Outcome {
        case streamed(samples: [RawSample], attitude: OwnAttitude?, transfers: Int)
        case failed(SourceError)
        case stuck

        var samples: [RawSample] { if case .streamed(let s, _, _) = self { s } else { [] } }
        var attitude: OwnAttitude? { if case .streamed(_, let a, _) = self { a } else { nil } }
        var failure: SourceError? { if case .failed(let e) = self { e } else { nil } }
        func value(_ kind: SensorKind) -> Vector3? { samples.first { $0.sensor == kind }?.value }
    }

    /// Sets the driver up on `chip` and reads one sample; `mutate` may change or drop each set-up
    /// action (`nil` drops it).
    static func run(_ driver: some I2CChipDriver, on chip: any EmulatedI2CChip, clock: Clock = Clock(),
                    mutate: (I2CDriverAction) -> I2CDriverAction? = { $0 }) -> Outcome {
        var d = driver
        var queue = d.start()
        var transfers = 0
        while !queue.isEmpty {
            guard let action = mutate(queue.removeFirst()) else { continue }
            clock.advance(0.0001)
            switch action {
            case .read(let register, let count):
                transfers += 1
                queue += d.received(chip.read(register: register, count: count), at: clock.now)
            case .readFIFO(let register, let count):
                transfers += 1
                queue += d.received(chip.read(register: register, count: count), at: clock.now)
            case .write(let register, let value):
                transfers += 1
                chip.write(register: register, value: value)
            case .pause(let seconds): clock.advance(seconds)
            case .fail(let e): return .failed(e)
            case .streaming:
                let (register, count) = d.dataRead
                let actions = d.received(chip.read(register: register, count: count), at: clock.now)
                var samples: [RawSample] = [], attitude: OwnAttitude?
                for a in actions {
                    switch a {
                    case .deliver(let s): samples += s
                    case .attitude(let o): attitude = o
                    case .fail(let e): return .failed(e)
                    default: break
                    }
                }
                return .streamed(samples: samples, attitude: attitude, transfers: transfers)
            case .deliver, .attitude, .interrupted, .notice: break
            }
        }
        return .stuck
    }

    /// Within `tolerance` on every axis.
    static func near(_ a: Vector3?, _ b: Vector3, _ tolerance: Double) -> Bool {
        guard let a else { return false }
        return abs(a.x - b.x) <= tolerance && abs(a.y - b.y) <= tolerance && abs(a.z - b.z) <= tolerance
    }
}

/// Discovery options whose I2C buses are the emulators' (one bus, `/dev/i2c-1`).
func emulatedBus() -> (LinuxDiscoveryOptions, EmulatedI2CBus) {
    let fs = InMemoryLinuxFileSystem()
    fs.setFile("/dev/i2c-1", "")
    fs.setFile("/sys/bus/i2c/devices/i2c-1/name", "bcm2835 (i2c@7e804000)\n")
    let opener = EmulatedI2CBusOpener()
    let bus = opener.bus("/dev/i2c-1")
    var options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
    options.i2cOpener = opener
    return (options, bus)
}
