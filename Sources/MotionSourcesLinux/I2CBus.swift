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
    /// Reads `count` bytes (0…65535) from one register of the chip at `address` that does not
    /// auto-increment: a chip's FIFO port (the MPU family's `FIFO_R_W`), each byte read popping the
    /// next of the FIFO. On an SMBus-only adapter (`i2c-stub`), transfers of at most
    /// ``I2CDevABI/blockMax`` (32) bytes, each from `register` again; ``POSIXI2CBus`` on an adapter
    /// with plain I2C transfers (`I2C_FUNC_I2C`: a Raspberry Pi's) reads up to 8192 bytes at once.
    func readFIFO(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8]
    /// Writes one register of the chip at `address`.
    func write(address: UInt8, register: UInt8, value: UInt8) throws(LinuxIOError)
    /// Closes the node; further transfers throw `EBADF`.
    func close()
}

extension I2CBus {
    /// The FIFO read as SMBus *I2C block reads* of at most 32 bytes, each from `register` (the
    /// default of every bus).
    package func readFIFO(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8] {
        guard count > 0 else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            out += try read(address: address, register: register, count: min(I2CDevABI.blockMax, count - out.count))
        }
        return out
    }
}

/// Opens I2C buses by path; tests pass a twin.
package protocol I2CBusOpener: Sendable {
    /// Opens `path` (`/dev/i2c-1`) for reading and writing.
    func open(_ path: String) throws(LinuxIOError) -> any I2CBus
}

/// The kernel's `i2c-dev` interface (`linux/i2c-dev.h`, `linux/i2c.h`): the ioctl requests and
/// SMBus transaction sizes the user-space drivers use.
package enum I2CDevABI {
    /// `I2C_SLAVE`: the address of the following transfers; `EBUSY` when a kernel driver holds it.
    static let slave: UInt = 0x0703
    /// `I2C_SMBUS`: one SMBus transaction, argument `struct i2c_smbus_ioctl_data *`.
    static let smbus: UInt = 0x0720
    /// `I2C_SMBUS_READ` and `I2C_SMBUS_WRITE` (`read_write`).
    static let read: UInt8 = 1, write: UInt8 = 0
    /// `I2C_SMBUS_BYTE_DATA` and `I2C_SMBUS_I2C_BLOCK_DATA` (`size`).
    static let byteData: UInt32 = 2, i2cBlockData: UInt32 = 8
    /// `I2C_SMBUS_BLOCK_MAX`: the most bytes one block transfer carries.
    package static let blockMax = 32
    /// `I2C_FUNCS` (argument `unsigned long *`) and its `I2C_FUNC_I2C` bit: the adapter carries
    /// plain I2C messages, so `I2C_RDWR` works.
    static let funcs: UInt = 0x0705, funcI2C: UInt = 0x0000_0001
    /// `I2C_RDWR`: combined transfers, argument `struct i2c_rdwr_ioctl_data { struct i2c_msg *msgs;
    /// __u32 nmsgs; }`; `struct i2c_msg { __u16 addr; __u16 flags; __u16 len; __u8 *buf; }` (16 bytes
    /// on 64-bit, `buf` at 8; 12 on 32-bit, `buf` at 8 too); `I2C_M_RD` = 1 in `flags`. i2c-dev
    /// refuses messages over 8192 bytes.
    static let rdwr: UInt = 0x0707, messageRead: UInt16 = 1, rdwrMax = 8192
}

