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
    /// Chip axes → device axes.
    package var mountMatrix: MountMatrix
    /// Where ``mountMatrix`` came from: `override`, `udev ACCEL_MOUNT_MATRIX`, `hwdb ACCEL_MOUNT_MATRIX`,
    /// the sysfs attribute's name, or `none (identity)`.
    package var mountMatrixSource: String
    /// The rates the driver offers.
    package var availableRates: IIOAvailableRates
    /// The sampling frequency attribute (`in_accel_sampling_frequency` or `sampling_frequency`), if any.
    package var rateAttribute: String?
    /// Its current value in Hz, if readable.
    package var currentRate: Double?
    /// `true` when the rate attribute can be written by this process.
    package var rateWritable: Bool

    /// SI units → Core Motion units: m/s² → g is `1/9.80665`, rad/s stays, Gauss → µT is `100`.
    package var unitFactor: Double {
        switch kind {
        case .accelerometer: return 1 / IIOUnits.standardGravity
        case .gyro: return 1
        case .magnetometer: return 100
        }
    }

    /// Converts three raw counts (x, y, z) into a Core Motion vector: scale and offset per axis,
    /// then the mount matrix, then the unit change. No sign flip (see ``IIOUnits``).
    @inlinable
    package func coreMotionValue(raw: (Int64, Int64, Int64)) -> Vector3 {
        let chip = Vector3(axes[0].siValue(raw: raw.0), axes[1].siValue(raw: raw.1), axes[2].siValue(raw: raw.2))
        return mountMatrix.apply(chip) * unitFactor
    }
}

/// Units and the sign convention of the IIO source.
///
/// ## Sign
/// The kernel does not define the sign of IIO acceleration. Userspace (iio-sensor-proxy) and the
/// mount-matrix quirks in systemd's hwdb are tuned to one convention: once the mount matrix is
/// applied, a device held upright in portrait reads y < 0 — the *gravity vector* convention that
/// HID sensor hubs, Windows and iOS share. Core Motion uses the same one (face up reads z ≈ −1 g),
/// so acceleration maps as `value / 9.80665` g with **no negation**. The real HID capture in the
/// fixtures confirms it: (103, −919, −385) counts is a laptop lid upright and leaning back
/// (y ≈ −0.91 g, z ≈ −0.38 g). A chip that no quirk covers can be corrected with a per-device
/// override matrix (``LinuxDiscoveryOptions/mountMatrixOverrides``), like udev's `ACCEL_MOUNT_MATRIX`.
///
/// Gyroscope: rad/s, right-handed about the same axes. Magnetometer: IIO reports Gauss; ×100 gives µT.
package enum IIOUnits {
    /// Standard gravity, m/s² per g.
    package static let standardGravity = 9.80665
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
