import MotionSources
import MotionFusion

/// The two register maps of ST's accelerometer-and-gyroscope chips this library drives.
///
/// - ``lsm6dsx``: the LSM6DS3/LSM6DS3H, LSM6DSL/LSM6DSM/LSM6DS3TR-C, LSM6DSR and LSM6DSO/LSM6DST
///   (datasheets DocID026899, DocID030637, DS12499, DS12952): `WHO_AM_I` 0x0F, `CTRL1_XL` 0x10
///   (ODR_XL bits 7:4, FS_XL bits 3:2), `CTRL2_G` 0x11 (ODR_G bits 7:4, FS_G bits 3:2), `CTRL3_C`
///   0x12 (BDU bit 6, IF_INC bit 2), gyroscope `OUTX_L_G` 0x22…0x27 then accelerometer `OUTX_L_XL`
///   0x28…0x2D, signed little-endian 16-bit words.
/// - ``lsm9ds1``: the LSM9DS1's accelerometer and gyroscope (datasheet DocID025715): `WHO_AM_I`
///   0x0F = 0x68, `CTRL_REG1_G` 0x10 (ODR_G bits 7:5, FS_G bits 4:3), `CTRL_REG6_XL` 0x20 (ODR_XL
///   bits 7:5, FS_XL bits 4:3), `CTRL_REG8` 0x22 (BDU bit 6, IF_ADD_INC bit 2), gyroscope
///   `OUT_X_L_G` 0x18…0x1D, accelerometer `OUT_X_L_XL` 0x28…0x2D, little-endian. With the gyroscope
///   on, both run at the gyroscope's rate.
///
/// Both chips' axes are right-handed and shared by the accelerometer and the gyroscope (datasheets'
/// "Pin indicator and axes" figures), so a sample needs no axis swap, only the sign rule.
package struct LSM6DSMap: Sendable, Hashable {
    /// Which map.
    package enum Kind: Sendable, Hashable {
        /// LSM6DS3, LSM6DSL, LSM6DSR, LSM6DSO, LSM6DST.
        case lsm6dsx
        /// LSM9DS1 accelerometer and gyroscope.
        case lsm9ds1
    }
    /// Which map.
    package let kind: Kind

    /// LSM6DS3, LSM6DSL, LSM6DSR, LSM6DSO, LSM6DST.
    package static let lsm6dsx = LSM6DSMap(kind: .lsm6dsx)
    /// LSM9DS1 accelerometer and gyroscope.
    package static let lsm9ds1 = LSM6DSMap(kind: .lsm9ds1)

    /// `WHO_AM_I`.
    static let whoAmI: UInt8 = 0x0F

    /// The `WHO_AM_I` values of the chips of this map.
    package var whoAmIValues: [UInt8] { kind == .lsm6dsx ? [0x69, 0x6A, 0x6B, 0x6C, 0x6D] : [0x68] }

    /// The output data rates (Hz) and their ODR codes, slowest first: 12.5…833 Hz for the LSM6DSx
    /// (faster ones exist; polling them is pointless), 14.9…952 Hz for the LSM9DS1's gyroscope.
    package var rates: [(hz: Double, code: UInt8)] {
        kind == .lsm6dsx ? [(12.5, 1), (26, 2), (52, 3), (104, 4), (208, 5), (416, 6), (833, 7)]
            : [(14.9, 1), (59.5, 2), (119, 3), (238, 4), (476, 5), (952, 6)]
    }

    /// Accelerometer ranges (g) with their FS_XL code and sensitivity (mg per count). Both maps code
    /// ±2, ±16, ±4, ±8 g as 0, 1, 2, 3; the LSM9DS1's ±16 g is 0.732 mg per count, the LSM6DSx's 0.488.
    package var accelerometerRanges: [(g: Int, code: UInt8, mgPerCount: Double)] {
        [(2, 0, 0.061), (4, 2, 0.122), (8, 3, 0.244), (16, 1, kind == .lsm6dsx ? 0.488 : 0.732)]
    }

    /// Gyroscope ranges (°/s) with their FS_G code and sensitivity (m°/s per count).
    package var gyroRanges: [(dps: Int, code: UInt8, mdpsPerCount: Double)] {
        kind == .lsm6dsx ? [(250, 0, 8.75), (500, 1, 17.5), (1000, 2, 35), (2000, 3, 70)]
            : [(245, 0, 8.75), (500, 1, 17.5), (2000, 3, 70)]
    }

    /// The first register of one sample read and its length: gyroscope then accelerometer.
    package var dataRead: (register: UInt8, count: Int) { kind == .lsm6dsx ? (0x22, 12) : (0x18, 22) }
    /// Offsets of the gyroscope's and the accelerometer's X low byte in the sample read.
    var gyroOffset: Int { 0 }
    var accelOffset: Int { kind == .lsm6dsx ? 6 : 16 }

    /// `CTRL3_C` / `CTRL_REG8`: block data update (a sample's low and high bytes from the same
    /// output) and address auto-increment (the reset value), nothing else.
    static let control3 = (register: UInt8(0x12), lsm9ds1Register: UInt8(0x22), value: UInt8(0x44))
}

