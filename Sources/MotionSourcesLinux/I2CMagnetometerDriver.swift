import MotionSources
import MotionFusion

/// A magnetometer read together with an accelerometer-and-gyroscope chip, at its own address: the
/// AK8963 inside an MPU-9250/9255 (behind the MPU's I2C bypass, at 0x0C), or the LSM9DS1's
/// magnetometer (0x1C or 0x1E, next to its accelerometer and gyroscope at 0x6A or 0x6B).
///
/// Its samples come out in the *device frame of the chip it belongs to*: the magnetometer's own axes
/// are turned into that chip's (datasheets' axis figures), then the chip's mount matrix applies, so
/// the three sensors of one source share Core Motion's axes.
package enum I2CMagnetometer: String, Sendable, Hashable {
    /// Asahi Kasei AK8963 (`WIA` 0x00 = 0x48), the MPU-9250's magnetometer.
    case ak8963
    /// ST LSM9DS1 magnetometer (`WHO_AM_I` 0x0F = 0x3D).
    case lsm9ds1

    /// `AK8963`, `LSM9DS1 magnetometer`.
    package var displayName: String { self == .ak8963 ? "AK8963" : "LSM9DS1 magnetometer" }

    /// Magnetometer axes → the axes of the accelerometer-and-gyroscope chip it belongs to.
    ///
    /// - AK8963 in an MPU-9250: x = AK y, y = AK x, z = −AK z (MPU-9250 product specification,
    ///   "Orientation of Axes of Sensitivity"; the kernel's `inv_mpu6050` builds the same magnetometer
    ///   mount matrix: "x <- y, y <- x, z <- -z").
    /// - LSM9DS1: x = −M x, y = M y, z = M z (the datasheet's pin-indicator figure draws the
    ///   magnetometer's X opposite the accelerometer's; RTIMULib, the Sense HAT's library, flips the
    ///   magnetometer's x relative to the other two sensors the same way).
    package var toHostChip: MountMatrix {
        switch self {
        case .ak8963: MountMatrix(Vector3(0, 1, 0), Vector3(1, 0, 0), Vector3(0, 0, -1))
        case .lsm9ds1: MountMatrix(Vector3(-1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))
        }
    }

    /// Range (µT per axis), resolution (µT per count) and rates (Hz) at the driver's settings.
    package var capability: SensorCapability {
        switch self {
        case .ak8963: SensorCapability(minimumRate: 8, maximumRate: 100, range: 4912, resolution: AK8963Driver.microteslaPerCount)
        case .lsm9ds1: SensorCapability(minimumRate: 0.625, maximumRate: 80, range: 400, resolution: LSM9DS1MagnetometerDriver.microteslaPerCount)
        }
    }

    /// The line `coremotion sensors` shows for it.
    package func detail(address: UInt8) -> String {
        switch self {
        case .ak8963:
            "AK8963 at \(I2CAddress.hex(address)) behind the I2C bypass: 16-bit continuous mode (0.15 µT per count, ±4912 µT; 8 or 100 Hz), fuse-ROM sensitivity adjustment, its axes turned into the MPU's (x = AK y, y = AK x, z = −AK z)"
        case .lsm9ds1:
            "LSM9DS1 magnetometer at \(I2CAddress.hex(address)): ±4 gauss (0.014 µT per count), continuous, 0.625…80 Hz, its axes turned into the accelerometer's (x = −M x)"
        }
    }

    /// The driver reading it at `address` at `rate` (Hz); `mountMatrix` is the host chip's, applied
    /// after ``toHostChip`` when `hosted`, alone otherwise (a magnetometer read on its own).
    package func makeDriver(address: UInt8, busPath: String, rate: Double, mountMatrix: MountMatrix, hosted: Bool = true) -> any I2CChipDriver {
        let frame = hosted ? MountMatrix.product(mountMatrix, toHostChip) : mountMatrix
        return switch self {
        case .ak8963: AK8963Driver(address: address, busPath: busPath, rate: rate, frame: frame)
        case .lsm9ds1: LSM9DS1MagnetometerDriver(address: address, busPath: busPath, rate: rate, frame: frame)
        }
    }
}

