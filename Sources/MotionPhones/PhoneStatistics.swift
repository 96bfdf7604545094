import MotionSources

/// What a phone source has seen so far (``PhoneSource/statistics``).
package struct PhoneStatistics: Sendable, Hashable {
    /// Per sensor: readings accepted and the host times of the first and last one.
    package struct SensorCount: Sendable, Hashable {
        /// Readings accepted.
        package var count = 0
        /// Host time (s since boot) of the first accepted reading.
        package var first = 0.0
        /// Host time of the last accepted reading.
        package var last = 0.0
        /// Phone time (s, the phone's clock) of the first and last accepted reading, when they carry one.
        package var firstPhone: Double?
        package var lastPhone: Double?
        /// Readings accepted before ``firstPhone`` (a phone clock step starts the phone span afresh).
        package var countBeforeFirstPhone = 0
        /// The measured rate in Hz (`nil` with fewer than two readings): from the phone's own timestamps
        /// when the readings carry them (the phone's sampling, untouched by network delays and by the
        /// clock mapping settling), else from host times.
        package var rate: Double? {
            guard count > 1 else { return nil }
            if let a = firstPhone, let b = lastPhone, b > a, count - countBeforeFirstPhone > 1 {
                return Double(count - countBeforeFirstPhone - 1) / (b - a)
            }
            return last > first ? Double(count - 1) / (last - first) : nil
        }
    }

    /// Per-sensor counts.
    package var sensors: [SensorKind: SensorCount] = [:]
    /// Messages (requests, datagrams, lines, objects, frames) received.
    package var messages = 0
    /// Messages or parts of messages that did not decode.
    package var malformed = 0
    /// Messages dropped for exceeding a size cap.
    package var oversized = 0
    /// Entries sent without a value (phyphox's `null` before a buffer has filled): normal, not malformed.
    package var empty = 0
    /// Readings dropped because their phone time did not advance (repeated rows, late batches).
    package var stale = 0
    /// Times a phone clock stepped and its mapping restarted.
    package var clockResets = 0
    /// Times silence was reported.
    package var silences = 0
    /// Connections made (connecting sources) or accepted (listening ones).
    package var connections = 0
    /// The last peer heard from (address, and device id where the app sends one).
    package var peer: String?
    /// The phone's platform as far as its messages tell (Sensor Logger sends `accuracy` on Android only).
    package var platform: String?
}
