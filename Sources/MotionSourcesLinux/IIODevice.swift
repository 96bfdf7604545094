import MotionSources
import MotionFusion

/// One axis of an IIO sensor: where to read it and how to turn counts into SI units.
package struct IIOAxisChannel: Sendable, Hashable {
    /// The channel name without direction and suffix: `accel_x`, `anglvel_y`, `magn_z`.
    package var name: String
    /// The polled attribute: `…/in_accel_x_raw`, or `…/in_accel_x_input` for processed channels.
    package var valuePath: String
    /// `true` when ``valuePath`` is a processed `_input` attribute (already SI, scale 1, offset 0).
    package var processed: Bool
    /// Multiplier to SI units (m/s², rad/s, Gauss); the per-axis `in_accel_x_scale` wins over the shared `in_accel_scale`. Default 1.
    package var scale: Double
    /// Added to the raw count before scaling (`in_accel_offset`). Default 0.
    package var offset: Double
    /// Why ``scale`` is not what sysfs says, when it is not (a scale of 0 is treated as missing).
    package var scaleNote: String?
    /// The attribute ``scale`` was read from (`in_accel_x_scale` or `in_accel_scale`), re-read while
    /// polling so a range changed by another process is followed.
    package var scalePath: String?
    /// The buffer `scan_index`, when the channel can be captured through the buffer.
    package var scanIndex: Int?
    /// The buffer storage type, when the channel can be captured through the buffer.
    package var scanType: IIOScanType?
    /// `scan_elements/in_accel_x_en`, when present.
    package var enablePath: String?

    /// `(raw + offset) × scale`, in SI units.
    @inlinable
    package func siValue(raw: Int64) -> Double { (Double(raw) + offset) * scale }
}

/// A sensor (accelerometer, gyroscope or magnetometer) of one IIO device.
package struct IIOSensorChannels: Sendable, Hashable {
    /// Which Core Motion sensor this is.
    package var kind: SensorKind
    /// The IIO channel type: `accel`, `anglvel` or `magn`.
    package var iioType: String
    /// The x, y and z channels, in that order.
    package var axes: [IIOAxisChannel]
    /// The mount matrix as found (see ``mountMatrixSource``): for a kernel attribute or an override,
    /// chip axes → device axes; for udev's or the hwdb's `ACCEL_MOUNT_MATRIX`, chip axes → the
    /// gravity-vector axes iio-sensor-proxy expects. Shown by `coremotion sensors`; what samples go
    /// through is ``frame``.
    package var mountMatrix: MountMatrix
    /// Where ``mountMatrix`` came from: `override`, `udev ACCEL_MOUNT_MATRIX`, `hwdb ACCEL_MOUNT_MATRIX`,
    /// the sysfs attribute's name, or `none (identity)`.
    package var mountMatrixSource: String
    /// Chip axes (SI units) → Core Motion's axes and sign: ``mountMatrix`` with the driver's sign
    /// rule applied (see ``IIOUnits``). Samples go through this matrix, then ``unitFactor``.
    package var frame: MountMatrix
    /// How the driver signs acceleration (meaningful for the accelerometer).
    package var accelerationSign: IIOAccelerationSign
    /// The rates the driver offers.
    package var availableRates: IIOAvailableRates
    /// The sampling frequency attribute (`in_accel_sampling_frequency` or `sampling_frequency`), if any.
    package var rateAttribute: String?
    /// Its current value in Hz, if readable.
    package var currentRate: Double?
    /// `true` when the rate attribute can be written by this process.
    package var rateWritable: Bool

    /// SI units → Core Motion units: m/s² → g is `1/9.80665`, rad/s stays, Gauss → µT is `100`, kPa stays.
    package var unitFactor: Double {
        switch kind {
        case .accelerometer: return 1 / IIOUnits.standardGravity
        case .gyro: return 1
        case .magnetometer: return 100
        case .pressure: return 1  // kPa, as the IIO ABI gives it
        }
    }

    /// Converts three raw counts (x, y, z) into a Core Motion vector: scale and offset per axis,
    /// then ``frame`` (mount matrix and sign), then the unit change.
    @inlinable
    package func coreMotionValue(raw: (Int64, Int64, Int64)) -> Vector3 {
        coreMotionValue(si: Vector3(axes[0].siValue(raw: raw.0), axes[1].siValue(raw: raw.1), axes[2].siValue(raw: raw.2)))
    }

    /// Converts a chip-axes value in SI units into a Core Motion vector: ``frame``, then the unit change.
    /// A negated zero comes out as 0, not −0.
    @inlinable
    package func coreMotionValue(si chip: Vector3) -> Vector3 {
        frame.apply(chip) * unitFactor + .zero
    }
}

