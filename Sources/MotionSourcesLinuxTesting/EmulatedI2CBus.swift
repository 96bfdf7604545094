#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionSourcesLinux

/// A chip that answers register transfers with behaviour, not plain memory: a register-level
/// emulator written from a datasheet (``ICM20948Emulator``, ``BNO055Emulator``), where what a read
/// returns depends on what was written before (a register bank, an operating mode, a full-scale
/// range).
///
/// ## Threading
/// ``EmulatedI2CBus`` calls these methods one at a time, under its lock.
package protocol EmulatedI2CChip: AnyObject, Sendable {
    /// Reads `count` consecutive registers from `register` (the chip's auto-increment).
    func read(register: UInt8, count: Int) -> [UInt8]
    /// Writes one register.
    func write(register: UInt8, value: UInt8)
}

/// A twin of `/dev/i2c-N` whose chips are register-level emulators (``EmulatedI2CChip``); an address
/// with no chip does not acknowledge (`EREMOTEIO`), a closed handle fails with `EBADF`.
///
/// Every transfer is logged (``log``). Thread-safe: transfers are serialised.
package final class EmulatedI2CBus: I2CBus, Sendable {
    package let path: String
    private struct State {
        var chips: [UInt8: any EmulatedI2CChip] = [:]
        var log: [InMemoryI2CBus.Transfer] = []
        var closed = false
        /// Addresses whose transfers fail: the `errno`, and the transfers still let through first.
        var failing: [UInt8: (code: Int32, after: Int)] = [:]
    }
    private let state = Locked(State())

    /// A bus at `path` with no chip.
    package init(path: String) { self.path = path }

    /// Puts `chip` at `address`.
    package func attach(_ chip: any EmulatedI2CChip, at address: UInt8) { state.withLock { $0.chips[address] = chip } }

    /// Makes the transfers to `address` fail with `code` (`EIO`, `ENXIO`: what `/dev/i2c-N` gives
    /// for a chip disconnected mid-stream) after `after` more transfers (reads and writes) succeed.
    package func fail(_ address: UInt8, with code: Int32, after: Int = 0) {
        state.withLock { $0.failing[address] = (code, max(after, 0)) }
    }

    /// The error of a transfer to `address` now, if it is to fail (counts the transfers let through).
    private func injected(_ s: inout State, _ address: UInt8, _ operation: String) -> LinuxIOError? {
        guard let f = s.failing[address] else { return nil }
        if f.after > 0 {
            s.failing[address] = (f.code, f.after - 1)
            return nil
        }
        return LinuxIOError(code: f.code, path: path, operation: operation)
    }

    /// Every transfer so far, in order.
    package var log: [InMemoryI2CBus.Transfer] { state.withLock { $0.log } }

    package func read(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8] {
        let r = state.withLock { s -> Result<[UInt8], LinuxIOError> in
            guard !s.closed else { return .failure(LinuxIOError(code: EBADF, path: path, operation: "transfer")) }
            guard let chip = s.chips[address] else {
                return .failure(LinuxIOError(code: EREMOTEIO, path: path, operation: "read register \(I2CAddress.hex(register)) of \(I2CAddress.hex(address)) on"))
            }
            if let e = injected(&s, address, "read register \(I2CAddress.hex(register)) of \(I2CAddress.hex(address)) on") { return .failure(e) }
            s.log.append(.read(address: address, register: register, count: count))
            return .success(chip.read(register: register, count: max(count, 0)))
        }
        return try r.get()
    }

    package func write(address: UInt8, register: UInt8, value: UInt8) throws(LinuxIOError) {
        let e = state.withLock { s -> LinuxIOError? in
            guard !s.closed else { return LinuxIOError(code: EBADF, path: path, operation: "transfer") }
            guard let chip = s.chips[address] else {
                return LinuxIOError(code: EREMOTEIO, path: path, operation: "write register \(I2CAddress.hex(register)) of \(I2CAddress.hex(address)) on")
            }
            if let e = injected(&s, address, "write register \(I2CAddress.hex(register)) of \(I2CAddress.hex(address)) on") { return e }
            s.log.append(.write(address: address, register: register, value: value))
            chip.write(register: register, value: value)
            return nil
        }
        if let e { throw e }
    }

    /// Closing a handle of the opener closes only that handle; this closes the bus for good.
    package func close() { state.withLock { $0.closed = true } }
}

/// Opens ``EmulatedI2CBus`` twins by path: each open is its own handle on the bus.
package final class EmulatedI2CBusOpener: I2CBusOpener, Sendable {
    private let buses = Locked<[String: EmulatedI2CBus]>([:])

    /// An opener with no bus.
    package init() {}

    /// Adds (or returns) the bus at `path`.
    @discardableResult
    package func bus(_ path: String) -> EmulatedI2CBus {
        buses.withLock { b in
            if let x = b[path] { return x }
            let x = EmulatedI2CBus(path: path)
            b[path] = x
            return x
        }
    }

    package func open(_ path: String) throws(LinuxIOError) -> any I2CBus {
        guard let b = buses.withLock({ $0[path] }) else { throw LinuxIOError(code: ENOENT, path: path, operation: "open") }
        return EmulatedI2CHandle(b)
    }
}

/// One open of an ``EmulatedI2CBus``.
final class EmulatedI2CHandle: I2CBus, Sendable {
    let bus: EmulatedI2CBus
    private let closed = Locked(false)
    init(_ bus: EmulatedI2CBus) { self.bus = bus }
    var path: String { bus.path }
    func read(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8] {
        if closed.withLock({ $0 }) { throw LinuxIOError(code: EBADF, path: path, operation: "transfer") }
        return try bus.read(address: address, register: register, count: count)
    }
    func write(address: UInt8, register: UInt8, value: UInt8) throws(LinuxIOError) {
        if closed.withLock({ $0 }) { throw LinuxIOError(code: EBADF, path: path, operation: "transfer") }
        try bus.write(address: address, register: register, value: value)
    }
    func close() { closed.withLock { $0 = true } }
}

/// A signed 16-bit register value for a physical quantity: `value × countsPerUnit`, rounded,
/// saturated at the 16-bit limits (as a chip's output saturates at its full scale).
package func emulatedCounts(_ value: Double, _ countsPerUnit: Double) -> Int16 {
    let c = (value * countsPerUnit).rounded()
    guard c.isFinite else { return 0 }
    return Int16(max(-32768, min(32767, c)))  // safe: clamped to Int16's range, finite
}