extension MountMatrix {
    /// `a · b`: `b` first, then `a`.
    static func product(_ a: MountMatrix, _ b: MountMatrix) -> MountMatrix {
        func column(_ j: Int) -> Vector3 {
            Vector3(b.rows[0].component(j), b.rows[1].component(j), b.rows[2].component(j))
        }
        let cols = (0..<3).map(column)
        return MountMatrix(Vector3(a.rows[0].dot(cols[0]), a.rows[0].dot(cols[1]), a.rows[0].dot(cols[2])),
                           Vector3(a.rows[1].dot(cols[0]), a.rows[1].dot(cols[1]), a.rows[1].dot(cols[2])),
                           Vector3(a.rows[2].dot(cols[0]), a.rows[2].dot(cols[1]), a.rows[2].dot(cols[2])))
    }
}

extension Vector3 {
    fileprivate func component(_ i: Int) -> Double { i == 0 ? x : (i == 1 ? y : z) }
    fileprivate func dot(_ o: Vector3) -> Double { x * o.x + y * o.y + z * o.z }
}

/// The user-space driver of an AK8963 magnetometer (AK8963 datasheet, MS1526): `WIA` 0x00 = 0x48,
/// `ST1` 0x02 (DRDY bit 0), `HXL`…`HZH` 0x03…0x08 (signed little-endian words), `ST2` 0x09 (HOFL
/// bit 3; reading it ends the read and releases the next sample), `CNTL1` 0x0A (BIT 4: 16-bit
/// output; MODE 3:0: 0000 power-down, 0010 continuous 8 Hz, 0110 continuous 100 Hz, 1111 fuse ROM),
/// `ASAX`…`ASAZ` 0x10…0x12 (sensitivity adjustment, readable in fuse-ROM mode).
///
/// Sequence: read `WIA` → power-down, fuse-ROM mode, read `ASA` → power-down, continuous mode at
/// 16 bits → read `CNTL1` back → streaming: each read of `ST1`…`ST2` (8 bytes) gives a sample when
/// `ST1` has DRDY and `ST2` no overflow, `H · ((ASA − 128) · 0.5 / 128 + 1) · 0.15 µT`, then
/// ``I2CMagnetometer/toHostChip`` and the mount matrix. Mode changes wait 100 µs (datasheet 7.4).
package struct AK8963Driver: I2CChipDriver {
    private enum Phase: Sendable, Hashable { case identifying, fuseROM, verifying, streaming, failed }

    /// µT per count in 16-bit output (datasheet: 0.15 µT/LSB).
    package static let microteslaPerCount = 0.15
    /// `CNTL1`: 16-bit output, continuous measurement mode 2 (100 Hz) or 1 (8 Hz).
    package let control: UInt8
    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Chip axes → device axes (``I2CMagnetometer/toHostChip`` then the host's mount matrix).
    package let frame: MountMatrix
    /// The sensitivity adjustment per axis, `(ASA − 128) · 0.5 / 128 + 1`, once read.
    package private(set) var adjustment = Vector3(1, 1, 1)
    private var phase = Phase.identifying

    /// Creates the driver; `rate` (Hz) picks the 8 Hz mode at or below 8, the 100 Hz mode above.
    package init(address: UInt8 = 0x0C, busPath: String, rate: Double, frame: MountMatrix = I2CMagnetometer.ak8963.toHostChip) {
        self.address = address
        self.busPath = busPath
        self.frame = frame
        control = rate.isFinite && rate > 0 && rate <= 8 ? 0x12 : 0x16
    }

    package var isStreaming: Bool { phase == .streaming }
    /// `ST1`, the data, `ST2`: 8 bytes from 0x02.
    package var dataRead: (register: UInt8, count: Int) { (0x02, 8) }
    package var actualRate: Double { control == 0x12 ? 8 : 100 }
    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }

    package mutating func start() -> [I2CDriverAction] {
        phase = .identifying
        return [.read(register: 0x00, count: 1)]
    }

    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no WIA from \(place)", path: busPath)) }
            guard id == 0x48 else {
                return fail(SourceError(.unavailable, "\(place) answers WIA (0x00) \(I2CAddress.hex(id)): not an AK8963 (0x48)", path: busPath))
            }
            phase = .fuseROM
            return [.write(register: 0x0A, value: 0x00), .pause(seconds: 0.0001), .write(register: 0x0A, value: 0x0F),
                    .pause(seconds: 0.0001), .read(register: 0x10, count: 3)]
        case .fuseROM:
            guard bytes.count == 3 else { return fail(SourceError(.io, "no sensitivity adjustment (ASA) from \(place)", path: busPath)) }
            let a = bytes.map { (Double($0) - 128) * 0.5 / 128 + 1 }
            adjustment = Vector3(a[0], a[1], a[2])
            phase = .verifying
            return [.write(register: 0x0A, value: 0x00), .pause(seconds: 0.0001), .write(register: 0x0A, value: control),
                    .pause(seconds: 0.0001), .read(register: 0x0A, count: 1)]
        case .verifying:
            guard let got = bytes.first, got & 0x1F == control else {
                return fail(SourceError(.io, "the AK8963 at \(place) did not keep its mode (wrote \(I2CAddress.hex(control)) to CNTL1, read back \(bytes.first.map(I2CAddress.hex) ?? "nothing"))", path: busPath))
            }
            phase = .streaming
            return [.streaming]
        case .streaming:
            guard bytes.count == 8 else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of 8 from \(place)", path: busPath))
            }
            return [.deliver(decode(bytes, at: timestamp))]
        case .failed:
            return []
        }
    }

    package mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction] {
        fail(i2cTransferError(error, chip: "AK8963", place: place, busPath: busPath))
    }

    private mutating func fail(_ error: SourceError) -> [I2CDriverAction] {
        phase = .failed
        return [.fail(error)]
    }

    /// Decodes `ST1`, `HXL`…`HZH`, `ST2`: no sample without DRDY (nothing new) or with HOFL (the
    /// datasheet calls that reading invalid).
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        guard b.count == 8, b[0] & 0x01 != 0, b[7] & 0x08 == 0 else { return [] }
        let h = Vector3(int16LE(b, 1) * adjustment.x, int16LE(b, 3) * adjustment.y, int16LE(b, 5) * adjustment.z) * Self.microteslaPerCount
        return [RawSample(sensor: .magnetometer, timestamp: timestamp, value: frame.apply(h) + .zero)]
    }
}