/// How a Linux IIO driver signs acceleration: the sign of the reading of a device lying face up at
/// rest, on the axis pointing up.
package enum IIOAccelerationSign: String, Sendable, Hashable {
    /// +1 g up: the *specific force* a MEMS chip measures (the reaction to gravity). Every chip driver
    /// passes its registers through unchanged (inv_mpu6050, bmi160, st_lsm6dsx, st_accel, bmc150,
    /// kxcjk-1013, mma8452, …), as Android does: face up reads z = +1 g. Core Motion's is the opposite.
    case specificForce = "specific force (+1 g up)"
    /// −1 g up: the *gravity vector*, as HID sensor hubs report by Windows' convention (Intel ISH,
    /// AMD SFH through `hid-sensor-accel-3d`) and as Core Motion does.
    case gravity = "gravity vector (−1 g up)"

    /// The driver family of an IIO device: HID sensor hubs (device `accel_3d`, `gyro_3d`, `magn_3d`,
    /// `gravity`, …, under a `HID-SENSOR-2000xx` platform device) report the gravity vector; every
    /// other driver is a chip driver.
    package init(name: String, parentModalias: String?, canonicalPath: String) {
        let hid = name.hasSuffix("_3d") || name == "gravity" || canonicalPath.contains("/HID-SENSOR-")
            || (parentModalias?.contains("HID-SENSOR-") ?? false)
        self = hid ? .gravity : .specificForce
    }

    /// `−1` for ``specificForce``, `+1` for ``gravity``: the factor that turns the device-axes
    /// reading into Core Motion's.
    package var factor: Double { self == .specificForce ? -1 : 1 }
}

