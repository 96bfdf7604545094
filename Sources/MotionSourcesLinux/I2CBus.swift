#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// An I2C bus (`/dev/i2c-N`) as the user-space chip drivers use it: register reads and writes of one
/// chip at a time, by its 7-bit address.
///
/// Every transfer is an SMBus transaction, which both a Raspberry Pi's controller (`i2c-bcm2835`,
/// which emulates SMBus on plain I2C) and SMBus-only adapters such as `i2c-stub` carry: *read byte
/// data*, *write byte data* and *I2C block read* (at most 32 bytes each; longer reads are split,
/// the chip's register address auto-incrementing).
///
/// ``POSIXI2CBus`` is the real one; `InMemoryI2CBus` (MotionSourcesLinuxTesting) is a register-map
/// twin for tests.
///
/// ## Errors
/// Each method throws ``LinuxIOError`` with the kernel's `errno`: `EBUSY` when a kernel driver is
/// bound to the address, `ENXIO` or `EREMOTEIO` when nothing acknowledges it, `ENODEV` when the
/// adapter went away.
///
/// ## Threading
/// Methods may be called from any thread; each is one transaction, serialised with the others.
package protocol I2CBus: AnyObject, Sendable {
    /// The device node, such as `/dev/i2c-1`.
    var path: String { get }
    /// Reads `count` (1…255) consecutive registers starting at `register` of the chip at `address`.
    func read(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8]
    /// Writes one register of the chip at `address`.
    func write(address: UInt8, register: UInt8, value: UInt8) throws(LinuxIOError)
    /// Closes the node; further transfers throw `EBADF`.
    func close()
}

/// Opens I2C buses by path; tests pass a twin.
package protocol I2CBusOpener: Sendable {
    /// Opens `path` (`/dev/i2c-1`) for reading and writing.
    func open(_ path: String) throws(LinuxIOError) -> any I2CBus
}

/// The kernel's `i2c-dev` interface (`linux/i2c-dev.h`, `linux/i2c.h`): the ioctl requests and
/// SMBus transaction sizes the user-space drivers use.
enum I2CDevABI {
    /// `I2C_SLAVE`: the address of the following transfers; `EBUSY` when a kernel driver holds it.
    static let slave: UInt = 0x0703
    /// `I2C_SMBUS`: one SMBus transaction, argument `struct i2c_smbus_ioctl_data *`.
    static let smbus: UInt = 0x0720
    /// `I2C_SMBUS_READ` and `I2C_SMBUS_WRITE` (`read_write`).
    static let read: UInt8 = 1, write: UInt8 = 0
    /// `I2C_SMBUS_BYTE_DATA` and `I2C_SMBUS_I2C_BLOCK_DATA` (`size`).
    static let byteData: UInt32 = 2, i2cBlockData: UInt32 = 8
    /// `I2C_SMBUS_BLOCK_MAX`: the most bytes one block transfer carries.
    static let blockMax = 32
}

