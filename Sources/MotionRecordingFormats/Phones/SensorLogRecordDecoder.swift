import MotionFusion
import MotionSources

/// SensorLog's records as Core Motion samples: the one set of rules for its CSV files
/// (``SensorLogStream``) and its live TCP stream (`MotionPhones`' `SensorLogDecoder`), so a record
/// gives the same samples on both paths.
///
/// A record is a flat set of fields named as SensorLog's CSV header without the unit (JSON keys are
/// those names). SensorLog writes Core Motion's values unchanged, so no conversion is needed:
/// - accelerometer: `accelerometerTimestamp_sinceReboot` and `accelerometerAcceleration{X,Y,Z}` (g);
///   when the record has no such fields, `motionUserAcceleration + motionGravity` (g) at
///   `motionTimestamp_sinceReboot`;
/// - gyroscope: `gyroTimestamp_sinceReboot` and `gyroRotation{X,Y,Z}` (rad/s, raw); without them,
///   `motionRotationRate{X,Y,Z}` (bias-corrected) at the motion time;
/// - magnetometer: `magnetometerTimestamp_sinceReboot` and `magnetometer{X,Y,Z}` (µT, raw); without
///   them, `motionMagneticField{X,Y,Z}` (calibrated) at the motion time, skipped while
///   `motionMagneticFieldCalibrationAccuracy` is −1 or the field is all zero (uncalibrated).
///
/// Which fields a sensor comes from is decided by the fields the record *has* (a CSV header's
/// columns, a JSON object's keys), not by whether they hold a value at this tick: an empty or `null`
/// raw field means "no new value", never "use the motion fields instead".
///
/// Rows repeat each sensor's latest value (sample and hold): a sample is emitted only when its own
/// timestamp advances past the last one emitted for its sensor.
///
/// ## Threading
/// A value type: use it from one thread at a time.
package struct SensorLogRecordDecoder: Sendable {
    private var last: [SensorKind: Double] = [:]

    /// Creates a decoder.
    package init() {}

    /// Every field the decoder may read (without units).
    package static let fields: [String] = [
        "accelerometerTimestamp_sinceReboot", "accelerometerAccelerationX", "accelerometerAccelerationY", "accelerometerAccelerationZ",
        "gyroTimestamp_sinceReboot", "gyroRotationX", "gyroRotationY", "gyroRotationZ",
        "magnetometerTimestamp_sinceReboot", "magnetometerX", "magnetometerY", "magnetometerZ",
        "motionTimestamp_sinceReboot",
        "motionUserAccelerationX", "motionUserAccelerationY", "motionUserAccelerationZ",
        "motionGravityX", "motionGravityY", "motionGravityZ",
        "motionRotationRateX", "motionRotationRateY", "motionRotationRateZ",
        "motionMagneticFieldX", "motionMagneticFieldY", "motionMagneticFieldZ", "motionMagneticFieldCalibrationAccuracy",
    ]

    /// Where each sensor comes from in records with the fields `has`.
    package struct Sources: Sendable, Hashable {
        /// The accelerometer: raw (`accelerometerAcceleration`), from device motion (user + gravity), or none.
        package var accelerometer: Origin?
        /// The gyroscope: raw (`gyroRotation`), from device motion (`motionRotationRate`), or none.
        package var gyro: Origin?
        /// The magnetometer: raw (`magnetometer`), from device motion (`motionMagneticField`), or none.
        package var magnetometer: Origin?

        /// Whether any sensor is available.
        package var isEmpty: Bool { accelerometer == nil && gyro == nil && magnetometer == nil }
    }

    /// The fields a sensor is read from.
    package enum Origin: Sendable, Hashable {
        /// The sensor's own fields and timestamp.
        case raw
        /// The device-motion fields at `motionTimestamp_sinceReboot`.
        case motion
    }

    /// Where each sensor comes from, given which fields exist.
    package static func sources(has: (String) -> Bool) -> Sources {
        func all(_ names: String...) -> Bool { names.allSatisfy(has) }
        let motion = has("motionTimestamp_sinceReboot")
        var s = Sources()
        if all("accelerometerTimestamp_sinceReboot", "accelerometerAccelerationX", "accelerometerAccelerationY", "accelerometerAccelerationZ") {
            s.accelerometer = .raw
        } else if motion, all("motionUserAccelerationX", "motionUserAccelerationY", "motionUserAccelerationZ", "motionGravityX", "motionGravityY", "motionGravityZ") {
            s.accelerometer = .motion
        }
        if all("gyroTimestamp_sinceReboot", "gyroRotationX", "gyroRotationY", "gyroRotationZ") {
            s.gyro = .raw
        } else if motion, all("motionRotationRateX", "motionRotationRateY", "motionRotationRateZ") {
            s.gyro = .motion
        }
        if all("magnetometerTimestamp_sinceReboot", "magnetometerX", "magnetometerY", "magnetometerZ") {
            s.magnetometer = .raw
        } else if motion, all("motionMagneticFieldX", "motionMagneticFieldY", "motionMagneticFieldZ") {
            s.magnetometer = .motion
        }
        return s
    }

    /// The samples of one record whose fields come from `sources`, in accelerometer, gyroscope,
    /// magnetometer order.
    /// - Parameters:
    ///   - sources: where each sensor comes from (``sources(has:)`` of the record's fields).
    ///   - value: a field's finite number, or `nil` when it has no value at this tick (empty, `null`).
    package mutating func samples(_ sources: Sources, value: (String) -> Double?) -> [RawSample] {
        var out: [RawSample] = []
        func vector(_ p: String) -> Vector3? {
            guard let x = value(p + "X"), let y = value(p + "Y"), let z = value(p + "Z") else { return nil }
            return Vector3(x, y, z)
        }
        func emit(_ sensor: SensorKind, _ t: Double?, _ v: Vector3?) {
            guard let t, let v, t > last[sensor] ?? -.infinity else { return }
            last[sensor] = t
            out.append(RawSample(sensor: sensor, timestamp: t, value: v))
        }
        let motionTime = value("motionTimestamp_sinceReboot")
        switch sources.accelerometer {
        case .raw: emit(.accelerometer, value("accelerometerTimestamp_sinceReboot"), vector("accelerometerAcceleration"))
        case .motion:
            if let u = vector("motionUserAcceleration"), let g = vector("motionGravity") { emit(.accelerometer, motionTime, u + g) }
        case nil: break
        }
        switch sources.gyro {
        case .raw: emit(.gyro, value("gyroTimestamp_sinceReboot"), vector("gyroRotation"))
        case .motion: emit(.gyro, motionTime, vector("motionRotationRate"))
        case nil: break
        }
        switch sources.magnetometer {
        case .raw: emit(.magnetometer, value("magnetometerTimestamp_sinceReboot"), vector("magnetometer"))
        case .motion:
            if let a = value("motionMagneticFieldCalibrationAccuracy"), a < 0 { break }
            guard let m = vector("motionMagneticField"), !(m.x == 0 && m.y == 0 && m.z == 0) else { break }
            emit(.magnetometer, motionTime, m)
        case nil: break
        }
        return out
    }
}
