import MotionFusion
import MotionSources

/// The project's own raw CSV (``RecordingFormat/csv``): one stream per file, in file order.
///
/// The header names the columns (any order, case-insensitive): `timestamp`, `sensor` (optional), `x`,
/// `y`, `z`; other columns are ignored. Without a `sensor` column, rows belong to the sensor named by
/// the last `# sensor=NAME` comment before them (`coremotion stream` writes it right after the header).
/// Values are Core Motion's (g, rad/s, µT); `timestamp` is seconds since boot, kept as written. Rows of
/// the sensor `pressure` (kPa in `x`) are barometer readings, read by ``PressureTrack`` and skipped here.
struct RawCSVStream: SampleStream {
    private let reader: ByteReader
    private var splitter = FieldSplitter(separator: UInt8(ascii: ","))
    private var columns: (timestamp: Int, sensor: Int?, x: Int, y: Int, z: Int, count: Int)?
    private var commentSensor: SensorKind?

    init(reader: ByteReader) { self.reader = reader }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        while let line = try reader.nextLine() {
            if line.isBlank { continue }
            if line.isComment {
                if let s = try sensorComment(line) { commentSensor = s }
                continue
            }
            guard let c = columns else {
                try readHeader(line)
                continue
            }
            splitter.split(line)
            let f = splitter.ranges
            guard f.count >= c.count else {
                throw reader.error("expected \(c.count) columns, found \(f.count)")
            }
            let sensor: SensorKind
            if let si = c.sensor {
                // Barometer rows (`pressure`, kPa in x) belong to PressureTrack, not to the motion streams.
                if line.slice(f[si]).equals("pressure") { continue }
                sensor = try parseSensor(line.slice(f[si]))
            } else if let s = commentSensor {
                sensor = s
            } else {
                throw reader.error("a one-sensor recording needs a '# sensor=NAME' comment before its first row")
            }
            let t = try reader.number(line.slice(f[c.timestamp]))
            let x = try reader.number(line.slice(f[c.x]))
            let y = try reader.number(line.slice(f[c.y]))
            let z = try reader.number(line.slice(f[c.z]))
            return RecordedSample(sample: RawSample(sensor: sensor, timestamp: t, value: Vector3(x, y, z)),
                                  path: reader.path, line: reader.lineNumber)
        }
        if columns == nil {
            throw RecordingError("no header line: expected '\(RawRecordingWriter.multiSensorHeader)' or '\(RawRecordingWriter.singleSensorHeader)'",
                                 path: reader.path)
        }
        return nil
    }

    private func parseSensor(_ field: UnsafeBufferPointer<UInt8>) throws(RecordingError) -> SensorKind {
        if field.equals("accelerometer") { return .accelerometer }
        if field.equals("gyro") { return .gyro }
        if field.equals("magnetometer") { return .magnetometer }
        throw reader.error("unknown sensor '\(ByteReader.preview(field))': expected accelerometer, gyro or magnetometer")
    }

    private func sensorComment(_ line: UnsafeBufferPointer<UInt8>) throws(RecordingError) -> SensorKind? {
        let text = line.text
        guard let r = text.firstRange(of: "sensor=") else { return nil }
        let name = String(text[r.upperBound...].prefix { $0.isLetter || $0 == "-" })
        guard let kind = SensorKind(rawValue: name), kind.isMotion else {
            throw reader.error("unknown sensor '\(name)' in the comment: expected accelerometer, gyro or magnetometer")
        }
        return kind
    }

    private mutating func readHeader(_ line: UnsafeBufferPointer<UInt8>) throws(RecordingError) {
        splitter.split(line)
        let names = splitter.ranges.map { headerName(line.slice($0)) }
        if names.contains("q_w") || names.contains("gravity_x") {
            throw reader.error("this is a device-motion recording (attitude, gravity…), not raw sensor samples: record with '--sensor raw'")
        }
        func column(_ name: String) throws(RecordingError) -> Int {
            guard let i = names.firstIndex(of: name) else {
                throw reader.error("unrecognised header '\(ByteReader.preview(line))': expected '\(RawRecordingWriter.multiSensorHeader)' or '\(RawRecordingWriter.singleSensorHeader)'")
            }
            return i
        }
        let t = try column("timestamp"), x = try column("x"), y = try column("y"), z = try column("z")
        let s = names.firstIndex(of: "sensor")
        columns = (t, s, x, y, z, max(t, x, y, z, s ?? 0) + 1)
    }
}

/// The project's own JSON Lines (``RecordingFormat/jsonl``): one object per line with the fields of
/// the CSV (`timestamp`, `sensor`, `x`, `y`, `z`; numbers, or numbers in strings), other keys ignored.
/// `sensor` may be left out after a `# sensor=NAME` comment line, as in the CSV.
struct RawJSONLStream: SampleStream {
    private let reader: ByteReader
    private var object = FlatJSONObject()
    private var commentSensor: SensorKind?

