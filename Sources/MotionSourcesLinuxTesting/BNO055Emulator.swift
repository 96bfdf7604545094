import MotionFusion
import MotionSources
import MotionSourcesLinux

/// A register-level emulator of a Bosch BNO055, written from its datasheet (BST-BNO055-DS000:
/// sections 3.3 operation modes, 3.4 axis remap, 3.6.1 units, 3.6.5 data, 4 register map), for
/// testing ``BNO055Driver`` against behaviour rather than plain memory.
///
/// What it models, because a driver can get it wrong:
/// - **Pages**: `PAGE_ID` (0x07, in both pages) selects page 0 or 1; page 1 holds other registers
///   at 0x08… (the sensors' configuration), so a read in page 1 does not see `CHIP_ID` or the data.
/// - **Operation modes** (`OPR_MODE` 0x3D): `CONFIGMODE` (0, the reset mode) outputs zeros and is
///   the only mode in which registers other than `OPR_MODE` and `PAGE_ID` can be written; `AMG` (7)
///   outputs the raw sensors; `NDOF` (0xC) also the fusion: quaternion, gravity, linear
///   acceleration. Other modes output the sensors their names say.
/// - **Switching time**: after a write of `OPR_MODE` the chip ignores writes for 7 ms (from
///   `CONFIGMODE`) or 19 ms (to `CONFIGMODE`), the datasheet's table 3-6, on the injected clock.
/// - **Units** (`UNIT_SEL` 0x3B, reset 0x80): acceleration 1 m/s² = 100 counts or 1 mg = 1 count
///   (bit 0); angular rate 1 °/s = 16 counts or 1 rad/s = 900 counts (bit 1); field 1 µT = 16 counts;
///   quaternion 1 = 2^14 counts. Little-endian words.
/// - **Axis remap** (`AXIS_MAP_CONFIG` 0x41, reset 0x24; `AXIS_MAP_SIGN` 0x42, reset 0) applied to
///   the vectors.
/// - `SYS_STATUS` (0x39): 0 in `CONFIGMODE`, 5 with the fusion running, 6 without.
///
/// The pose is physical: ``attitude`` maps the chip's axes to east–north–up (Bosch: heading 0 with
/// +y north); the accelerometer and the gravity vector read specific force (+9.80665 m/s² up);
/// ``rotationRate`` in °/s in the chip's axes; ``magneticField`` in µT, east–north–up.
package final class BNO055Emulator: EmulatedI2CChip, Sendable {
    private struct State {
        var pages = [[UInt8]](repeating: [UInt8](repeating: 0, count: 128), count: 2)
        var page = 0
        var busyUntil = -Double.infinity
        var attitude = Quaternion.identity
        var rotationRate = Vector3.zero
        var magneticField = Vector3(0, 20, -40)
    }
    private let state = Locked(State())
    private let now: @Sendable () -> Double

    /// A chip just powered on (`CONFIGMODE`, page 0), lying face up with +y north, at rest, in a
    /// field of 20 µT north and 40 µT down; `now` is the clock of the mode-switching times (seconds).
    package init(now: @escaping @Sendable () -> Double = { LinuxClock.monotonic() }) {
        self.now = now
        state.withLock { s in
            s.pages[0][0x00] = 0xA0  // CHIP_ID
            s.pages[0][0x01] = 0xFB  // ACC_ID
            s.pages[0][0x02] = 0x32  // MAG_ID
            s.pages[0][0x03] = 0x0F  // GYR_ID
            s.pages[0][0x3B] = 0x80  // UNIT_SEL
            s.pages[0][0x41] = 0x24  // AXIS_MAP_CONFIG
            s.pages[1][0x08] = 0x0D  // ACC_Config: ±4 g, 62.5 Hz
            s.pages[1][0x0A] = 0x38  // GYR_Config_0: ±2000 °/s, 32 Hz
        }
    }

    /// The pose: attitude (chip → east–north–up), rotation rate (°/s, chip axes), field (µT, ENU).
    package func setPose(attitude: Quaternion, rotationRate: Vector3 = .zero, magneticField: Vector3 = Vector3(0, 20, -40)) {
        state.withLock { s in
            s.attitude = attitude.normalized
            s.rotationRate = rotationRate
            s.magneticField = magneticField
        }
    }

    /// Sets a page-0 register as another program would have left it, whatever the mode.
    package func preset(_ register: UInt8, _ value: UInt8) { state.withLock { $0.pages[0][Int(register & 0x7F)] = value } }

    /// A page-0 register as the chip holds it now.
    package func register(_ register: UInt8) -> UInt8 {
        state.withLock { s in
            Self.refresh(&s)
            return s.pages[0][Int(register & 0x7F)]
        }
    }

    package func read(register: UInt8, count: Int) -> [UInt8] {
        state.withLock { s in
            Self.refresh(&s)
            return (0..<count).map { i in
                let r = (Int(register) + i) & 0x7F
                return r == 0x07 ? UInt8(s.page) : s.pages[s.page][r]
            }
        }
    }

    package func write(register: UInt8, value: UInt8) {
        let t = now()
        state.withLock { s in
            let r = Int(register & 0x7F)
            if r == 0x07 {
                s.page = Int(value & 1)
                return
            }
            guard t >= s.busyUntil else { return }  // switching modes: the write is lost
            let mode = s.pages[0][0x3D] & 0x0F
            if s.page == 0 && r == 0x3D {
                let next = value & 0x0F
                if next != mode { s.busyUntil = t + (next == 0 ? 0.019 : 0.007) }
                s.pages[0][0x3D] = next
                return
            }
            guard mode == 0 else { return }  // only CONFIGMODE takes other writes
            if s.page == 0 && (r <= 0x06 || (0x08...0x3A).contains(r)) { return }  // identity, data and status are read-only
            s.pages[s.page][r] = value
        }
    }

    /// The outputs for the current mode, units and remap.
    private static func refresh(_ s: inout State) {
        let mode = s.pages[0][0x3D] & 0x0F
        let hasAccel = [1, 4, 5, 7, 8, 9, 10, 11, 12].contains(mode)
        let hasMag = [2, 4, 6, 7, 9, 10, 11, 12].contains(mode)
        let hasGyro = [3, 5, 6, 7, 8, 11, 12].contains(mode)
        let fusion = mode >= 8
        let units = s.pages[0][0x3B]
        let accelCounts = units & 0x01 != 0 ? 1000 / 9.80665 : 100   // per m/s²: mg or m/s²
        let gyroCounts = units & 0x02 != 0 ? 900 * 180 / Double.pi : 16  // per °/s: rad/s or °/s
        let gravity = s.attitude.inverseRotate(Vector3(0, 0, 9.80665))   // specific force at rest, chip axes
        let field = s.attitude.inverseRotate(s.magneticField)
        // Axis remap: remapped axis i takes chip axis (config >> 2i) & 3, with sign bit (2 − i).
        let config = s.pages[0][0x41], sign = s.pages[0][0x42]
        func remap(_ v: Vector3) -> Vector3 {
            let c = [v.x, v.y, v.z]
            func axis(_ i: Int) -> Double {
                let from = Int((config >> (2 * UInt8(i))) & 3)  // safe: i is an axis index, 0…2
                let value = from < 3 ? c[from] : 0
                return sign & (1 << (2 - UInt8(i))) != 0 ? -value : value
            }
            return Vector3(axis(0), axis(1), axis(2))
        }
        func put16(_ at: Int, _ v: Int16) {
            let u = UInt16(bitPattern: v)
            s.pages[0][at] = UInt8(u & 0xFF)
            s.pages[0][at + 1] = UInt8(u >> 8)
        }
        func put(_ base: Int, _ v: Vector3, _ k: Double, _ on: Bool) {
            let r = remap(v)
            for (i, c) in [r.x, r.y, r.z].enumerated() { put16(base + 2 * i, on ? emulatedCounts(c, k) : 0) }
        }
        put(0x08, gravity, accelCounts, hasAccel)
        put(0x0E, field, 16, hasMag)
        put(0x14, s.rotationRate, gyroCounts, hasGyro)
        let q = s.attitude
        for (i, c) in [q.w, q.x, q.y, q.z].enumerated() { put16(0x20 + 2 * i, fusion ? emulatedCounts(c, 16384) : 0) }
        put(0x28, .zero, accelCounts, fusion)          // LIA_DATA: at rest
        put(0x2E, gravity, accelCounts, fusion)        // GRV_DATA
        s.pages[0][0x39] = mode == 0 ? 0 : (fusion ? 5 : 6)
    }
}
