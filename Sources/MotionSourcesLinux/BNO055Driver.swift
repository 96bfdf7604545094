import MotionSources
import MotionFusion

/// The registers of the BNO055 used here (datasheet BST-BNO055-DS000, section 4), page 0.
enum BNO055Register {
    static let chipID: UInt8 = 0x00, pageID: UInt8 = 0x07, accelData: UInt8 = 0x08
    static let systemStatus: UInt8 = 0x39, unitSelect: UInt8 = 0x3B, operationMode: UInt8 = 0x3D, powerMode: UInt8 = 0x3E
    static let axisMapConfig: UInt8 = 0x41, axisMapSign: UInt8 = 0x42
    /// `OPR_MODE` values: `CONFIGMODE`, `AMG` (raw accelerometer, magnetometer, gyroscope), `NDOF`
    /// (nine-axis fusion).
    static let configMode: UInt8 = 0x00, amgMode: UInt8 = 0x07, ndofMode: UInt8 = 0x0C
}

/// How a BNO055 is set up: raw sensors (`AMG`) or its own nine-axis fusion (`NDOF`), and the rate
/// the source polls it at.
package struct BNO055Configuration: Sendable, Hashable {
    /// `true`: `NDOF` mode, which adds the chip's attitude (quaternion) and gravity; `false`: `AMG`.
    package let fusion: Bool
    /// The polling rate, Hz: the demand clamped to 1…100 Hz (the fusion's output rate is 100 Hz;
    /// in `AMG` the sensors' own rates are up to 62.5 Hz for the accelerometer (its default
    /// bandwidth), 32 Hz gyroscope bandwidth and 20 Hz magnetometer, so faster polls repeat values).
    package let actualRate: Double

    /// The slowest and fastest polling rates, Hz.
    package static let rateLimits: ClosedRange<Double> = 1...100

    /// Creates a configuration (100 Hz for a rate that is not a positive number).
    package init(rate: Double = 100, fusion: Bool = false) {
        self.fusion = fusion
        actualRate = rate.isFinite && rate > 0 ? min(max(rate, Self.rateLimits.lowerBound), Self.rateLimits.upperBound) : 100
    }

    /// `OPR_MODE` to run in.
    var operationMode: UInt8 { fusion ? BNO055Register.ndofMode : BNO055Register.amgMode }
}

