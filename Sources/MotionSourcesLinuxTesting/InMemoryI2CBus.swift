#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionSourcesLinux

/// A twin of `/dev/i2c-N`: chips as register maps (256 bytes each, auto-incrementing reads), as the
/// kernel's `i2c-stub` keeps them, plus the faults of a real bus: an address a kernel driver holds
/// (`EBUSY`), a chip that stops answering (`EREMOTEIO`), a bus that cannot be opened.
///
/// Every transfer is logged (``log``). Thread-safe.
package final class InMemoryI2CBus: I2CBus, Sendable {
    /// One logged transfer.
    package enum Transfer: Sendable, Hashable {
        /// A read of `count` registers from `register`.
        case read(address: UInt8, register: UInt8, count: Int)
        /// A write of one register.
        case write(address: UInt8, register: UInt8, value: UInt8)
    }

    package let path: String
    private struct State {
        var chips: [UInt8: [UInt8]] = [:]
        var busy: Set<UInt8> = []
        var gone: Set<UInt8> = []
        var closed = false
        var log: [Transfer] = []
        var readsUntilGone: [UInt8: Int] = [:]
    }
    private let state = Locked(State())

    /// A bus at `path` with no chip.
    package init(path: String) { self.path = path }

    /// Puts a chip at `address` with all registers 0, then `registers` set.
    package func addChip(at address: UInt8, registers: [UInt8: UInt8] = [:]) {
        state.withLock { s in
            var map = [UInt8](repeating: 0, count: 256)
            for (r, v) in registers { map[Int(r)] = v }
            s.chips[address] = map
        }
    }

    /// Sets one register of the chip at `address`.
    package func set(_ address: UInt8, _ register: UInt8, _ value: UInt8) {
        state.withLock { $0.chips[address]?[Int(register)] = value }
    }

    /// Sets a signed big-endian 16-bit value at `register` and `register + 1`.
    package func set16(_ address: UInt8, _ register: UInt8, _ value: Int16) {
        let u = UInt16(bitPattern: value)
        set(address, register, UInt8(u >> 8))
        set(address, register &+ 1, UInt8(u & 0xff))
    }

    /// The register's current value.
    package func get(_ address: UInt8, _ register: UInt8) -> UInt8? { state.withLock { $0.chips[address]?[Int(register)] } }

    /// Marks `address` as held by a kernel driver: selecting it fails with `EBUSY`.
    package func markBusy(_ address: UInt8) { state.withLock { _ = $0.busy.insert(address) } }

    /// The chip at `address` stops answering (`EREMOTEIO`), now or after `reads` more reads.
    package func unplug(_ address: UInt8, afterReads reads: Int = 0) {
        state.withLock { s in
            if reads <= 0 { s.gone.insert(address) } else { s.readsUntilGone[address] = reads }
        }
    }

    /// Every transfer so far, in order.
    package var log: [Transfer] { state.withLock { $0.log } }

    /// `true` once closed.
    package var isClosed: Bool { state.withLock { $0.closed } }

    package func read(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8] {
        let r = state.withLock { s -> Result<[UInt8], LinuxIOError> in
            if let e = check(&s, address) { return .failure(e) }
            if let n = s.readsUntilGone[address] {
                if n <= 1 { s.readsUntilGone[address] = nil; s.gone.insert(address) } else { s.readsUntilGone[address] = n - 1 }
            }
            s.log.append(.read(address: address, register: register, count: count))
            let map = s.chips[address]!
            return .success((0..<max(count, 0)).map { map[(Int(register) + $0) & 0xff] })
        }
        return try r.get()
    }

    package func write(address: UInt8, register: UInt8, value: UInt8) throws(LinuxIOError) {
        let e = state.withLock { s -> LinuxIOError? in
            if let e = check(&s, address) { return e }
            s.log.append(.write(address: address, register: register, value: value))
            s.chips[address]![Int(register)] = value
            return nil
        }
        if let e { throw e }
    }

    private func check(_ s: inout State, _ address: UInt8) -> LinuxIOError? {
        if s.closed { return LinuxIOError(code: EBADF, path: path, operation: "transfer") }
        if s.busy.contains(address) { return LinuxIOError(code: EBUSY, path: path, operation: "select address \(I2CAddress.hex(address)) of") }
        if s.gone.contains(address) || s.chips[address] == nil {
            return LinuxIOError(code: EREMOTEIO, path: path, operation: "read register of \(I2CAddress.hex(address)) on")
        }
        return nil
    }

    package func close() { state.withLock { $0.closed = true } }

    /// How many handles are open (opened by ``InMemoryI2CBusOpener`` and not closed).
    package var openHandles: Int { handles.withLock { $0 } }
    fileprivate let handles = Locked(0)
}

/// One open of an ``InMemoryI2CBus``: its own closed state, the chips of the bus.
final class InMemoryI2CHandle: I2CBus, Sendable {
    let bus: InMemoryI2CBus
    private let closed = Locked(false)
    init(_ bus: InMemoryI2CBus) {
        self.bus = bus
        bus.handles.withLock { $0 += 1 }
    }
    var path: String { bus.path }
    func read(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8] {
        if closed.withLock({ $0 }) { throw LinuxIOError(code: EBADF, path: path, operation: "transfer") }
        return try bus.read(address: address, register: register, count: count)
    }
    func write(address: UInt8, register: UInt8, value: UInt8) throws(LinuxIOError) {
        if closed.withLock({ $0 }) { throw LinuxIOError(code: EBADF, path: path, operation: "transfer") }
        try bus.write(address: address, register: register, value: value)
    }
    func close() {
        let was = closed.withLock { c in defer { c = true }; return c }
        if !was { bus.handles.withLock { $0 -= 1 } }
    }
}

/// Opens ``InMemoryI2CBus`` twins by path; a path may instead fail with an `errno` (`EACCES`).
package final class InMemoryI2CBusOpener: I2CBusOpener, Sendable {
    private let state = Locked<(buses: [String: InMemoryI2CBus], errors: [String: Int32], opens: Int)>(([:], [:], 0))

    /// An opener with no bus.
    package init() {}

    /// Adds (or returns) the bus at `path`.
    @discardableResult
    package func bus(_ path: String) -> InMemoryI2CBus {
        state.withLock { s in
            if let b = s.buses[path] { return b }
            let b = InMemoryI2CBus(path: path)
            s.buses[path] = b
            return b
        }
    }

    /// Makes opening `path` fail with `code`.
    package func setOpenError(_ path: String, _ code: Int32) { state.withLock { $0.errors[path] = code } }

    /// How many opens succeeded.
    package var opens: Int { state.withLock { $0.opens } }

    package func open(_ path: String) throws(LinuxIOError) -> any I2CBus {
        let r = state.withLock { s -> Result<any I2CBus, LinuxIOError> in
            if let code = s.errors[path] { return .failure(LinuxIOError(code: code, path: path, operation: "open")) }
            guard let b = s.buses[path] else { return .failure(LinuxIOError(code: ENOENT, path: path, operation: "open")) }
            s.opens += 1
            return .success(InMemoryI2CHandle(b))
        }
        return try r.get()
    }
}
