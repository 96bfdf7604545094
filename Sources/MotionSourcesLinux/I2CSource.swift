#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionFusion
import Logging

/// An IMU on an I2C bus, driven from user space through `/dev/i2c-N`: the chip's driver
/// (``I2CChipDriver``: ``MPUDriver`` for the MPU-6050/6500/9250, ``LSM6DSDriver`` for the LSM6DSx
/// family and the LSM9DS1's accelerometer and gyroscope, ``BMI160Driver``, ``ICM20948Driver``,
/// ``BNO055Driver``, ``LSM9DS1MagnetometerDriver`` for an LSM9DS1 magnetometer alone) on an
/// ``I2CBus``, and the magnetometer read with the chip at its own address when there is one
/// (``magnetometer``: an MPU-9250's AK8963, ``AK8963Driver``; an LSM9DS1's); accelerometer in g,
/// gyroscope in rad/s, magnetometer in µT, Core Motion's axes and signs (the magnetometer in its host
/// chip's axes). With `?motion=own` a BNO055 runs its own fusion, and device motion reports its
/// attitude (``OwnAttitudeProviding``).
///
/// Each ``apply(_:sink:)`` opens the bus, checks each chip's identity register, writes the
/// configuration (the ranges the kernel's driver sets or assumes: ±2 g, and ±2000 °/s on the MPU
/// family, ±250 °/s (±245) on the ST chips; the slowest rate the chip offers at or above the demand)
/// and reads it back, then polls each chip's data registers at its own rate on the source's thread
/// (the host chip at its rate; the magnetometer at the rate demanded of it, at most its chip's);
/// each read gives one sample of each of that chip's sensors, stamped with the read's time on the
/// source's clock (`CLOCK_MONOTONIC` unless a test injects a ``ManualClock``).
///
/// ## Threading
/// As ``IIOSource``: `apply` from any thread; events on the source's thread, serialised; none after
/// `apply(.none)` returns.
///
/// ## Faults
/// A chip that stops answering (`EREMOTEIO`, `ENXIO`: unplugged, loose wire) or an adapter that goes
/// away ends the stream with `.failed(SourceError(.deviceRemoved, …))`; set-up problems (wrong chip,
/// an address a kernel driver holds, no permission) are thrown by `apply`.
package final class I2CSource: SensorSource, Sendable {
    /// `i2c:/dev/i2c-1:0x68`, the chip's name, its sensors, details.
    package let info: SourceInfo
    /// The bus node.
    package let busPath: String
    /// The chip's 7-bit address.
    package let address: UInt8
    /// The chip identified when the source was made.
    package let chip: I2CChip
    /// Chip axes → device axes.
    package let mountMatrix: MountMatrix
    /// The magnetometer read with the chip (the AK8963 behind an MPU-9250's bypass, an LSM9DS1's
    /// magnetometer) and its address, if any.
    package let magnetometer: (kind: I2CMagnetometer, address: UInt8)?
    let opener: any I2CBusOpener
    /// The clock the polls are paced on and the samples stamped with.
    let clock: any SourceClock
    static let logger = Logger(label: "OpenCoreMotion.I2C")

    private let running = Locked<(worker: SourceWorker, bus: any I2CBus)?>(nil)
    /// The chip's own attitudes, newest last (a BNO055 under `?motion=own`).
    private let attitudes = Locked<[OwnAttitude]>([])
    /// Whether device motion takes the chip's own attitude (`?motion=own`, a BNO055).
    package let reportsOwnAttitude: Bool

    /// Creates a source for `chip` (one ``I2CChip/isDriven``) at `address` on `busPath`.
    ///
    /// - Parameters:
    ///   - mountMatrix: chip axes → device axes, as the kernel's `mount_matrix` (default identity).
    ///   - mountMatrixSource: where the matrix came from, for `coremotion sensors`.
    ///   - magnetometer: the magnetometer read with the chip, at its own address (its samples in the
    ///     chip's frame, ``I2CMagnetometer/toHostChip``).
    ///   - ownAttitude: run the chip's own fusion and report its attitude as device motion
    ///     (`?motion=own`; only a chip that has one, the BNO055, takes it).
    ///   - clock: the clock the polls are paced on and the samples stamped with, seconds since boot
    ///     (default `CLOCK_MONOTONIC`; tests pass a ``ManualClock``). A chip's set-up pauses (after a
    ///     reset or a mode change) are real time whatever the clock: the chip needs them.
    package init(busPath: String, address: UInt8, chip: I2CChip, opener: any I2CBusOpener = POSIXI2CBusOpener(),
                 mountMatrix: MountMatrix = .identity, mountMatrixSource: String = "none (identity)",
                 magnetometer: (kind: I2CMagnetometer, address: UInt8)? = nil, ownAttitude: Bool = false,
                 clock: any SourceClock = MonotonicSourceClock.shared) {
        self.clock = clock
        reportsOwnAttitude = ownAttitude && chip == .bno055
        self.busPath = busPath
        self.address = address
        self.chip = chip
        self.opener = opener
        self.mountMatrix = mountMatrix
        self.magnetometer = magnetometer
        let d = chip.capabilities
        var sensors = d.sensors
        var details: [(String, String)] = [
            ("bus", busPath),
            ("address", I2CAddress.hex(address)),
            ("chip", "\(chip.displayName) (\(chip.identityText))"),
            ("driver", "user space through i2c-dev, polled" + (ownAttitude && chip == .bno055 ? "; device motion from the chip's own fusion (NDOF)" : "")),
            ("ranges", d.ranges),
            ("rates", d.rates),
            ("mount matrix", "\(mountMatrix) (\(mountMatrixSource))" + (chip.family == .stMagnetometer ? "" : "; acceleration negated: the chip reads +1 g up")),
        ]
        if let magnetometer {
            sensors[.magnetometer] = magnetometer.kind.capability
            details.append(("magnetometer", magnetometer.kind.detail(address: magnetometer.address)))
        }
        // The identifier names the chip (calibration is stored under it), not the way device motion is made.
        info = SourceInfo(identifier: "i2c:\(busPath):\(I2CAddress.hex(address))",
                          name: "\(chip.vendor) \(chip.displayName) at \(I2CAddress.hex(address)) on \(busPath)", sensors: sensors, details: details)
    }

    /// One chip the source reads: its address, driver and the sensors it gives.
    private struct Part: Sendable {
        var address: UInt8
        var driver: any I2CChipDriver
        var sensors: Set<SensorKind>
        /// Its sample rate, Hz: the chip's rate, or a magnetometer's demanded rate below it (each
        /// read then takes the newest sample).
        var rate: Double
    }

    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        if let old = running.withLock({ r in defer { r = nil }; return r }) {
            old.worker.requestStop()
            old.bus.close()
            old.worker.join()
        }
        if demand.isEmpty { return [:] }
        let wanted = demand.rates.filter { info.sensors[$0.key] != nil }
        guard !wanted.isEmpty else {
            throw SourceError(.unavailable, "\(info.name) has no \(demand.rates.keys.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        let bus: any I2CBus
        do { bus = try opener.open(busPath) } catch {
            throw error.sourceError("cannot open \(busPath)", gone: "no I2C bus \(busPath)", permissionFix: I2CDiscovery.permissionFix)
        }
        // The chip, then the magnetometer read with it (after the chip's set-up, which opens an
        // MPU-9250's bypass), each at the fastest rate demanded of its sensors.
        var parts: [Part] = []
        let own = Set(wanted.keys).subtracting(magnetometer == nil ? [] : [.magnetometer])
        // An MPU-9250's magnetometer alone still needs the MPU's set-up (it opens the bypass): the MPU
        // is then read at its slowest rate and its samples dropped.
        if !own.isEmpty || chip.family == .mpu {
            let fastest = own.isEmpty ? 0.1 : own.map { info.sensors[$0]?.clamp(rate: wanted[$0] ?? 0) ?? 0 }.max() ?? 0.1
            guard let made = chip.makeDriver(address: address, busPath: busPath, rate: fastest, mountMatrix: mountMatrix,
                                            fusion: reportsOwnAttitude) else {
                bus.close()
                throw SourceError(.unavailable, "the \(chip.displayName) is not driven from user space: \(chip.explanation)", path: busPath)
            }
            parts.append(Part(address: address, driver: made, sensors: own, rate: made.actualRate))
        }
        if let magnetometer, let rate = wanted[.magnetometer] {
            let clamped = magnetometer.kind.capability.clamp(rate: rate)
            let m = magnetometer.kind.makeDriver(address: magnetometer.address, busPath: busPath, rate: clamped, mountMatrix: mountMatrix)
            let polled = min(clamped, m.actualRate)
            parts.append(Part(address: magnetometer.address, driver: m, sensors: [.magnetometer], rate: polled))
        }
        for i in parts.indices {
            try Self.setUp(&parts[i].driver, address: parts[i].address, bus: bus, name: info.name, busPath: busPath, clock: clock)
        }
        let initial = parts
        let attitudes = self.attitudes
        attitudes.withLock { $0.removeAll() }
        let clock = self.clock
        let worker = SourceWorker(sink: sink, clock: clock)
        let started = worker.spawn(name: "i2c-poll", realtime: true) { worker in
            var parts = initial
            let start = clock.now()
            var next = parts.map { _ in start }
            // The actions still to carry out for the read under way, the next one last: one buffer
            // for the whole run (no array built per read).
            var pending: [I2CDriverAction] = []
            pending.reserveCapacity(16)
            while !worker.isStopping {
                // The part due first; each keeps its own period.
                guard let i = next.indices.min(by: { next[$0] < next[$1] }) else { return }
                if !worker.sleep(until: next[i]) { return }
                let (register, count) = parts[i].driver.dataRead
                pending.removeAll(keepingCapacity: true)
                pending.append(.read(register: register, count: count))
                // A read's answer may ask for further transfers (an LSM9DS1 magnetometer's data after
                // its status, an MPU's FIFO after its count): carried out at once, before the next poll.
                while let action = pending.popLast(), !worker.isStopping {
                    if !Self.perform(action, part: &parts[i], bus: bus, worker: worker, attitudes: attitudes, clock: clock, pending: &pending) { return }
                }
                // The driver's poll rate now (a FIFO given up for direct reads polls at the sample rate).
                next[i] += 1 / min(parts[i].rate, parts[i].driver.pollRate)
                let now = clock.now()
                if next[i] < now { next[i] = now }
            }
        }
        guard started else {
            bus.close()
            throw SourceError(.io, "cannot start the I2C thread", path: busPath)
        }
        running.withLock { $0 = (worker, bus) }
        var rates: [SensorKind: Double] = [:]
        for kind in wanted.keys { rates[kind] = initial.first { $0.sensors.contains(kind) }?.rate }
        return rates
    }

    /// Carries out one action of a part's driver on the poll thread; the driver's answer goes onto
    /// `pending` (next action last). `false` when the stream ended.
    private static func perform(_ action: I2CDriverAction, part: inout Part, bus: any I2CBus, worker: SourceWorker,
                                attitudes: Locked<[OwnAttitude]>, clock: any SourceClock, pending: inout [I2CDriverAction]) -> Bool {
        var answer: [I2CDriverAction] = []
        do throws(LinuxIOError) {
            switch action {
            case .read(let r, let n):
                let bytes = try bus.read(address: part.address, register: r, count: n)
                answer = part.driver.received(bytes, at: clock.now())
            case .readFIFO(let r, let n):
                // Stamped by the driver from its count's read time, not this one.
                let bytes = try bus.readFIFO(address: part.address, register: r, count: n)
                answer = part.driver.received(bytes, at: clock.now())
            case .write(let r, let v):
                try bus.write(address: part.address, register: r, value: v)
            case .attitude(let own):
                // Kept before the read's samples go out (the driver returns it first), so
                // device motion finds the attitude of the samples' own moment.
                attitudes.withLock { a in
                    if a.count >= Self.attitudeCapacity { a.removeFirst(a.count - Self.attitudeCapacity + 1) }
                    a.append(own)
                }
            case .deliver(let samples):
                let keep = part.sensors
                worker.deliver(samples.lazy.filter { keep.contains($0.sensor) })
            case .interrupted(let e):
                logger.warning("\(e.description)")
                worker.send(.interrupted(e))
            case .notice(let message):
                logger.notice("\(message)")
            case .fail(let e):
                worker.end(.failed(e))
                return false
            case .streaming, .pause:
                break
            }
        } catch {
            if worker.isStopping { return false }
            answer = part.driver.transferFailed(error)
        }
        pending.append(contentsOf: answer.reversed())
        return true
    }

    /// Runs a driver's set-up (identify, configure, verify) on this thread: a few transfers. Closes
    /// the bus and throws when it fails.
    private static func setUp(_ driver: inout any I2CChipDriver, address: UInt8, bus: any I2CBus, name: String, busPath: String,
                              clock: any SourceClock) throws(SourceError) {
        var queue = driver.start()
        setUp: while !queue.isEmpty {
            switch queue.removeFirst() {
            case .read(let register, let count):
                do throws(LinuxIOError) {
                    queue += driver.received(try bus.read(address: address, register: register, count: count), at: clock.now())
                } catch { queue = driver.transferFailed(error) }
            case .readFIFO(let register, let count):
                do throws(LinuxIOError) {
                    queue += driver.received(try bus.readFIFO(address: address, register: register, count: count), at: clock.now())
                } catch { queue = driver.transferFailed(error) }
            case .write(let register, let value):
                do throws(LinuxIOError) { try bus.write(address: address, register: register, value: value) } catch {
                    queue = driver.transferFailed(error)
                }
            case .fail(let e):
                bus.close()
                throw e
            case .streaming:
                break setUp
            case .pause(let seconds):
                // safe: clamped to 0…1 s before the conversion
                usleep(UInt32((seconds.isFinite ? min(max(seconds, 0), 1) : 0) * 1_000_000))
            case .deliver, .attitude, .interrupted, .notice:
                continue
            }
        }
        guard driver.isStreaming else {
            bus.close()
            throw SourceError(.io, "\(name) did not finish its set-up", path: busPath)
        }
    }
}

extension I2CSource: OwnAttitudeProviding {
    /// Attitudes kept: 2 s at the fastest poll.
    static let attitudeCapacity = 200
    /// Older attitudes are not reported, s.
    static let attitudeSilence = 0.5

    /// The chip's attitude at or before `timestamp` (seconds on `CLOCK_MONOTONIC`, 0.5 ms of slack),
    /// from the last ``attitudeCapacity`` reads; `nil` before the first, when it is older than
    /// ``attitudeSilence``, and for a source that does not report its own attitude.
    package func ownAttitude(at timestamp: Double) -> OwnAttitude? {
        guard reportsOwnAttitude else { return nil }
        return attitudes.withLock { a in
            guard let hit = a.last(where: { $0.timestamp <= timestamp + 0.0005 }), timestamp - hit.timestamp <= Self.attitudeSilence else { return nil }
            return hit
        }
    }
}