/// The user-space driver of the LSM9DS1's magnetometer (datasheet DocID025715; also an LIS3MDL's
/// register map): `WHO_AM_I` 0x0F = 0x3D, `CTRL_REG1_M` 0x20 (OM 6:5 XY performance, DO 4:2 data
/// rate), `CTRL_REG2_M` 0x21 (FS 6:5: 00 = ±4 gauss), `CTRL_REG3_M` 0x22 (MD 1:0: 00 continuous),
/// `CTRL_REG4_M` 0x23 (OMZ 3:2), `CTRL_REG5_M` 0x24 (BDU bit 6), `STATUS_REG_M` 0x27 (ZYXDA bit 3),
/// `OUT_X_L_M`…`OUT_Z_H_M` 0x28…0x2D (signed little-endian words).
///
/// The data registers are read one byte each: the magnetometer increments the register address of
/// a multi-byte read only when the address has its top bit set, which the accelerometer and
/// gyroscope at the other address do not use; single reads work on every chip and on `i2c-stub`.
/// Sensitivity ±4 gauss: 0.14 mgauss = 0.014 µT per count (datasheet, table 3).
package struct LSM9DS1MagnetometerDriver: I2CChipDriver {
    private enum Phase: Sendable, Hashable { case identifying, verifying(Int), streaming, data([UInt8]), failed }

    /// µT per count at ±4 gauss.
    package static let microteslaPerCount = 0.014
    /// Output data rates (Hz) and their `DO` codes.
    package static let rates: [(hz: Double, code: UInt8)] = [(0.625, 0), (1.25, 1), (2.5, 2), (5, 3), (10, 4), (20, 5), (40, 6), (80, 7)]
    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Chip axes → device axes (``I2CMagnetometer/toHostChip`` then the host's mount matrix, or the
    /// mount matrix alone for a magnetometer read on its own).
    package let frame: MountMatrix
    /// The output data rate set, Hz.
    package let actualRate: Double
    let rateCode: UInt8
    private var phase = Phase.identifying

    /// Creates the driver; the data rate is the slowest at or above `rate` (80 Hz above them all).
    package init(address: UInt8, busPath: String, rate: Double, frame: MountMatrix = I2CMagnetometer.lsm9ds1.toHostChip) {
        self.address = address
        self.busPath = busPath
        self.frame = frame
        let want = rate.isFinite && rate > 0 ? rate : 10
        let pick = Self.rates.first { $0.hz >= want - 1e-9 } ?? Self.rates[Self.rates.count - 1]
        actualRate = pick.hz
        rateCode = pick.code
    }

    /// The configuration writes, with the bits the read-back compares: high-performance X/Y/Z,
    /// the data rate, ±4 gauss, continuous mode, block data update.
    package var writes: [(register: UInt8, value: UInt8, mask: UInt8)] {
        [(0x20, 0x40 | rateCode << 2, 0xFE), (0x21, 0x00, 0x60), (0x22, 0x00, 0x03), (0x23, 0x08, 0x0C), (0x24, 0x40, 0x40)]
    }

    package var isStreaming: Bool {
        switch phase {
        case .streaming, .data: true
        default: false
        }
    }
    /// `STATUS_REG_M`; the data registers follow when it has ZYXDA.
    package var dataRead: (register: UInt8, count: Int) { (0x27, 1) }
    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }

    package mutating func start() -> [I2CDriverAction] {
        phase = .identifying
        return [.read(register: 0x0F, count: 1)]
    }

    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        let w = writes
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no WHO_AM_I from \(place)", path: busPath)) }
            guard id == 0x3D else {
                return fail(SourceError(.unavailable, "\(place) answers WHO_AM_I (0x0f) \(I2CAddress.hex(id)): not an LSM9DS1 magnetometer (0x3d)", path: busPath))
            }
            phase = .verifying(0)
            return w.map { .write(register: $0.register, value: $0.value) } + w.map { .read(register: $0.register, count: 1) }
        case .verifying(let i):
            guard i < w.count, let got = bytes.first else { return fail(SourceError(.io, "no read-back from \(place)", path: busPath)) }
            if got & w[i].mask != w[i].value & w[i].mask {
                return fail(SourceError(.io, "the LSM9DS1 magnetometer at \(place) did not keep its configuration (wrote \(I2CAddress.hex(w[i].value)) to \(I2CAddress.hex(w[i].register)), read back \(I2CAddress.hex(got)))", path: busPath))
            }
            if i + 1 < w.count {
                phase = .verifying(i + 1)
                return []
            }
            phase = .streaming
            return [.streaming]
        case .streaming:
            guard let status = bytes.first else { return fail(SourceError(.malformedInput, "no STATUS_REG_M from \(place)", path: busPath)) }
            guard status & 0x08 != 0 else { return [] }
            phase = .data([])
            return (0x28...0x2D).map { .read(register: UInt8($0), count: 1) }
        case .data(var got):
            guard let b = bytes.first else { return fail(SourceError(.malformedInput, "no data byte from \(place)", path: busPath)) }
            got.append(b)
            guard got.count == 6 else {
                phase = .data(got)
                return []
            }
            phase = .streaming
            return [.deliver(decode(got, at: timestamp))]
        case .failed:
            return []
        }
    }

    package mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction] {
        fail(i2cTransferError(error, chip: "LSM9DS1 magnetometer", place: place, busPath: busPath))
    }

    private mutating func fail(_ error: SourceError) -> [I2CDriverAction] {
        phase = .failed
        return [.fail(error)]
    }

    /// Decodes `OUT_X_L_M`…`OUT_Z_H_M` (6 bytes) into one sample.
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        guard b.count == 6 else { return [] }
        let m = Vector3(int16LE(b, 0), int16LE(b, 2), int16LE(b, 4)) * Self.microteslaPerCount
        return [RawSample(sensor: .magnetometer, timestamp: timestamp, value: frame.apply(m) + .zero)]
    }
}