    init(reader: ByteReader) { self.reader = reader }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        while let line = try reader.nextLine() {
            if line.isBlank { continue }
            if line.isComment {
                let text = line.text
                if let r = text.firstRange(of: "sensor=") {
                    let name = String(text[r.upperBound...].prefix { $0.isLetter })
                    guard let kind = SensorKind(rawValue: name), kind.isMotion else {
                        throw reader.error("unknown sensor '\(name)' in the comment: expected accelerometer, gyro or magnetometer")
                    }
                    commentSensor = kind
                }
                continue
            }
            if let problem = object.parse(line) { throw reader.error(problem) }
            var t: Double? = nil, x: Double? = nil, y: Double? = nil, z: Double? = nil
            var sensor = commentSensor
            for m in object.members {
                let key = line.slice(m.key)
                let value = line.slice(m.value)
                if key.equals("timestamp") { t = try reader.number(value) }
                else if key.equals("x") { x = try reader.number(value) }
                else if key.equals("y") { y = try reader.number(value) }
                else if key.equals("z") { z = try reader.number(value) }
                else if key.equals("sensor") {
                    if value.equals("accelerometer") { sensor = .accelerometer }
                    else if value.equals("gyro") { sensor = .gyro }
                    else if value.equals("magnetometer") { sensor = .magnetometer }
                    else { throw reader.error("unknown sensor '\(ByteReader.preview(value))': expected accelerometer, gyro or magnetometer") }
                }
            }
            guard let t else { throw reader.error("no \"timestamp\" in the object") }
            guard let x, let y, let z else { throw reader.error("the object needs \"x\", \"y\" and \"z\"") }
            guard let sensor else { throw reader.error("no \"sensor\" in the object and no '# sensor=NAME' comment before it") }
            return RecordedSample(sample: RawSample(sensor: sensor, timestamp: t, value: Vector3(x, y, z)),
                                  path: reader.path, line: reader.lineNumber)
        }
        return nil
    }
}

/// Writes the project's raw recordings (``RecordingFormat/csv`` and ``RecordingFormat/jsonl``), which
/// ``RecordingInput`` reads back bit for bit: numbers use Swift's shortest round-trip form with `.` as
/// the decimal separator, whatever the locale.
///
/// - CSV of all sensors: header ``multiSensorHeader``, rows `timestamp,sensor,x,y,z`.
/// - CSV of one sensor: header ``singleSensorHeader``, then `# sensor=NAME`, rows `timestamp,x,y,z`.
/// - JSON Lines: `{"timestamp":…,"sensor":"NAME","x":…,"y":…,"z":…}` per line, no header, the same
///   field names as the CSV.
///
/// A value type without shared state: safe to use from any thread. Formatting one line is O(1).
package struct RawRecordingWriter: Sendable {
    /// The text encoding of the rows.
    package enum Encoding: String, CaseIterable, Sendable {
        /// Comma-separated values with a header.
        case csv
        /// One JSON object per line.
        case jsonl
    }

    /// The CSV header of a recording of all raw sensors interleaved.
    package static let multiSensorHeader = "timestamp,sensor,x,y,z"
    /// The CSV header of a recording of one sensor (followed by a `# sensor=NAME` comment line).
    package static let singleSensorHeader = "timestamp,x,y,z"

    /// How rows are written.
    package let encoding: Encoding
    /// The one sensor of a one-sensor CSV, or `nil` for all sensors (JSON Lines always names the sensor).
    package let sensor: SensorKind?

    /// Creates a writer. `sensor` is the only sensor a one-sensor recording holds; `nil` (the default)
    /// writes every sensor with its name.
    package init(encoding: Encoding, sensor: SensorKind? = nil) {
        self.encoding = encoding
        self.sensor = sensor
    }

    /// What to write before the first sample, with its final newline ("" for JSON Lines).
    package var header: String {
        switch encoding {
        case .jsonl: return ""
        case .csv:
            if let sensor { return Self.singleSensorHeader + "\n# sensor=" + sensor.rawValue + "\n" }
            return Self.multiSensorHeader + "\n"
        }
    }

    /// One sample as a line, with its final newline.
    /// - Throws: ``RecordingError`` when a value is NaN or infinite (no reader would accept it back), or
    ///   when a one-sensor writer is given a sample of another sensor.
    package func line(_ sample: RawSample) throws(RecordingError) -> String {
        var s = ""
        try append(sample, to: &s)
        return s
    }

    /// Appends one sample as a line, with its final newline, to `text`.
    /// - Throws: as ``line(_:)``; `text` is unchanged then.
    package func append(_ sample: RawSample, to text: inout String) throws(RecordingError) {
        let v = sample.value
        guard sample.timestamp.isFinite, v.x.isFinite, v.y.isFinite, v.z.isFinite else {
            throw RecordingError("cannot write a \(sample.sensor.rawValue) sample with a NaN or infinite value (timestamp \(sample.timestamp))")
        }
        switch encoding {
        case .csv:
            if let sensor {
                guard sensor == sample.sensor else {
                    throw RecordingError("a one-sensor recording of \(sensor.rawValue) cannot hold a \(sample.sensor.rawValue) sample")
                }
                text += "\(sample.timestamp),\(v.x),\(v.y),\(v.z)\n"
            } else {
                text += "\(sample.timestamp),\(sample.sensor.rawValue),\(v.x),\(v.y),\(v.z)\n"
            }
        case .jsonl:
            if let sensor, sensor != sample.sensor {
                throw RecordingError("a one-sensor recording of \(sensor.rawValue) cannot hold a \(sample.sensor.rawValue) sample")
            }
            text += "{\"timestamp\":\(sample.timestamp),\"sensor\":\"\(sample.sensor.rawValue)\",\"x\":\(v.x),\"y\":\(v.y),\"z\":\(v.z)}\n"
        }
    }
}