/// How an LSM6DSx or LSM9DS1 is set up: full-scale ranges and the output data rate.
package struct LSM6DSConfiguration: Sendable, Hashable {
    /// The register map.
    package let map: LSM6DSMap
    /// Accelerometer full scale in g: 2, 4, 8 or 16. Default 2, the chips' reset value, which the
    /// kernel's `st_lsm6dsx` also assumes.
    package let accelerometerRange: Int
    /// Gyroscope full scale in °/s: 250 (245 on the LSM9DS1), 500, 1000 (not the LSM9DS1) or 2000.
    /// Default the lowest, the chips' reset value, which the kernel's `st_lsm6dsx` assumes at probe
    /// (its first `fs_avl` gain), so `i2c:` and `iio:` read a chip alike.
    package let gyroRange: Int
    /// The output data rate, Hz: the slowest the chip offers at or above the demand.
    package let actualRate: Double
    let odrCode: UInt8

    /// Creates a configuration (`gyroRange` `nil`: the default); ranges the chip lacks fall back to
    /// the defaults; the rate is the
    /// slowest output data rate at or above `rate` (the fastest above them all; 104 or 119 Hz for
    /// a rate that is not a positive number).
    package init(map: LSM6DSMap, accelerometerRange: Int = 2, gyroRange: Int? = nil, rate: Double = 100) {
        self.map = map
        self.accelerometerRange = map.accelerometerRanges.contains { $0.g == accelerometerRange } ? accelerometerRange : 2
        self.gyroRange = map.gyroRanges.first { $0.dps == gyroRange }?.dps ?? map.gyroRanges[0].dps
        let want = rate.isFinite && rate > 0 ? rate : 100
        let pick = map.rates.first { $0.hz >= want - 1e-9 } ?? map.rates[map.rates.count - 1]
        actualRate = pick.hz
        odrCode = pick.code
    }

    /// g per count at the accelerometer's range (datasheet sensitivity).
    package var accelerometerGPerCount: Double {
        (map.accelerometerRanges.first { $0.g == accelerometerRange }?.mgPerCount ?? 0.061) / 1000
    }

    /// °/s per count at the gyroscope's range (datasheet sensitivity).
    package var gyroDegreesPerCount: Double {
        (map.gyroRanges.first { $0.dps == gyroRange }?.mdpsPerCount ?? 8.75) / 1000
    }

    /// The configuration writes, in order, with the bits of each that the read-back compares.
    package var writes: [(register: UInt8, value: UInt8, mask: UInt8)] {
        let fsXL = map.accelerometerRanges.first { $0.g == accelerometerRange }?.code ?? 0
        let fsG = map.gyroRanges.first { $0.dps == gyroRange }?.code ?? 0
        switch map.kind {
        case .lsm6dsx:
            return [(LSM6DSMap.control3.register, LSM6DSMap.control3.value, 0x44),
                    (0x10, odrCode << 4 | fsXL << 2, 0xFC),   // CTRL1_XL: ODR_XL, FS_XL
                    (0x11, odrCode << 4 | fsG << 2, 0xFE)]    // CTRL2_G: ODR_G, FS_G, FS_125 (0)
        case .lsm9ds1:
            return [(LSM6DSMap.control3.lsm9ds1Register, LSM6DSMap.control3.value, 0x44),
                    (0x20, odrCode << 5 | fsXL << 3, 0xF8),   // CTRL_REG6_XL: ODR_XL, FS_XL
                    (0x10, odrCode << 5 | fsG << 3, 0xF8)]    // CTRL_REG1_G: ODR_G, FS_G (both run at it)
        }
    }
}

