#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// An open evdev node: its identity (ioctls), its axis values, and its event stream.
///
/// Threading: ``readEvents(timeout:)`` from one thread; ``close()`` from any thread wakes it.
package protocol EvdevDevice: AnyObject, Sendable {
    /// Name, uniq, ids, properties and absolute axes (`EVIOCGNAME`, `EVIOCGUNIQ`, `EVIOCGID`, `EVIOCGPROP`, `EVIOCGABS`).
    func identity() throws(LinuxIOError) -> EvdevIdentity
    /// Every absolute axis's current value (`EVIOCGABS`), for resynchronising after `SYN_DROPPED`.
    func axisValues() throws(LinuxIOError) -> [UInt16: Int32]
    /// Waits up to `timeout` seconds and returns the events read (none on timeout). `ENODEV` when unplugged.
    func readEvents(timeout: Double) throws(LinuxIOError) -> [InputEvent]
    /// Closes the node.
    func close()
}

/// Opens evdev nodes. ``POSIXEvdevOpener`` is the real one; tests pass twins.
package protocol EvdevOpener: Sendable {
    /// Opens `path` for reading.
    func open(_ path: String) throws(LinuxIOError) -> any EvdevDevice
}

/// Opens real `/dev/input/event*` nodes.
package struct POSIXEvdevOpener: EvdevOpener {
    /// Creates the opener.
    package init() {}
    package func open(_ path: String) throws(LinuxIOError) -> any EvdevDevice {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw LinuxIOError(code: errno, path: path, operation: "open") }
        return POSIXEvdevDevice(handle: POSIXDeviceHandle(fd: fd, path: path))
    }
}

/// The ioctl request numbers of `linux/input.h` (`_IOC(dir, 'E', nr, size)`).
enum EvdevIoctl {
    static func ioc(_ dir: UInt, _ nr: UInt, _ size: UInt) -> UInt { (dir << 30) | (size << 16) | (UInt(UInt8(ascii: "E")) << 8) | nr }
    static let read: UInt = 2, write: UInt = 1
    static func name(_ len: Int) -> UInt { ioc(read, 0x06, UInt(len)) }
    static func uniq(_ len: Int) -> UInt { ioc(read, 0x08, UInt(len)) }
    static func prop(_ len: Int) -> UInt { ioc(read, 0x09, UInt(len)) }
    static let id: UInt = ioc(read, 0x02, 8)
    static func abs(_ code: UInt16) -> UInt { ioc(read, 0x40 + UInt(code), 24) }
    static func bit(_ ev: UInt16, _ len: Int) -> UInt { ioc(read, 0x20 + UInt(ev), UInt(len)) }
    static let setClock: UInt = ioc(write, 0xa0, 4)
}

final class POSIXEvdevDevice: EvdevDevice, Sendable {
    let handle: POSIXDeviceHandle
    init(handle: POSIXDeviceHandle) {
        self.handle = handle
        // Event times on CLOCK_MONOTONIC, the clock of RawSample.timestamp.
        var clock = Int32(CLOCK_MONOTONIC)
        _ = ioctl(handle.fd, EvdevIoctl.setClock, &clock)
    }

    private func string(_ request: (Int) -> UInt) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        let n = ioctl(handle.fd, request(buf.count), &buf)
        guard n >= 0 else { return "" }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func identity() throws(LinuxIOError) -> EvdevIdentity {
        // Every query is optional (emulated nodes answer only some); what is missing is filled in
        // from sysfs by discovery. Only a vanished device is an error.
        var ids = [UInt16](repeating: 0, count: 4)
        if ioctl(handle.fd, EvdevIoctl.id, &ids) < 0 && errno == ENODEV {
            throw LinuxIOError(code: ENODEV, path: handle.path, operation: "ioctl EVIOCGID")
        }
        var props = [UInt8](repeating: 0, count: 8)
        _ = ioctl(handle.fd, EvdevIoctl.prop(props.count), &props)
        var absBits = [UInt8](repeating: 0, count: 8)
        let haveBits = ioctl(handle.fd, EvdevIoctl.bit(EvdevCode.EV_ABS, absBits.count), &absBits) >= 0
        var axes: [UInt16: EvdevAbsInfo] = [:]
        for code in UInt16(0)..<6 where !haveBits || absBits[Int(code) / 8] & (1 << (code % 8)) != 0 {
            if let info = absInfo(code) { axes[code] = info }
        }
        var properties = Set<Int>()
        for bit in 0..<64 where props[bit / 8] & (1 << (bit % 8)) != 0 { properties.insert(bit) }
        return EvdevIdentity(path: handle.path, name: string(EvdevIoctl.name), uniq: string(EvdevIoctl.uniq),
                             bus: ids[0], vendor: ids[1], product: ids[2], version: ids[3], properties: properties, axes: axes)
    }

    private func absInfo(_ code: UInt16) -> EvdevAbsInfo? {
        var raw = [Int32](repeating: 0, count: 6)
        guard ioctl(handle.fd, EvdevIoctl.abs(code), &raw) >= 0 else { return nil }
        return EvdevAbsInfo(value: raw[0], minimum: raw[1], maximum: raw[2], fuzz: raw[3], flat: raw[4], resolution: raw[5])
    }

    func axisValues() throws(LinuxIOError) -> [UInt16: Int32] {
        var out: [UInt16: Int32] = [:]
        for code in UInt16(0)..<6 {
            if let i = absInfo(code) { out[code] = i.value } else if errno == ENODEV {
                throw LinuxIOError(code: ENODEV, path: handle.path, operation: "ioctl EVIOCGABS")
            }
        }
        return out
    }

    func readEvents(timeout: Double) throws(LinuxIOError) -> [InputEvent] {
        InputEvent.decode(try handle.read(maxBytes: InputEvent.byteSize * 64, timeout: timeout))
    }

    func close() { handle.close() }
}