/// `/dev/i2c-N` through `ioctl`: `I2C_SLAVE` to pick the chip, `I2C_SMBUS` for the transfers.
package final class POSIXI2CBus: I2CBus, Sendable {
    package let path: String
    private struct State {
        var fd: Int32
        var selected: UInt8?
        /// Whether the adapter carries plain I2C messages (`I2C_FUNC_I2C`), once asked.
        var plainI2C: Bool?
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

    /// The FIFO read: one `I2C_RDWR` (write the register, read `count` bytes with a repeated start) per
    /// 8192 bytes where the adapter has `I2C_FUNC_I2C`, SMBus block reads of 32 bytes otherwise.
    package func readFIFO(address: UInt8, register: UInt8, count: Int) throws(LinuxIOError) -> [UInt8] {
        guard count > 0 else { return [] }
        let plain = state.withLock { s -> Bool in
            if let p = s.plainI2C { return p }
            var funcs: UInt = 0
            let p = s.fd >= 0 && ioctl(s.fd, I2CDevABI.funcs, &funcs) >= 0 && funcs & I2CDevABI.funcI2C != 0
            if s.fd >= 0 { s.plainI2C = p }
            return p
        }
        guard plain else {
            var out: [UInt8] = []
            out.reserveCapacity(count)
            while out.count < count {
                out += try read(address: address, register: register, count: min(I2CDevABI.blockMax, count - out.count))
            }
            return out
        }
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = min(I2CDevABI.rdwrMax, count - done)
            try combinedRead(address: address, register: register, into: &out, at: done, count: n)
            done += n
        }
        return out
    }

    /// One `I2C_RDWR` of two messages: the register written, then `count` bytes read into `out[at...]`.
    private func combinedRead(address: UInt8, register: UInt8, into out: inout [UInt8], at start: Int, count: Int) throws(LinuxIOError) {
        let error = out.withUnsafeMutableBufferPointer { buffer -> LinuxIOError? in
            state.withLock { s -> LinuxIOError? in
                guard s.fd >= 0 else { return LinuxIOError(code: EBADF, path: path, operation: "transfer") }
                var reg = register
                return withUnsafeMutablePointer(to: &reg) { regPointer -> LinuxIOError? in
                    // addr, flags, len, padding to the pointer at 8: 16 bytes a message on 64-bit, 12 on 32-bit.
                    let stride = MemoryLayout<UnsafeMutableRawPointer>.size == 8 ? 16 : 12
                    let messages = UnsafeMutableRawPointer.allocate(byteCount: 2 * 16, alignment: 8)
                    defer { messages.deallocate() }
                    messages.initializeMemory(as: UInt8.self, repeating: 0, count: 2 * 16)
                    func message(_ i: Int, flags: UInt16, length: Int, buffer: UnsafeMutableRawPointer) {
                        let m = messages + i * stride
                        m.storeBytes(of: UInt16(address), toByteOffset: 0, as: UInt16.self)
                        m.storeBytes(of: flags, toByteOffset: 2, as: UInt16.self)
                        m.storeBytes(of: UInt16(length), toByteOffset: 4, as: UInt16.self)
                        m.storeBytes(of: buffer, toByteOffset: 8, as: UnsafeMutableRawPointer.self)
                    }
                    guard let base = buffer.baseAddress else { return LinuxIOError(code: EINVAL, path: path, operation: "read the FIFO of") }
                    message(0, flags: 0, length: 1, buffer: UnsafeMutableRawPointer(regPointer))
                    message(1, flags: I2CDevABI.messageRead, length: count, buffer: UnsafeMutableRawPointer(base + start))
                    // struct i2c_rdwr_ioctl_data { struct i2c_msg *msgs; __u32 nmsgs; }
                    let args = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
                    defer { args.deallocate() }
                    args.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
                    args.storeBytes(of: messages, toByteOffset: 0, as: UnsafeMutableRawPointer.self)
                    args.storeBytes(of: UInt32(2), toByteOffset: MemoryLayout<UnsafeMutableRawPointer>.size, as: UInt32.self)
                    if ioctl(s.fd, I2CDevABI.rdwr, args) < 0 {
                        return LinuxIOError(code: errno, path: path, operation: "read the FIFO at \(I2CAddress.hex(register)) of \(I2CAddress.hex(address)) on")
                    }
                    return nil
                }
            }
        }
        if let error { throw error }
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
