import Foundation
import Logging
#if Recorder
import MotionRecorderStore
#endif
import MotionSources

/// Records the accelerometer in the background and reads the recordings back later.
///
/// Beyond Apple, it also records the gyroscope's rotation rate (``recordRotationRate(forDuration:)``,
/// ``rotationRateData(from:to:)``), which Apple delivers as `CMRecordedRotationRateData` through
/// SensorKit, absent on Linux, and the barometer's pressure (``recordPressure(forDuration:)``,
/// ``pressureData(from:to:)``), which Apple delivers as `CMRecordedPressureData` through SensorKit too.
///
/// ```swift
/// if CMSensorRecorder.isAccelerometerRecordingAvailable() {
///     CMSensorRecorder().recordAccelerometer(forDuration: 20 * 60)
/// }
/// // later, even from another CMSensorRecorder or another process:
/// let list = CMSensorRecorder().accelerometerData(from: start, to: end)
/// ```
///
/// ## On Linux
/// Samples are stored in a SQLite database: `COREMOTION_RECORDER_DATABASE` when set, else
/// `$XDG_DATA_HOME/coremotion/recordings.sqlite` (`~/.local/share/coremotion/recordings.sqlite`).
/// Every process using the same file sees the same recordings, and samples are kept 3 days, as on
/// Apple platforms. Recording runs on a background thread *of this process*, from the process's
/// default source (the one `CMMotionManager()` uses: `COREMOTION_SOURCE`, else the first motion
/// hardware): it ends when the duration is over or the process exits (what is buffered is written at
/// exit, unless the process is killed by a signal). To record independently of any
/// app, run `coremotion record` as the recording daemon (for example as a systemd user service); apps
/// then only query.
///
/// Apple's API has no error channel: when the database cannot be opened or written, this class logs
/// the error (swift-log, label `OpenCoreMotion.recorder`) and records nothing, and a query returns `nil`.
///
/// ## Threading
/// Every member may be called from any thread.
open class CMSensorRecorder: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The source recorded from, or `nil` when the process has none.
    let source: (any SensorSource)?
    /// The database file.
    let databasePath: String
    /// The barometer ``recordPressure(forDuration:)`` reads, when one was given; see ``barometer``.
    private let explicitBarometer: (any BarometerSource)?
    /// `true`: without ``explicitBarometer``, the process's default barometer is read.
    private let usesDefaultBarometer: Bool

    /// The barometer pressure is recorded from: the one given, or the process's default barometer
    /// (the one `CMAltimeter()` reads), resolved on first use; `nil` when there is none.
    var barometer: (any BarometerSource)? {
        explicitBarometer ?? (usesDefaultBarometer ? AltimeterSelection.defaultBarometer : nil)
    }

    static let logger = Logger(label: "OpenCoreMotion.recorder")

    /// A recorder over the process's default source and database.
    ///
    /// This is the designated initializer, as on Apple platforms: a subclass (a test's mock) calls `super.init()`.
    public override init() {
        source = SourceSelection.defaultSource
        databasePath = RecordingStore.defaultPath()
        explicitBarometer = nil
        usesDefaultBarometer = true
        super.init()
    }

    /// A recorder over `source` and the database file at `databasePath` (beyond Apple), for tests and
    /// tools: recordings of different paths are independent.
    ///
    /// - Parameters:
    ///   - source: where samples come from; its accelerometer is used.
    ///   - databasePath: the SQLite file; created with its folder when missing. Default: the
    ///     process's default database (see the class overview).
    public convenience init(source: any SensorSource, databasePath: String = RecordingStore.defaultPath()) {
        self.init(optionalSource: source, databasePath: databasePath)
    }

    /// A recorder over `source` and `barometer` and the database file at `databasePath` (beyond
    /// Apple): ``recordPressure(forDuration:)`` reads `barometer` rather than the process's default one.
    ///
    /// - Parameters:
    ///   - source: where motion samples come from.
    ///   - barometer: where pressure comes from.
    ///   - databasePath: the SQLite file. Default: the process's default database.
    public convenience init(
        source: any SensorSource, barometer: any BarometerSource, databasePath: String = RecordingStore.defaultPath()
    ) {
        self.init(optionalSource: source, databasePath: databasePath, barometer: barometer, usesDefaultBarometer: false)
    }

    /// A recorder over `optionalSource` and `databasePath`; pressure from `barometer`, else (with
    /// `usesDefaultBarometer`, the default) from the process's default barometer, else none.
    init(
        optionalSource: (any SensorSource)?, databasePath: String,
        barometer: (any BarometerSource)? = nil, usesDefaultBarometer: Bool = true
    ) {
        self.source = optionalSource
        self.databasePath = databasePath
        explicitBarometer = barometer
        self.usesDefaultBarometer = usesDefaultBarometer
        super.init()
    }

    /// `true` when the process's default source has an accelerometer (see the class overview).
    open class func isAccelerometerRecordingAvailable() -> Bool {
        canRecord(from: SourceSelection.defaultSource)
    }

    /// `true` when the process's default source has a gyroscope whose rotation rate
    /// ``recordRotationRate(forDuration:)`` can record (beyond Apple; see the class overview).
    open class func isRotationRateRecordingAvailable() -> Bool {
        canRecordRotationRate(from: SourceSelection.defaultSource)
    }

    /// `true` when the process has a default barometer (the one `CMAltimeter()` reads: see
    /// ``CMAltimeter``), whose pressure ``recordPressure(forDuration:)`` can record (beyond Apple; see
    /// the class overview).
    open class func isPressureRecordingAvailable() -> Bool {
        canRecordPressure(from: AltimeterSelection.defaultBarometer)
    }

    /// Whether there is a barometer to record.
    static func canRecordPressure(from barometer: (any BarometerSource)?) -> Bool {
        barometer != nil
    }

    /// Whether `source` has an accelerometer to record.
    static func canRecord(from source: (any SensorSource)?) -> Bool {
        source?.info.sensors[.accelerometer] != nil
    }

    /// Whether `source` has a gyroscope to record.
    static func canRecordRotationRate(from source: (any SensorSource)?) -> Bool {
        source?.info.sensors[.gyro] != nil
    }

    /// The status ``authorizationStatus()`` reports for `source`.
    static func authorizationStatus(for source: (any SensorSource)?) -> CMAuthorizationStatus {
        canRecord(from: source) || canRecordRotationRate(from: source) ? .authorized : .restricted
    }

    /// ``CMAuthorizationStatus/authorized`` when the recorder can record something (an accelerometer
    /// or a gyroscope), else ``CMAuthorizationStatus/restricted``. It covers every kind this recorder
    /// records, as Apple's single Motion & Fitness permission does; whether a given sensor is there is
    /// ``isAccelerometerRecordingAvailable()`` and ``isRotationRateRecordingAvailable()``. Linux has no
    /// per-app motion permission: access to the sensors is decided by the device files' permissions,
    /// which the source reports when it starts.
    open class func authorizationStatus() -> CMAuthorizationStatus {
        authorizationStatus(for: SourceSelection.defaultSource)
    }

    /// Whether the app may record (Apple's older check, deprecated there since iOS 11 in favour of
    /// ``authorizationStatus()``): `true` when ``authorizationStatus()`` is ``CMAuthorizationStatus/authorized``.
    open class func isAuthorizedForRecording() -> Bool {
        authorizationStatus() == .authorized
    }

    /// Starts recording the accelerometer at 50 Hz for `duration` seconds, in the background.
    ///
    /// The duration is clamped to 12 hours; zero, negative or NaN durations record nothing. While a
    /// recording into the same database is running in this process, calling again extends it (to at
    /// least `duration` seconds from now) rather than starting a second one. Returns at once.
    ///
    /// - Parameter duration: seconds to record, counted from the first sample.
    open func recordAccelerometer(forDuration duration: TimeInterval) {
        guard AccelerometerRecording.clamp(duration) > 0 else { return }
        guard let source, source.info.sensors[.accelerometer] != nil else {
            Self.logger.error("CMSensorRecorder: no accelerometer to record")
            return
        }
        do {
            try ActiveRecordings.record(source: source, databasePath: databasePath, duration: duration)
        } catch {
            Self.logger.error("CMSensorRecorder: \(error.description)")
        }
    }

    /// The recorded samples whose wall-clock time lies in `(fromDate, toDate]`, oldest first; gaps in
    /// the recording are simply absent.
    ///
    /// A sample stamped exactly `toDate` is returned, one stamped exactly `fromDate` is not, as
    /// `CMSensorRecorder.h` states ("a time range (fromDate, toDate]"), so that consecutive queries
    /// `(a, b]`, `(b, c]` return each sample once. (Apple's web reference calls both parameters
    /// inclusive; the header is the more precise statement and is what is followed here.)
    ///
    /// - Returns: `nil` when the range is longer than 12 hours (Apple's limit), ends before it starts,
    ///   or the database cannot be read (the error is logged); otherwise a list, possibly empty.
    open func accelerometerData(from fromDate: Date, to toDate: Date) -> CMSensorDataList? {
        let span = toDate.timeIntervalSince(fromDate)
        guard span >= 0, span <= AccelerometerRecording.maximumDuration else { return nil }
        do {
            let store = try ActiveRecordings.store(at: databasePath)
            let samples = try store.samples(from: fromDate, to: toDate).filter { $0.reading.date > fromDate }.map { s in
                CMRecordedAccelerometerData(
                    identifier: s.identifier, startDate: s.reading.date,
                    acceleration: CMAcceleration(x: s.reading.x, y: s.reading.y, z: s.reading.z),
                    timestamp: s.reading.timestamp
                )
            }
            return CMSensorDataList(samples: samples)
        } catch {
            Self.logger.error("CMSensorRecorder: \(error.description)")
            return nil
        }
    }

    /// Starts recording the gyroscope's rotation rate at 50 Hz for `duration` seconds, in the
    /// background (beyond Apple, which delivers recorded rotation rate through SensorKit).
    ///
    /// The same rules as ``recordAccelerometer(forDuration:)``: the duration is clamped to 12 hours,
    /// zero, negative or NaN durations record nothing, a faster source is thinned to 50 Hz, and calling
    /// again while a rotation-rate recording into the same database runs extends it. The two
    /// recordings are independent. Readings with a NaN or infinite number are not stored. Returns at once.
    ///
    /// - Parameter duration: seconds to record, counted from the first sample.
    open func recordRotationRate(forDuration duration: TimeInterval) {
        guard AccelerometerRecording.clamp(duration) > 0 else { return }
        guard let source, Self.canRecordRotationRate(from: source) else {
            Self.logger.error("CMSensorRecorder: no gyroscope to record")
            return
        }
        do {
            try ActiveRecordings.record(source: source, databasePath: databasePath, duration: duration, sensor: .rotationRate)
        } catch {
            Self.logger.error("CMSensorRecorder: \(error.description)")
        }
    }

    /// The recorded rotation-rate samples (rad/s, device frame, as ``CMGyroData``) whose wall-clock
    /// time lies in `(fromDate, toDate]`, oldest first (beyond Apple; see
    /// ``recordRotationRate(forDuration:)``).
    ///
    /// The same range rules as ``accelerometerData(from:to:)``. The samples are read into memory
    /// (at 50 Hz, 12 hours is 2.16 million samples).
    ///
    /// - Returns: `nil` when the range is longer than 12 hours, ends before it starts, or the database
    ///   cannot be read (the error is logged); otherwise an array, possibly empty.
    open func rotationRateData(from fromDate: Date, to toDate: Date) -> [CMRecordedRotationRateData]? {
        let span = toDate.timeIntervalSince(fromDate)
        guard span >= 0, span <= AccelerometerRecording.maximumDuration else { return nil }
        do {
            let store = try ActiveRecordings.store(at: databasePath)
            return try store.samples(from: fromDate, to: toDate, sensor: .rotationRate).filter { $0.reading.date > fromDate }.map { s in
                CMRecordedRotationRateData(
                    startDate: s.reading.date,
                    rotationRate: CMRotationRate(x: s.reading.x, y: s.reading.y, z: s.reading.z),
                    timestamp: s.reading.timestamp
                )
            }
        } catch {
            Self.logger.error("CMSensorRecorder: \(error.description)")
            return nil
        }
    }

    /// Starts recording the barometer's pressure (and its temperature, when it reports one) once a
    /// second for `duration` seconds, in the background (beyond Apple, which delivers recorded
    /// pressure as `CMRecordedPressureData` through SensorKit, not through this class).
    ///
    /// The barometer is the one given to ``init(source:barometer:databasePath:)``, else the process's
    /// default one (see ``isPressureRecordingAvailable()``); without one, the error is logged and
    /// nothing is recorded. It is read at 1 Hz, the rate of SensorKit's ambient pressure (a barometer
    /// on a virtual clock, such as the simulator's in tests, is read one virtual second apart, as fast
    /// as it answers). The same rules as ``recordAccelerometer(forDuration:)`` otherwise: the duration
    /// is clamped to 12 hours and counted from the first reading, zero, negative or NaN durations
    /// record nothing, and calling again while a pressure recording into the same database runs
    /// extends it. A reading that is NaN or infinite is not stored; a read that fails (the device is
    /// gone) ends the recording, with one logged error. Returns at once.
    ///
    /// - Parameter duration: seconds to record, counted from the first reading.
    open func recordPressure(forDuration duration: TimeInterval) {
        guard AccelerometerRecording.clamp(duration) > 0 else { return }
        guard let barometer else {
            Self.logger.error("CMSensorRecorder: no barometer to record (set COREMOTION_BAROMETER or connect an IIO pressure sensor)")
            return
        }
        do {
            try ActiveRecordings.recordPressure(barometer: barometer, databasePath: databasePath, duration: duration)
        } catch {
            Self.logger.error("CMSensorRecorder: \(error.description)")
        }
    }

    /// The recorded pressure readings whose wall-clock time lies in `(fromDate, toDate]`, oldest first
    /// (beyond Apple; see ``recordPressure(forDuration:)``).
    ///
    /// Each ``CMRecordedPressureData`` has the pressure (kPa), the barometer's temperature in °C, or
    /// NaN °C when the barometer does not report one (the simulator reports a constant 20 °C; an IIO
    /// chip its `in_temp_input`), the batch ``CMRecordedPressureData/identifier`` it was written in,
    /// its wall-clock ``CMRecordedPressureData/startDate`` and its timestamp (seconds since boot). The
    /// same range rules as ``accelerometerData(from:to:)``.
    ///
    /// - Returns: `nil` when the range is longer than 12 hours, ends before it starts, or the database
    ///   cannot be read (the error is logged); otherwise an array, possibly empty.
    open func pressureData(from fromDate: Date, to toDate: Date) -> [CMRecordedPressureData]? {
        let span = toDate.timeIntervalSince(fromDate)
        guard span >= 0, span <= AccelerometerRecording.maximumDuration else { return nil }
        do {
            let store = try ActiveRecordings.store(at: databasePath)
            return try store.pressureSamples(from: fromDate, to: toDate).filter { $0.reading.date > fromDate }.map { s in
                CMRecordedPressureData(
                    identifier: s.identifier, startDate: s.reading.date,
                    pressure: Measurement(value: s.reading.pressure, unit: .kilopascals),
                    temperature: Measurement(value: s.reading.temperature ?? .nan, unit: .celsius),
                    timestamp: s.reading.timestamp
                )
            }
        } catch {
            Self.logger.error("CMSensorRecorder: \(error.description)")
            return nil
        }
    }

    /// `true` while a recording of `sensor` into this recorder's database runs in this process.
    func isRecording(_ sensor: RecordedSensor) -> Bool {
        ActiveRecordings.isRecording(databasePath: databasePath, sensor: sensor)
    }

    /// `true` while an accelerometer recording into this recorder's database runs in this process.
    var isRecording: Bool { isRecording(.accelerometer) }
}
