import MotionFusion
import MotionSources

/// HyperIMU's rows as Core Motion samples: the one set of rules for its files (``HyperIMUStream``)
/// and its live UDP stream (`MotionPhones`' `HyperIMUDecoder`), so a row gives the same samples on
/// both paths. The framing (a file's header naming the columns, a live line's configured layout)
/// stays with each path; the values and time go through here.
///
/// - Acceleration is Android's (m/s², +g on z face up): negated and divided by 9.80665
///   (``PhoneUnits/androidAcceleration(_:gravity:)``); rotation rate (rad/s) and magnetic field (µT)
///   pass unchanged.
/// - Time: the row's timestamp in epoch milliseconds, as seconds since 1970 (``seconds(epochMilliseconds:)``).
/// - A row whose timestamp equals the row before it is a repeat (the app repeats rows at its
///   sampling time) and gives no sample.
///
/// ## Threading
/// A value type: use it from one thread at a time.
package struct HyperIMURowDecoder: Sendable {
    private var lastTime: Double?

    /// Creates a decoder.
    package init() {}

    /// A HyperIMU timestamp (epoch ms) in seconds since 1970.
    package static func seconds(epochMilliseconds ms: Double) -> Double { ms / 1000 }

    /// Whether a row at `time` is new (not a repeat of the row before it); remembers it.
    package mutating func isNew(time: Double?) -> Bool {
        guard let time else { return true }
        if time == lastTime { return false }
        lastTime = time
        return true
    }

    /// The Core Motion value of one sensor's three values as the app sends them.
    package static func value(_ sensor: SensorKind, _ x: Double, _ y: Double, _ z: Double) -> Vector3 {
        sensor == .accelerometer ? PhoneUnits.androidAcceleration(x, y, z) : Vector3(x, y, z)
    }
}