/// The user-space driver of an ST LSM6DSx or of an LSM9DS1's accelerometer and gyroscope
/// (``LSM6DSMap``), as a state machine (``I2CChipDriver``).
///
/// Sequence: read `WHO_AM_I` (0x0F) → write the control registers (block data update, ranges, data
/// rate) → read each back → ``I2CDriverAction/streaming``; then each ``dataRead`` (gyroscope and
/// accelerometer in one read) decodes into one accelerometer and one gyroscope sample. No software
/// reset: its bit clears itself, and waiting for that could hang on a bus (or `i2c-stub`) where it
/// never does.
///
/// Units and signs as for the MPU family and the kernel's `st_lsm6dsx`: the accelerometer reads
/// +1 g on Z face up (specific force), Core Motion −1 g, so the mount matrix times −1; the gyroscope
/// (counter-clockwise positive, right-handed) through the matrix alone, in rad/s.
package struct LSM6DSDriver: I2CChipDriver {
    private enum Phase: Sendable, Hashable { case identifying, verifying(Int), streaming, failed }

    /// The register map.
    package let map: LSM6DSMap
    /// The chip's address and bus, for messages.
    package let address: UInt8
    package let busPath: String
    /// Ranges and rate.
    package let configuration: LSM6DSConfiguration
    /// The chip identified, once `WHO_AM_I` was read.
    package private(set) var chip: I2CChip?
    private var phase = Phase.identifying
    private let accelFrame: MountMatrix
    private let gyroFrame: MountMatrix

    /// Creates the driver of the chip at `address` on `busPath`; `mountMatrix` maps chip axes to
    /// device axes (the kernel's `mount_matrix` sense; default identity).
    package init(map: LSM6DSMap, address: UInt8, busPath: String, configuration: LSM6DSConfiguration? = nil,
                 mountMatrix: MountMatrix = .identity) {
        self.map = map
        self.address = address
        self.busPath = busPath
        self.configuration = configuration.flatMap { $0.map == map ? $0 : nil } ?? LSM6DSConfiguration(map: map)
        accelFrame = IIOUnits.frame(kind: .accelerometer, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
        gyroFrame = IIOUnits.frame(kind: .gyro, matrix: mountMatrix, gravityTuned: false, sign: .specificForce)
    }

    package var isStreaming: Bool { phase == .streaming }
    package var dataRead: (register: UInt8, count: Int) { map.dataRead }
    package var actualRate: Double { configuration.actualRate }

    private var place: String { "\(I2CAddress.hex(address)) on \(busPath)" }
    private var name: String { chip?.displayName ?? (map.kind == .lsm9ds1 ? "LSM9DS1" : "LSM6DSx") }

    package mutating func start() -> [I2CDriverAction] {
        phase = .identifying
        return [.read(register: LSM6DSMap.whoAmI, count: 1)]
    }

    package mutating func received(_ bytes: [UInt8], at timestamp: Double) -> [I2CDriverAction] {
        let writes = configuration.writes
        switch phase {
        case .identifying:
            guard let id = bytes.first else { return fail(SourceError(.io, "no WHO_AM_I from \(place)", path: busPath)) }
            guard map.whoAmIValues.contains(id), let c = I2CChip(register: LSM6DSMap.whoAmI, value: id, address: 0x6A) else {
                let what = map.kind == .lsm6dsx ? "an LSM6DSx (0x69, 0x6a, 0x6b, 0x6c or 0x6d)" : "an LSM9DS1's accelerometer and gyroscope (0x68)"
                return fail(SourceError(.unavailable, "\(place) answers WHO_AM_I (0x0f) \(I2CAddress.hex(id)): not \(what)", path: busPath))
            }
            chip = c
            phase = .verifying(0)
            return writes.map { .write(register: $0.register, value: $0.value) } + writes.map { .read(register: $0.register, count: 1) }
        case .verifying(let i):
            guard i < writes.count, let got = bytes.first else { return fail(SourceError(.io, "no read-back from \(place)", path: busPath)) }
            let w = writes[i]
            if got & w.mask != w.value & w.mask {
                return fail(SourceError(.io, "the \(name) at \(place) did not keep its configuration (wrote \(I2CAddress.hex(w.value)) to \(I2CAddress.hex(w.register)), read back \(I2CAddress.hex(got)))", path: busPath))
            }
            if i + 1 < writes.count {
                phase = .verifying(i + 1)
                return []
            }
            phase = .streaming
            return [.streaming]
        case .streaming:
            guard bytes.count == map.dataRead.count else {
                return fail(SourceError(.malformedInput, "\(bytes.count) bytes instead of \(map.dataRead.count) from \(place)", path: busPath))
            }
            return [.deliver(decode(bytes, at: timestamp))]
        case .failed:
            return []
        }
    }

    package mutating func transferFailed(_ error: LinuxIOError) -> [I2CDriverAction] {
        fail(i2cTransferError(error, chip: name, place: place, busPath: busPath))
    }

    private mutating func fail(_ error: SourceError) -> [I2CDriverAction] {
        phase = .failed
        return [.fail(error)]
    }

    /// Decodes one ``dataRead`` into an accelerometer and a gyroscope sample (`bytes` must hold
    /// ``LSM6DSMap/dataRead`` bytes).
    package func decode(_ b: [UInt8], at timestamp: Double) -> [RawSample] {
        let a = map.accelOffset, g = map.gyroOffset
        let accel = Vector3(int16LE(b, a), int16LE(b, a + 2), int16LE(b, a + 4)) * configuration.accelerometerGPerCount
        let gyro = Vector3(int16LE(b, g), int16LE(b, g + 2), int16LE(b, g + 4)) * (configuration.gyroDegreesPerCount * .pi / 180)
        return [RawSample(sensor: .accelerometer, timestamp: timestamp, value: accelFrame.apply(accel) + .zero),
                RawSample(sensor: .gyro, timestamp: timestamp, value: gyroFrame.apply(gyro) + .zero)]
    }
}
