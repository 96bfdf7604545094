import MotionFusion
import MotionSources

/// SensorLog (iOS, Bernd Thomas) CSV.
///
/// The header is `name(unit)` per column (UTF-8 units such as `µT`), the separator `,`, `;` or tab
/// (decimal comma accepted with the last two). Each row is one logging tick holding every sensor's
/// latest value with that sensor's own since-boot timestamp; values are held (repeated) between
/// updates, so a sample is emitted only when its sensor's own timestamp advances.
///
/// Sensors: the accelerometer from `accelerometerTimestamp_sinceReboot(s)` and
/// `accelerometerAcceleration{X,Y,Z}(G)` (g, Apple's sign: kept as is), else from the device-motion
/// columns (`motionUserAcceleration + motionGravity`, g, at `motionTimestamp_sinceReboot`); the gyroscope
/// from `gyroTimestamp_sinceReboot(s)` and `gyroRotation{X,Y,Z}(rad/s)` (raw), else
/// `motionRotationRate` (bias-corrected); the magnetometer from `magnetometerTimestamp_sinceReboot(s)`
/// and `magnetometer{X,Y,Z}(µT)` (raw), else `motionMagneticField` (calibrated), skipping rows whose
/// calibration accuracy is −1 or whose field is all zero (uncalibrated). Empty or `null` cells are
/// "no value at this tick".
///
/// Time base: `timestamp` is the sensor's own `…Timestamp_sinceReboot`, seconds since the phone booted
/// (Core Motion's `CMLogItem.timestamp`). `loggingTime` is not used.
enum SensorLogReader {
    static func open(_ entry: Container.Entry) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        let stream = try SensorLogStream(reader: entry.reader())
        return ([stream], [
            "timeBase": "each sensor's own …Timestamp_sinceReboot: seconds since the phone booted",
            "conversion": stream.conversion,
        ])
    }
}

struct SensorLogStream: SampleStream {
    private let reader: ByteReader
    private var splitter: FieldSplitter
    private let decimalComma: Bool
    /// The decoder's fields present in the header, by column.
    private let columns: [(name: String, index: Int)]
    private let sources: SensorLogRecordDecoder.Sources
    private var decoder = SensorLogRecordDecoder()
    private var width = 0
    private var values: [String: Double] = [:]
    private var pending = PendingSamples()
    private var batch: [RecordedSample] = []
    private(set) var conversion = ""

    init(reader: ByteReader) throws(RecordingError) {
        self.reader = reader
        guard let header = try reader.nextDataLine() else { throw RecordingError("empty file: no header", path: reader.path) }
        let separator = detectSeparator(header)
        splitter = FieldSplitter(separator: separator)
        decimalComma = separator != 0x2C
        splitter.split(header)
        var byName: [String: (index: Int, unit: String)] = [:]
        for (i, r) in splitter.ranges.enumerated() {
            let (name, unit) = splitUnit(header.slice(r).text.trimming("\""))
            if byName[name.lowercased()] == nil { byName[name.lowercased()] = (i, unit) }
        }
        var columns: [(name: String, index: Int)] = []
        for name in SensorLogRecordDecoder.fields {
            guard let c = byName[name.lowercased()] else { continue }
            let unit = c.unit.lowercased()
            let expected: String
            let ok: Bool
            if name.contains("Timestamp") {
                (expected, ok) = ("seconds (s)", unit == "s" || unit.isEmpty)
            } else if name.hasPrefix("accelerometer") || name.hasPrefix("motionUserAcceleration") || name.hasPrefix("motionGravity") {
                (expected, ok) = ("G", unit == "g")
            } else if name.hasPrefix("gyro") || name.hasPrefix("motionRotationRate") {
                (expected, ok) = ("rad/s", unit == "rad/s")
            } else if name == "motionMagneticFieldCalibrationAccuracy" {
                (expected, ok) = ("", true)
            } else {
                (expected, ok) = ("µT", isMicrotesla(c.unit))
            }
            guard ok else { throw reader.error("column \(name) is in '\(c.unit)', expected \(expected)") }
            columns.append((name, c.index))
        }
        let present = Set(columns.map(\.name))
        sources = SensorLogRecordDecoder.sources(has: present.contains)
        guard !sources.isEmpty else {
            throw reader.error("no accelerometer, gyroscope or magnetometer columns with their …Timestamp_sinceReboot in this SensorLog header")
        }
        var notes: [String] = []
        switch sources.accelerometer {
        case .raw: notes.append("accelerometer: g, Apple's sign, unchanged")
        case .motion: notes.append("accelerometer: motionUserAcceleration + motionGravity, g")
        case nil: break
        }
        switch sources.gyro {
        case .raw: notes.append("gyroscope: rad/s, unchanged")
        case .motion: notes.append("gyroscope: motionRotationRate (bias-corrected), rad/s")
        case nil: break
        }
        switch sources.magnetometer {
        case .raw: notes.append("magnetometer: µT, unchanged")
        case .motion: notes.append("magnetometer: motionMagneticField (calibrated), µT, rows with accuracy −1 or an all-zero field skipped")
        case nil: break
        }
        self.columns = columns
        width = (columns.map(\.index).max() ?? 0) + 1
        conversion = notes.joined(separator: "; ")
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        while true {
            if let s = pending.pop() { return s }
            guard let line = try reader.nextDataLine() else { return nil }
            splitter.split(line)
            let f = splitter.ranges
            guard f.count >= width else { throw reader.error("expected \(width) columns or more, found \(f.count)") }
            values.removeAll(keepingCapacity: true)
            for c in columns {
                let field = line.slice(f[c.index])
                if isMissing(field) { continue }
                values[c.name] = try reader.number(field, decimalComma: decimalComma)
            }
            let values = self.values
            for sample in decoder.samples(sources, value: { values[$0] }) {
                batch.append(RecordedSample(sample: sample, path: reader.path, line: reader.lineNumber))
            }
            pending.refill(&batch)
        }
    }
}
