/// A recording format that ``RecordingInput`` reads, detected from content or forced
/// (`coremotion … --input-format NAME`, where `NAME` is the raw value).
///
/// Every reader converts to Core Motion's units and signs (g with gravity pointing down, rad/s, µT)
/// and documents its time base: what ``RecordedSample/sample``'s `timestamp` means for it.
package enum RecordingFormat: String, CaseIterable, Sendable {
    /// The project's own CSV, as `coremotion stream --sensor raw|accelerometer|gyro|magnetometer` writes:
    /// `timestamp,sensor,x,y,z`, or `timestamp,x,y,z` after a `# sensor=NAME` comment. Core Motion units;
    /// `timestamp` in seconds since boot of the recording machine. See ``RawRecordingWriter``.
    case csv
    /// The project's own JSON Lines, one `{"timestamp":…,"sensor":…,"x":…,"y":…,"z":…}` per line:
    /// the same fields, units and time base as ``csv``.
    case jsonl
    /// BROAD's compact CSV (Laidig et al. 2021): accelerometer m/s² specific force (converted to g with
    /// Apple's sign), gyroscope rad/s, magnetometer µT; `timestamp` is row index / sampling rate, seconds
    /// since the first row. Only the IMU columns are read.
    case broad
    /// Sensor Logger (iOS and Android, K. Choi): the zip export, its unzipped folder, or the JSON export.
    /// `timestamp` is the `time` column (UTC epoch nanoseconds) in seconds since 1970.
    case sensorlogger
    /// SensorLog (iOS, B. Thomas) CSV: `timestamp` is each sensor's own `…Timestamp_sinceReboot`,
    /// seconds since the phone booted (Core Motion's own clock).
    case sensorlog
    /// phyphox CSV export (zip or folder): acceleration m/s² with Android's sign on both platforms
    /// (converted with phyphox's 9.81); `timestamp` is seconds since 1970 when `meta/time.csv` gives the
    /// start, else seconds since the experiment started.
    case phyphox
    /// HyperIMU (Android) CSV file: m/s² with Android's sign; `timestamp` is the epoch-milliseconds
    /// column in seconds since 1970.
    case hyperimu
}
