/// Linux input constants and records used by the evdev source (from `linux/input-event-codes.h`
/// and `linux/input.h`).
package enum EvdevCode {
    /// Event types.
    package static let EV_SYN: UInt16 = 0, EV_KEY: UInt16 = 1, EV_ABS: UInt16 = 3, EV_MSC: UInt16 = 4
    /// `EV_SYN` codes.
    package static let SYN_REPORT: UInt16 = 0, SYN_DROPPED: UInt16 = 3
    /// `EV_ABS` codes of motion nodes.
    package static let ABS_X: UInt16 = 0, ABS_Y: UInt16 = 1, ABS_Z: UInt16 = 2, ABS_RX: UInt16 = 3, ABS_RY: UInt16 = 4, ABS_RZ: UInt16 = 5
    /// `EV_MSC` code of the hardware timestamp (µs, wrapping u32).
    package static let MSC_TIMESTAMP: UInt16 = 5
    /// The device property marking motion-sensor nodes.
    package static let INPUT_PROP_ACCELEROMETER = 6
}

/// One `struct input_event`.
package struct InputEvent: Sendable, Hashable {
    /// Event time in seconds (`CLOCK_MONOTONIC` once the source sets `EVIOCSCLOCKID`).
    package var time: Double
    /// `EV_*`.
    package var type: UInt16
    /// The code within the type.
    package var code: UInt16
    /// The value.
    package var value: Int32

    /// Creates an event.
    package init(time: Double, type: UInt16, code: UInt16, value: Int32) {
        self.time = time
        self.type = type
        self.code = code
        self.value = value
    }

    /// Size of `struct input_event` on 64-bit Linux: `timeval` (16) + type + code + value.
    package static let byteSize = 24

    /// Decodes events from raw bytes (64-bit layout, native little-endian).
    package static func decode(_ bytes: [UInt8]) -> [InputEvent] {
        var out: [InputEvent] = []
        out.reserveCapacity(bytes.count / byteSize)
        bytes.withUnsafeBytes { b in
            var o = 0
            while o + byteSize <= b.count {
                let sec = b.loadUnaligned(fromByteOffset: o, as: Int64.self)
                let usec = b.loadUnaligned(fromByteOffset: o + 8, as: Int64.self)
                out.append(InputEvent(time: Double(sec) + Double(usec) / 1e6,
                                      type: b.loadUnaligned(fromByteOffset: o + 16, as: UInt16.self),
                                      code: b.loadUnaligned(fromByteOffset: o + 18, as: UInt16.self),
                                      value: b.loadUnaligned(fromByteOffset: o + 20, as: Int32.self)))
                o += byteSize
            }
        }
        return out
    }

    /// Encodes events in the kernel's 64-bit layout (for twins and tests).
    package static func encode(_ events: [InputEvent]) -> [UInt8] {
        var out: [UInt8] = []
        for e in events {
            // Any time decode() can produce (up to ±9.2e18 s) encodes without trapping: seconds
            // clamp to Int64's range, microseconds to 0…999999; a non-finite time encodes as 0.
            let t = e.time.isFinite ? e.time : 0
            let whole = t.rounded(.down)
            let sec = whole >= 0x1p63 ? Int64.max : whole < -0x1p63 ? Int64.min : Int64(whole)
            let usec = Int64(min(max(((t - whole) * 1e6).rounded(), 0), 999_999))
            withUnsafeBytes(of: sec.littleEndian) { out += $0 }
            withUnsafeBytes(of: usec.littleEndian) { out += $0 }
            withUnsafeBytes(of: e.type.littleEndian) { out += $0 }
            withUnsafeBytes(of: e.code.littleEndian) { out += $0 }
            withUnsafeBytes(of: e.value.littleEndian) { out += $0 }
        }
        return out
    }
}

/// `struct input_absinfo`: an absolute axis's state and calibration.
package struct EvdevAbsInfo: Sendable, Hashable {
    /// Current value.
    package var value: Int32
    /// Smallest value.
    package var minimum: Int32
    /// Largest value.
    package var maximum: Int32
    /// Noise filter width.
    package var fuzz: Int32
    /// Dead zone.
    package var flat: Int32
    /// Units per g for ABS_X/Y/Z of motion nodes, units per °/s for ABS_RX/RY/RZ.
    package var resolution: Int32

    /// Creates an axis description.
    package init(value: Int32, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32) {
        self.value = value
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }
}

/// What an evdev node says about itself (`EVIOCGNAME`, `EVIOCGUNIQ`, `EVIOCGID`, `EVIOCGPROP`, `EVIOCGABS`).
package struct EvdevIdentity: Sendable, Hashable {
    /// The node, e.g. `/dev/input/event5`.
    package var path: String
    /// `EVIOCGNAME`: `Wireless Controller Motion Sensors`.
    package var name: String
    /// `EVIOCGUNIQ`: usually the controller's MAC address; shared by a controller's gamepad and motion nodes.
    package var uniq: String
    /// Bus type, vendor, product, version (`EVIOCGID`).
    package var bus: UInt16, vendor: UInt16, product: UInt16, version: UInt16
    /// Set properties (`INPUT_PROP_*` numbers).
    package var properties: Set<Int>
    /// The kernel driver (`hid-playstation`, `hid-nintendo`, `hid-steam`, …), when known.
    package var driver: String?
    /// Absolute axes with their info, keyed by `ABS_*` code.
    package var axes: [UInt16: EvdevAbsInfo]

    /// Creates an identity.
    package init(path: String, name: String, uniq: String = "", bus: UInt16 = 0, vendor: UInt16 = 0, product: UInt16 = 0, version: UInt16 = 0,
                properties: Set<Int> = [], driver: String? = nil, axes: [UInt16: EvdevAbsInfo]) {
        self.path = path
        self.name = name
        self.uniq = uniq
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.version = version
        self.properties = properties
        self.driver = driver
        self.axes = axes
    }

    /// `true` for a motion-sensor node: `INPUT_PROP_ACCELEROMETER` with ABS_X/Y/Z.
    package var isMotionNode: Bool {
        properties.contains(EvdevCode.INPUT_PROP_ACCELEROMETER) && [EvdevCode.ABS_X, EvdevCode.ABS_Y, EvdevCode.ABS_Z].allSatisfy { axes[$0] != nil }
    }
    /// `true` when the node has ABS_RX/RY/RZ (a gyroscope).
    package var hasGyro: Bool { [EvdevCode.ABS_RX, EvdevCode.ABS_RY, EvdevCode.ABS_RZ].allSatisfy { axes[$0] != nil } }
}