/// Units and the sign convention of the IIO source.
///
/// ## Sign
/// The kernel does not define the sign of IIO acceleration, and its drivers differ. Measured in
/// Debian's kernel 6.1 under QEMU (`scripts/vm`): the `inv_mpu6050` driver on `i2c-stub` registers
/// holding +16384 on Z (+1 g at ±2 g, what the chip reads lying face up) reports `in_accel_z_raw`
/// = +16384; a HID sensor hub through `uhid` and `hid-sensor-accel-3d` reporting face up as Windows
/// does reports z < 0. So acceleration is converted per driver family (``IIOAccelerationSign``):
/// chip drivers report specific force and are **negated**; HID sensor hubs report the gravity vector
/// and are not. Core Motion reads a device lying face up as z ≈ −1 g and upright in portrait as
/// y ≈ −1 g.
///
/// Mount matrices come in two kinds:
/// - the kernel's (`in_accel_mount_matrix`, `in_mount_matrix`, `mount_matrix`, from the device tree
///   or ACPI) and this project's override (``LinuxDiscoveryOptions/mountMatrixOverrides``) are
///   rotations from chip axes to device axes; the accelerometer then takes its driver's sign, the
///   gyroscope and magnetometer take the rotation alone;
/// - udev's and the hwdb's `ACCEL_MOUNT_MATRIX` are tuned by users until iio-sensor-proxy, which
///   applies no sign, reads upright as y < 0: their x and y rows already hold the driver's sign.
///   They are used as they are, except the z row, which iio-sensor-proxy never looks at: its sign is
///   set by the handedness of the physical frame (determinant > 0 for gravity-vector drivers, < 0 for
///   specific-force drivers; `1, 0, 0; 0, -1, 0; 0, 0, 1` on a chip becomes `…; 0, 0, -1`). The
///   gyroscope and magnetometer of the same chip, when they follow that matrix, take the rotation it
///   implies (the matrix times the driver's factor). The real HID capture in the fixtures, (103, −919,
///   −385) counts, is a laptop lid upright and leaning back (y ≈ −0.91 g, z ≈ −0.38 g), as
///   iio-sensor-proxy's own test calls it.
///
/// Gyroscope: rad/s, right-handed about the same axes. Magnetometer: IIO reports Gauss; ×100 gives µT.
package enum IIOUnits {
    /// Standard gravity, m/s² per g.
    package static let standardGravity = 9.80665

    /// The matrix that turns a sensor's chip-axes SI value into Core Motion's axes and sign (see
    /// ``IIOUnits``): `matrix` as found, whether it is an `ACCEL_MOUNT_MATRIX` from udev or the hwdb
    /// (`gravityTuned`), and the driver's acceleration sign.
    package static func frame(kind: SensorKind, matrix: MountMatrix, gravityTuned: Bool, sign: IIOAccelerationSign) -> MountMatrix {
        let s = sign.factor
        guard gravityTuned else {
            return kind == .accelerometer ? matrix.scaled(by: s) : matrix
        }
        // x and y rows carry the sign already; the z row takes the sign the frame's handedness asks for.
        var accel = matrix
        if (matrix.determinant > 0) != (s > 0) { accel.rows[2] = accel.rows[2] * -1 }
        return kind == .accelerometer ? accel : accel.scaled(by: s)
    }
}

/// Whether an IIO device can stream through its buffer (`/dev/iio:deviceN`), and if not, why.
package enum IIOBufferAccess: Sendable, Hashable {
    /// The buffer can be configured and read.
    case available
    /// The driver has no buffer, or the channels lack scan elements.
    case unsupported(String)
    /// The buffer exists but this process may not use it; the text names the file and the fix.
    case permissionDenied(String)
}

/// One IIO device (`/sys/bus/iio/devices/iio:deviceN`) with the motion sensors it carries.
package struct IIODeviceDescription: Sendable, Hashable {
    /// `iio:device0`.
    package var id: String
    /// The sysfs directory.
    package var sysfsPath: String
    /// The character device (`<dev root>/iio:device0`).
    package var devicePath: String
    /// The `name` attribute (`accel_3d`, `mpu6050`, …).
    package var name: String
    /// The `label` attribute (`accel-display`, …), if any.
    package var label: String?
    /// The resolved parent device directory, used to group the devices of one board.
    package var parentPath: String?
    /// The parent's `modalias`.
    package var parentModalias: String?
    /// The sensors found, keyed by kind.
    package var sensors: [SensorKind: IIOSensorChannels]
    /// The timestamp scan element, if any.
    package var timestampScan: (index: Int, type: IIOScanType, enablePath: String)?
    /// Buffered access.
    package var bufferAccess: IIOBufferAccess
    /// `current_timestamp_clock`'s value (`realtime`, `monotonic`, …), if the attribute exists.
    package var timestampClock: String?
    /// Where the sensor sits (`display` or `base` on a 2-in-1), from udev's or the hwdb's
    /// `ACCEL_LOCATION` or the `accel-*` label; `nil` when unknown (udev then assumes `display`).
    package var location: String?

    package static func == (a: Self, b: Self) -> Bool { a.id == b.id && a.sysfsPath == b.sysfsPath && a.sensors == b.sensors }
    package func hash(into h: inout Hasher) { h.combine(id); h.combine(sysfsPath) }
}