/// The user-space driver of a Bosch BNO055 (accelerometer, gyroscope, magnetometer and the fusion
/// running on its own microcontroller) as a state machine (``I2CChipDriver``), from its datasheet
/// (BST-BNO055-DS000).
///
/// Sequence: `PAGE_ID` (0x07) 0, read `CHIP_ID` (0x00 = 0xA0) → `OPR_MODE` (0x3D) `CONFIGMODE`,
/// pause 19 ms (the datasheet's switching time from any mode to `CONFIGMODE`; only there are the
/// other registers writable) → `PWR_MODE` normal, `UNIT_SEL` 0 (m/s², °/s, degrees, °C),
/// `AXIS_MAP_CONFIG` 0x24 and `AXIS_MAP_SIGN` 0 (the chip's own axes: the mount matrix does any
/// turning, in software, for raw and fused values alike) → `OPR_MODE` `AMG` (0x07) or `NDOF` (0x0C),
/// pause 7 ms (switching from `CONFIGMODE`) → read 0x3B…0x42 back and `SYS_STATUS`/`SYS_ERR`
/// (0x39, 0x3A; 1 is a system error) → ``I2CDriverAction/streaming``. Then each read from `ACC_DATA`
/// (0x08: 18 bytes in `AMG`, 44 in `NDOF`, little-endian words) gives one sample of each sensor and,
/// in `NDOF`, the chip's attitude (``I2CDriverAction/attitude(_:)``).
///
/// Units and signs (datasheet tables 3-17…3-31): acceleration 1 m/s² = 100 counts, the chip's
/// accelerometer measuring specific force (+9.81 m/s² on z face up, like every accelerometer and
/// its `GRV_DATA` gravity vector), so it is negated into Core Motion's (face up z = −1 g); angular
/// rate 1 °/s = 16 counts; field 1 µT = 16 counts; quaternion 1 = 2^14 counts. The quaternion maps
/// the chip's axes to east–north–up (Bosch: heading 0 when +y points north; identity with x, y, z
/// on east, north, up), turned once into Core Motion's north–west–up (−90° about z).
package struct BNO055Driver: I2CChipDriver {
    private enum Phase: Sendable, Hashable { case identifying, verifying, checkingStatus, streaming, failed }

    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Mode and rate.
    package let configuration: BNO055Configuration
    private var phase = Phase.identifying
    private let accelFrame: MountMatrix
    private let gyroFrame: MountMatrix
    /// The mount matrix as a rotation (chip → device), for the attitude; `nil` when it is not one.
    private let mountRotation: Quaternion?

    /// Creates the driver of the chip at `address` on `busPath`; `mountMatrix` maps chip axes to
    /// device axes (default identity; the attitude needs a proper rotation, see ``init(address:busPath:configuration:mountMatrix:)``).
    package init(address: UInt8, busPath: String, configuration: BNO055Configuration = BNO055Configuration(), mountMatrix: MountMatrix = .identity) {
        self.address = address
        self.busPath = busPath
        self.configuration = configuration
        accelFrame = IIOUnits.frame(kind: .accelerometer, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        gyroFrame = IIOUnits.frame(kind: .gyro, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        mountRotation = Self.rotation(mountMatrix)
    }

    package var isStreaming: Bool { phase == .streaming }
    /// `ACC_DATA` … `GYR_DATA` (18 bytes), or on to `GRV_DATA` (44 bytes) with the fusion.
    package var dataRead: (register: UInt8, count: Int) { (BNO055Register.accelData, configuration.fusion ? 44 : 18) }
    package var actualRate: Double { configuration.actualRate }

    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }

    package mutating func start() -> [I2CDriverAction] {
        phase = .identifying
        return [.write(register: BNO055Register.pageID, value: 0), .read(register: BNO055Register.chipID, count: 1)]
    }

    /// The registers written in `CONFIGMODE` and read back, 0x3B…0x42: `UNIT_SEL`, `OPR_MODE`,
    /// `PWR_MODE`, `AXIS_MAP_CONFIG`, `AXIS_MAP_SIGN` (with the bits that matter).
    var expectedReadBack: [UInt8] { [0x00, configuration.operationMode, 0x00, 0x24, 0x00] }

    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        typealias R = BNO055Register
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no CHIP_ID from \(place)", path: busPath)) }
            guard id == I2CChip.bno055.idValue else {
                return fail(SourceError(.unavailable, "\(place) answers CHIP_ID (0x00) \(I2CAddress.hex(id)): not a BNO055 (0xa0)", path: busPath))
            }
            if configuration.fusion, mountRotation == nil {
                return fail(SourceError(.unavailable, "the BNO055 at \(place): its own attitude needs a mount matrix that is a rotation", path: busPath))
            }
            phase = .verifying
            return [
                .write(register: R.operationMode, value: R.configMode), .pause(seconds: 0.019),
                .write(register: R.powerMode, value: 0x00),        // normal
                .write(register: R.unitSelect, value: 0x00),       // m/s², °/s, degrees, °C, Windows orientation
                .write(register: R.axisMapConfig, value: 0x24),    // x, y, z as the chip's
                .write(register: R.axisMapSign, value: 0x00),
                .write(register: R.operationMode, value: configuration.operationMode), .pause(seconds: 0.007),
                .read(register: R.unitSelect, count: 8),
                .read(register: R.systemStatus, count: 2),
            ]
        case .verifying:
            let got = bytes.count == 8 ? [bytes[0] & 0x97, bytes[2] & 0x0F, bytes[3] & 0x03, bytes[6] & 0x3F, bytes[7] & 0x07] : bytes
            if got != expectedReadBack {
                return fail(SourceError(.io, "the BNO055 at \(place) did not keep its configuration (UNIT_SEL, OPR_MODE, PWR_MODE, AXIS_MAP_CONFIG, AXIS_MAP_SIGN: wrote \(expectedReadBack.map(I2CAddress.hex)), read back \(got.map(I2CAddress.hex)))", path: busPath))
            }
            phase = .checkingStatus
            return []
        case .checkingStatus:
            if bytes.first == 1 {
                return fail(SourceError(.io, "the BNO055 at \(place) reports a system error (SYS_STATUS 1, SYS_ERR \(I2CAddress.hex(bytes.count > 1 ? bytes[1] : 0)))", path: busPath))
            }
            phase = .streaming
            return [.streaming]
        case .streaming:
            let want = dataRead.count
            guard bytes.count == want else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of \(want) from \(place)", path: busPath))
            }
            let samples = decode(bytes, at: timestamp)
            if configuration.fusion, let own = attitude(bytes, at: timestamp) { return [.attitude(own), .deliver(samples)] }
            return [.deliver(samples)]
        case .failed:
            return []
        }
    }

    package mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction] {
        fail(i2cTransferError(error, chip: "BNO055", place: place, busPath: busPath))
    }

    private mutating func fail(_ error: SourceError) -> [I2CDriverAction] {
        phase = .failed
        return [.fail(error)]
    }

    private static func vector(_ b: [UInt8], _ i: Int) -> Vector3 { Vector3(int16LE(b, i), int16LE(b, i + 2), int16LE(b, i + 4)) }

    /// Decodes `ACC_DATA`, `MAG_DATA` and `GYR_DATA` (the first 18 bytes from 0x08).
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        let accel = Self.vector(b, 0) * (0.01 / 9.80665)        // 100 counts per m/s², in g
        let field = Self.vector(b, 6) * (1.0 / 16)              // 16 counts per µT
        let gyro = Self.vector(b, 12) * (.pi / 180 / 16)        // 16 counts per °/s, in rad/s
        return [RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero),
                RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero),
                RawSample(sensor: .magnetometer, timestamp: timestamp, value: gyroFrame.apply(field) + .zero)]
    }

    /// The chip's attitude from `QUA_DATA` (0x20, bytes 24…31) and gravity from `GRV_DATA` (0x2E,
    /// bytes 38…43), in Core Motion's frames; `nil` for a zero quaternion (the fusion not started).
    package func attitude(_ b: [UInt8], at timestamp: Double) -> OwnAttitude? {
        guard b.count >= 44, let mount = mountRotation else { return nil }
        let q = Quaternion(w: int16LE(b, 24), x: int16LE(b, 26), y: int16LE(b, 28), z: int16LE(b, 30))
        guard q.length > 0.5 * 16384 else { return nil }
        // Chip → ENU, then ENU → NWU on the left and device → chip on the right.
        let half = 0.5.squareRoot()
        let enuToNWU = Quaternion(w: half, x: 0, y: 0, z: -half)
        let attitude = (enuToNWU * q.normalized * mount.conjugate).normalized
        let gravity = accelFrame.apply(Self.vector(b, 38) * (0.01 / 9.80665)) + .zero
        return OwnAttitude(attitude: attitude, gravity: gravity, timestamp: timestamp)
    }

    /// The unit quaternion of a mount matrix that is a proper rotation (orthonormal, determinant
    /// +1), else `nil`.
    static func rotation(_ m: MountMatrix) -> Quaternion? {
        guard m.isOrthonormal, m.determinant > 0 else { return nil }
        let r = m.rows
        let trace = r[0].x + r[1].y + r[2].z
        let q: Quaternion
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2
            q = Quaternion(w: s / 4, x: (r[2].y - r[1].z) / s, y: (r[0].z - r[2].x) / s, z: (r[1].x - r[0].y) / s)
        } else if r[0].x > r[1].y && r[0].x > r[2].z {
            let s = (1 + r[0].x - r[1].y - r[2].z).squareRoot() * 2
            q = Quaternion(w: (r[2].y - r[1].z) / s, x: s / 4, y: (r[0].y + r[1].x) / s, z: (r[0].z + r[2].x) / s)
        } else if r[1].y > r[2].z {
            let s = (1 + r[1].y - r[0].x - r[2].z).squareRoot() * 2
            q = Quaternion(w: (r[0].z - r[2].x) / s, x: (r[0].y + r[1].x) / s, y: s / 4, z: (r[1].z + r[2].y) / s)
        } else {
            let s = (1 + r[2].z - r[0].x - r[1].y).squareRoot() * 2
            q = Quaternion(w: (r[1].x - r[0].y) / s, x: (r[0].z + r[2].x) / s, y: (r[1].z + r[2].y) / s, z: s / 4)
        }
        return q.normalized
    }
}
