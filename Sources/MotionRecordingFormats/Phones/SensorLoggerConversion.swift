import MotionFusion

/// Sensor Logger's units and signs, one set of rules for its exports (``SensorLoggerReader``) and its
/// live HTTP and MQTT push (``SensorLoggerPushConverter``): the same reading gives the same Core
/// Motion value on both paths.
///
/// | stream | ``SensorLoggerConvention/apple`` (iOS, not standardised) | ``SensorLoggerConvention/standardised`` (Android; iOS standardised) |
/// |---|---|---|
/// | `accelerometeruncalibrated` | g, Apple's sign: unchanged | m/s², Android's sign: `−v / 9.80665` |
/// | `totalacceleration`, `accelerometer` + `gravity`, `gravity` | m/s², Apple's sign: `v / 9.80665` | `−v / 9.80665` |
/// | gyroscope, magnetometer | unchanged | unchanged |
extension SensorLoggerConvention {
    /// Raw acceleration (`accelerometeruncalibrated`, `AccelerometerUncalibrated.csv`) in Core Motion's g.
    package func rawAcceleration(_ v: Vector3) -> Vector3 {
        self == .apple ? v : PhoneUnits.androidAcceleration(v)
    }

    /// Acceleration in m/s² (`totalacceleration`, `accelerometer` + `gravity`, `gravity`) in Core Motion's g.
    package func acceleration(metresPerSecondSquared v: Vector3) -> Vector3 {
        self == .apple ? PhoneUnits.appleAcceleration(metresPerSecondSquared: v) : PhoneUnits.androidAcceleration(v)
    }

    /// The convention the raw acceleration's size tells, when nothing says it: raw acceleration is in
    /// g only on an iPhone that does not standardise, and in m/s² otherwise, so the median magnitude
    /// of a phone's first readings (about 1 or about 9.8 for a phone held or lying still) tells which:
    /// below 4, ``apple``; else ``standardised``. `nil` without a finite, non-zero magnitude.
    package static func inferred(rawMagnitudes: [Double]) -> SensorLoggerConvention? {
        var m = rawMagnitudes.filter { $0.isFinite && $0 > 0 }
        guard !m.isEmpty else { return nil }
        m.sort()
        return m[m.count / 2] < 4 ? .apple : .standardised
    }

    /// How many raw readings ``inferred(rawMagnitudes:)`` looks at, at most (the first 50).
    package static let inferenceReadings = 50
}