/// `/dev/i2c-N` through `ioctl`: `I2C_SLAVE` to pick the chip, `I2C_SMBUS` for the transfers.
package final class POSIXI2CBus: I2CBus, Sendable {
    package let path: String
    private struct State {
        var fd: Int32
        var selected: UInt8?
    }
    private let state: Locked<State>

    /// Opens `path` read-write.
    package init(path: String) throws(LinuxIOError) {
        let fd = openNode(path, O_RDWR | O_CLOEXEC)
        if fd < 0 { throw LinuxIOError(code: errno, path: path, operation: "open") }
        self.path = path
        self.state = Locked(State(fd: fd, selected: nil))
    }

    deinit { close() }

    package func close() {
        state.withLock { s in
            if s.fd >= 0 { closeNode(s.fd) }
            s.fd = -1
        }
    }

    package func read(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8] {
        guard count > 0 else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            let n = min(I2CDevABI.blockMax, count - out.count)
            let reg = register &+ UInt8(truncatingIfNeeded: out.count)
            out += try transfer(address: address, readWrite: I2CDevABI.read, command: reg,
                                size: n == 1 ? I2CDevABI.byteData : I2CDevABI.i2cBlockData, payload: [], count: n)
        }
        return out
    }

    package func write(address: UInt8, register: UInt8, value: UInt8) throws(LinuxIOError) {
        _ = try transfer(address: address, readWrite: I2CDevABI.write, command: register, size: I2CDevABI.byteData, payload: [value], count: 0)
    }

    /// One `I2C_SMBUS` ioctl (after `I2C_SLAVE` when the address changed), under the lock.
    private func transfer(address: UInt8, readWrite: UInt8, command: UInt8, size: UInt32, payload: [UInt8], count: Int) throws(LinuxIOError) -> [UInt8] {
        let result = state.withLock { s -> Result<[UInt8], LinuxIOError> in
            guard s.fd >= 0 else { return .failure(LinuxIOError(code: EBADF, path: path, operation: "transfer")) }
            if s.selected != address {
                if ioctl(s.fd, I2CDevABI.slave, CInt(address)) < 0 {
                    return .failure(LinuxIOError(code: errno, path: path, operation: "select address \(I2CAddress.hex(address)) of"))
                }
                s.selected = address
            }
            // union i2c_smbus_data: byte, word or block[34] (block[0] is the length).
            let data = UnsafeMutableRawPointer.allocate(byteCount: 34, alignment: 8)
            defer { data.deallocate() }
            data.initializeMemory(as: UInt8.self, repeating: 0, count: 34)
            if size == I2CDevABI.i2cBlockData {
                data.storeBytes(of: UInt8(count), as: UInt8.self)
            } else if let b = payload.first {
                data.storeBytes(of: b, as: UInt8.self)
            }
            // struct i2c_smbus_ioctl_data { __u8 read_write; __u8 command; __u32 size; union i2c_smbus_data *data; }
            let args = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
            defer { args.deallocate() }
            args.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
            args.storeBytes(of: readWrite, toByteOffset: 0, as: UInt8.self)
            args.storeBytes(of: command, toByteOffset: 1, as: UInt8.self)
            args.storeBytes(of: size, toByteOffset: 4, as: UInt32.self)
            args.storeBytes(of: data, toByteOffset: MemoryLayout<UInt32>.size * 2, as: UnsafeMutableRawPointer.self)
            if ioctl(s.fd, I2CDevABI.smbus, args) < 0 {
                let op = readWrite == I2CDevABI.read ? "read register \(I2CAddress.hex(command)) of \(I2CAddress.hex(address)) on"
                    : "write register \(I2CAddress.hex(command)) of \(I2CAddress.hex(address)) on"
                return .failure(LinuxIOError(code: errno, path: path, operation: op))
            }
            guard readWrite == I2CDevABI.read else { return .success([]) }
            if size == I2CDevABI.i2cBlockData {
                let got = Int(data.load(as: UInt8.self))
                guard got == count else {
                    return .failure(LinuxIOError(code: EIO, path: path, operation: "short block read (\(got) of \(count) bytes) at \(I2CAddress.hex(command)) of \(I2CAddress.hex(address)) on"))
                }
                return .success((0..<count).map { data.load(fromByteOffset: 1 + $0, as: UInt8.self) })
            }
            return .success([data.load(as: UInt8.self)])
        }
        return try result.get()
    }
}

/// Opens ``POSIXI2CBus`` nodes.
package struct POSIXI2CBusOpener: I2CBusOpener {
    /// Creates the opener.
    package init() {}
    package func open(_ path: String) throws(LinuxIOError) -> any I2CBus { try POSIXI2CBus(path: path) }
}

/// Formatting of 7-bit I2C addresses and register values.
package enum I2CAddress {
    /// `0x68`: two lowercase hex digits.
    package static func hex(_ v: UInt8) -> String {
        let digits = String(v, radix: 16)
        return "0x" + (digits.count < 2 ? "0" + digits : digits)
    }

    /// Parses a 7-bit address written in hex, `0x68` or `68`; `nil` outside 0x03…0x77 (the range
    /// i2c-dev lets user space address) or when it is not hex.
    package static func parse(_ text: String) -> UInt8? {
        var t = Substring(text.lowercased())
        if t.hasPrefix("0x") { t = t.dropFirst(2) }
        guard !t.isEmpty, t.count <= 2, let v = UInt8(t, radix: 16), (0x03...0x77).contains(v) else { return nil }
        return v
    }
}

private func openNode(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
private func closeNode(_ fd: Int32) { _ = close(fd) }
