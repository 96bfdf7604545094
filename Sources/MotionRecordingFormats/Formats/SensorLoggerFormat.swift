import MotionFusion
import MotionSources

/// Sensor Logger (iOS and Android, Kelvin Choi): the zip export, its unzipped folder, or the JSON export.
///
/// **Streams.** Acceleration from `AccelerometerUncalibrated` when present, else `TotalAcceleration`
/// (Android), else `Accelerometer` (user acceleration, without gravity) plus `Gravity`, joined on
/// `time` (each `Accelerometer` row takes the latest `Gravity` row at or before it, or the first one);
/// rotation rate from `GyroscopeUncalibrated`, else `Gyroscope`; magnetic field from
/// `MagnetometerUncalibrated`, else `Magnetometer`. Columns are found by name (their order changed
/// between app versions).
///
/// **Units and signs.** `Metadata.csv` (or the JSON export's `Metadata` record) says the platform and
/// whether "Standardise Units & Frames" was on. iOS without it: raw acceleration in g with Apple's sign,
/// kept as is; `Accelerometer` and `Gravity` in m/s² with Apple's sign, divided by 9.80665. Android, or
/// standardised exports: m/s² with Android's sign, so `a = −v / 9.80665` on all three axes. Rotation
/// rate (rad/s) and magnetic field (µT) are the same on both platforms and kept as is.
///
/// **Time base.** `timestamp` is the `time` column (UTC epoch nanoseconds, read as 64-bit integer text)
/// in seconds since 1970, about 0.24 µs resolution.
///
/// **Quirks.** A first row of a sensor is skipped when it is stale: all three values exactly zero and
/// more than 1 s before the next row, or more than 60 s before the next row whatever its values (the
/// app caches a sample from an earlier session, seen stamped 3.8 days early). A row with the same `time`
/// as the row before it is a repeat and is skipped. A JSON export without its closing `]` is read.
enum SensorLoggerReader {
    static let sensorFiles = [
        "accelerometeruncalibrated", "totalacceleration", "accelerometer", "gravity",
        "gyroscopeuncalibrated", "gyroscope", "magnetometeruncalibrated", "magnetometer",
    ]

    static func hasSensorFile(_ c: Container) -> Bool {
        c.entries.contains { e in sensorFiles.contains { e.baseName.lowercased() == $0 + ".csv" } }
    }

    /// Where the rows of each sensor come from.
    private enum Layout {
        case csv([String: Container.Entry])  // lowercased sensor name → file
        case json(Container.Entry, Set<String>)  // the export, lowercased sensor names present
    }

    static func open(_ c: Container) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        var metadata: [String: String] = [:]
        var missingMetadata: RecordingError?
        let layout: Layout
        var files: [String: Container.Entry] = [:]
        for e in c.entries where e.baseName.lowercased().hasSuffix(".csv") {
            let base = String(e.baseName.lowercased().dropLast(4))
            if sensorFiles.contains(base) || base == "metadata" { files[base] = e }
        }
        if files.keys.contains(where: { $0 != "metadata" }) {
            layout = .csv(files)
            if let meta = files["metadata"] {
                metadata = try readMetadataCSV(meta)
            } else if c.entries.count == 1 {
                throw RecordingError("a Sensor Logger CSV file alone cannot be read: open the whole export (folder or zip), whose Metadata.csv says the platform",
                                     path: c.entries[0].displayPath)
            } else {
                missingMetadata = RecordingError("no Metadata.csv: it says whether the export is from iOS (g, Apple's sign) or Android (m/s², opposite sign)",
                                                 path: c.displayPath)
            }
        } else {
            var json: [Container.Entry] = []
            for e in c.entries {
                let p = try e.prefix(64).drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }
                if p.first == UInt8(ascii: "[") || p.first == UInt8(ascii: "{") { json.append(e) }
            }
            guard json.count == 1 else {
                if c.entries.count == 1 {
                    throw RecordingError("a Sensor Logger CSV file alone cannot be read: open the whole export (folder or zip), whose Metadata.csv says the platform",
                                         path: c.entries[0].displayPath)
                }
                throw RecordingError("no Sensor Logger sensor files (AccelerometerUncalibrated.csv, Gyroscope.csv, …) or JSON export found",
                                     path: c.displayPath)
            }
            let (names, meta) = try scanJSON(json[0])
            layout = .json(json[0], names)
            metadata = meta
        }
        func rows(_ name: String) throws(RecordingError) -> SLRowSource? {
            switch layout {
            case .csv(let files):
                guard let e = files[name] else { return nil }
                return SLCleanRows(try SLCSVRows(reader: e.reader()))
            case .json(let e, let names):
                guard names.contains(name) else { return nil }
                return SLCleanRows(SLJSONRows(reader: try e.reader(), sensor: name))
            }
        }

        let convention: SensorLoggerConvention
        if missingMetadata == nil, let stated = try self.convention(metadata, path: c.displayPath) {
            convention = stated
        } else if let inferred = try inferConvention(rows) {
            convention = inferred
            metadata["conventionInferred"] = inferred == .apple
                ? "raw acceleration about 1 in size: g, Apple's sign (iOS, not standardised)"
                : "raw acceleration about 9.8 in size: m/s², Android's sign (Android, or iOS standardised)"
        } else if let missingMetadata {
            throw missingMetadata
        } else {
            throw RecordingError("the metadata does not say the platform or the standardisation in a known form (platform '\(metadata["platform"] ?? "")', standardisation '\(metadata["standardisation"] ?? metadata["standardization"] ?? "")'), and there is no raw acceleration to tell the units and signs from",
                                 path: c.displayPath)
        }

        var streams: [any SampleStream] = []
        var conversions: [String] = []
        let apple = convention == .apple
        if let raw = try rows("accelerometeruncalibrated") {
            streams.append(SLStream(rows: raw, sensor: .accelerometer) { convention.rawAcceleration($0) })
            conversions.append(apple ? "AccelerometerUncalibrated: g, Apple's sign, unchanged"
                                     : "AccelerometerUncalibrated: m/s², Android's sign → g, Apple's sign (−v / 9.80665)")
        } else if let total = try rows("totalacceleration") {
            streams.append(SLStream(rows: total, sensor: .accelerometer) { convention.acceleration(metresPerSecondSquared: $0) })
            conversions.append(apple ? "TotalAcceleration: m/s², Apple's sign → g (v / 9.80665)"
                                     : "TotalAcceleration: m/s², Android's sign → g, Apple's sign (−v / 9.80665)")
        } else if let user = try rows("accelerometer") {
            guard let gravity = try rows("gravity") else {
                throw RecordingError("Accelerometer holds user acceleration only, and there is no Gravity to add to it (nor AccelerometerUncalibrated)",
                                     path: c.displayPath)
            }
            streams.append(SLSumStream(user: user, gravity: gravity) { convention.acceleration(metresPerSecondSquared: $0) })
            conversions.append("Accelerometer + Gravity (user acceleration + gravity, m/s², \(apple ? "Apple's" : "Android's") sign) → g, Apple's sign (\(apple ? "" : "−")v / 9.80665)")
        }
        func either(_ a: String, _ b: String) throws(RecordingError) -> SLRowSource? {
            if let r = try rows(a) { return r }
            return try rows(b)
        }
        if let gyro = try either("gyroscopeuncalibrated", "gyroscope") {
            streams.append(SLStream(rows: gyro, sensor: .gyro) { $0 })
            conversions.append("\(gyro.name): rad/s, unchanged")
        }
        if let mag = try either("magnetometeruncalibrated", "magnetometer") {
            streams.append(SLStream(rows: mag, sensor: .magnetometer) { $0 })
            conversions.append("\(mag.name): µT, unchanged")
        }
        guard !streams.isEmpty else {
            throw RecordingError("no accelerometer, gyroscope or magnetometer data in this Sensor Logger export", path: c.displayPath)
        }
        metadata["timeBase"] = "Sensor Logger's time column (UTC epoch ns) in seconds since 1970"
        metadata["conversion"] = conversions.joined(separator: "; ")
        return (streams, metadata)
    }

    /// The sign convention of the export, from its metadata; `nil` when the metadata does not tell
    /// (no platform, or an iOS export whose standardisation value is not one this reader knows), so
    /// that ``inferConvention(_:)`` decides from the data.
    static func convention(_ metadata: [String: String], path: String) throws(RecordingError) -> SensorLoggerConvention? {
        let platform = metadata["platform"]?.lowercased() ?? ""
        let standardised = (metadata["standardisation"] ?? metadata["standardization"] ?? "").lowercased()
        let on: Bool?
        switch standardised {
        case "", "false", "0", "no", "off", "none", "disabled", "null": on = false
        case "true", "1", "yes", "on", "enabled", "android", "standardised", "standardized": on = true
        default: on = nil
        }
        if on == true { return .standardised }
        switch platform {
        case "ios": return on == nil ? nil : .apple
        case "android": return .standardised  // standardised or not, Android's convention
        case "": return nil
        default: throw RecordingError("unknown platform '\(platform)' in the metadata (expected ios or android)", path: path)
        }
    }

    /// The sign convention told from the data when the metadata does not say it. Raw acceleration
    /// is in g with Apple's sign only in an iOS export that is not standardised, and in m/s² with
    /// Android's sign otherwise, so its size at the start (median of the first 50 rows' magnitudes:
    /// about 1 or about 9.8 for a phone held or lying still) tells which. `TotalAcceleration` exists on
    /// Android only. Without either, `nil`: calibrated `Gravity` is m/s² on both platforms and its
    /// sign cannot be told apart.
    static func inferConvention(_ rows: (String) throws(RecordingError) -> SLRowSource?) throws(RecordingError) -> SensorLoggerConvention? {
        if let raw = try rows("accelerometeruncalibrated") {
            var magnitudes: [Double] = []
            while magnitudes.count < SensorLoggerConvention.inferenceReadings, let row = try raw.next() {
                let m = row.value.length
                if m.isFinite && m > 0 { magnitudes.append(m) }
            }
            return SensorLoggerConvention.inferred(rawMagnitudes: magnitudes)
        }
        if try rows("totalacceleration") != nil { return .standardised }
        return nil
    }

    /// `Metadata.csv`: a header row and one row of values, read by column name.
    private static func readMetadataCSV(_ entry: Container.Entry) throws(RecordingError) -> [String: String] {
        let reader = try entry.reader()
        var splitter = FieldSplitter(separator: UInt8(ascii: ","))
        guard let header = try reader.nextDataLine() else { throw RecordingError("empty Metadata.csv", path: entry.displayPath) }
        splitter.split(header)
        let names = splitter.ranges.map { headerName(header.slice($0)) }
        guard let values = try reader.nextDataLine() else { throw reader.error("Metadata.csv has a header but no values") }
        splitter.split(values)
        var out: [String: String] = [:]
        for (i, r) in splitter.ranges.enumerated() where i < names.count {
            out[metadataKey(names[i])] = values.slice(r).text
        }
        return out
    }

    /// Metadata keys of this module for Sensor Logger's names (`device name` → `device`).
    private static func metadataKey(_ name: String) -> String {
        switch name {
        case "device name", "devicename": return "device"
        case "appversion", "app version": return "appVersion"
        case "recording time", "recordingtime": return "recordingTime"
        case "recording epoch time": return "recordingEpochTimeMs"
        case "recording timezone": return "recordingTimezone"
        case "samplerates", "samplerate", "sampleratems": return "sampleRateMs"
        default: return name
        }
    }

    /// One pass over a JSON export: which sensors it holds, and its `Metadata` record.
    private static func scanJSON(_ entry: Container.Entry) throws(RecordingError) -> (Set<String>, [String: String]) {
        let reader = try entry.reader()
        var object = FlatJSONObject()
        var names = Set<String>()
        var metadata: [String: String] = [:]
        var record = 0
        while let o = try reader.nextObject() {
            record += 1
            if let problem = object.parse(o) { throw reader.error("record \(record): \(problem)") }
            guard let s = object.members.first(where: { o.slice($0.key).equals("sensor") }) else {
                throw reader.error("record \(record): no \"sensor\" in the object")
            }
            let name = o.slice(s.value).text.lowercased()
            if name == "metadata" {
                for m in object.members { metadata[metadataKey(o.slice(m.key).text.lowercased())] = o.slice(m.value).text }
            } else {
                names.insert(name)
            }
        }
        if record == 0 { throw RecordingError("the JSON export holds no records", path: entry.displayPath) }
        return (names, metadata)
    }
}

/// One row of a Sensor Logger sensor: `time` in epoch ns, x, y, z as written.
struct SLRow {
    var time: Int64
    var value: Vector3
    var line: Int
}

protocol SLRowSource: AnyObject {
    /// The file (or JSON export) the rows come from.
    var path: String { get }
    /// The sensor's name as the app writes it (`GyroscopeUncalibrated`).
    var name: String { get }
    func next() throws(RecordingError) -> SLRow?
}

/// Epoch nanoseconds from text: integer digits, or (older or re-saved files) a decimal or exponent form.
func epochNanoseconds(_ field: UnsafeBufferPointer<UInt8>, reader: ByteReader, prefix: String = "") throws(RecordingError) -> Int64 {
    if let v = NumberParser.parseInt64(field) { return v }
    switch NumberParser.parse(field) {
    case .value(let d) where abs(d) < 9.2e18: return Int64(d)
    case .value, .nonFinite: throw reader.error(prefix + "time '\(ByteReader.preview(field))' is out of range")
    case .invalid: throw reader.error(prefix + "time '\(ByteReader.preview(field))' is not a number")
    }
}

/// Rows of one sensor CSV file (`time,seconds_elapsed,z,y,x` in any order).
final class SLCSVRows: SLRowSource {
    let reader: ByteReader
    let name: String
    var path: String { reader.path }
    private var splitter = FieldSplitter(separator: UInt8(ascii: ","))
    private var columns: (time: Int, x: Int, y: Int, z: Int, width: Int)

    init(reader: ByteReader) throws(RecordingError) {
        self.reader = reader
        let base = reader.path.split(separator: "/").last.map(String.init) ?? reader.path
        name = base.hasSuffix(".csv") ? String(base.dropLast(4)) : base
        guard let header = try reader.nextDataLine() else {
            throw RecordingError("empty file: no header", path: reader.path)
        }
        splitter.split(header)
        let names = splitter.ranges.map { headerName(header.slice($0)) }
        func column(_ n: String) throws(RecordingError) -> Int {
            guard let i = names.firstIndex(of: n) else { throw reader.error("no column '\(n)' in the header") }
            return i
        }
        let t = try column("time"), x = try column("x"), y = try column("y"), z = try column("z")
        columns = (t, x, y, z, max(t, x, y, z) + 1)
    }

    func next() throws(RecordingError) -> SLRow? {
        guard let line = try reader.nextDataLine() else { return nil }
        splitter.split(line)
        let f = splitter.ranges
        guard f.count >= columns.width else { throw reader.error("expected \(columns.width) columns or more, found \(f.count)") }
        let t = try epochNanoseconds(line.slice(f[columns.time]), reader: reader)
        let v = Vector3(try reader.number(line.slice(f[columns.x])), try reader.number(line.slice(f[columns.y])),
                        try reader.number(line.slice(f[columns.z])))
        return SLRow(time: t, value: v, line: reader.lineNumber)
    }
}

/// The records of one sensor in a JSON export (values are strings; numbers are accepted too).
final class SLJSONRows: SLRowSource {
    let reader: ByteReader
    let sensor: String  // lowercased
    var name: String { sensor }
    var path: String { reader.path }
    private var object = FlatJSONObject()
    private var record = 0

    init(reader: ByteReader, sensor: String) {
        self.reader = reader
        self.sensor = sensor
    }

    func next() throws(RecordingError) -> SLRow? {
        while let o = try reader.nextObject() {
            record += 1
            let prefix = "record \(record): "
            if let problem = object.parse(o) { throw reader.error(prefix + problem) }
            var isSensor = false
            var t: Int64? = nil, x: Double? = nil, y: Double? = nil, z: Double? = nil
            for m in object.members {
                let key = o.slice(m.key), value = o.slice(m.value)
                if key.equals("sensor") {
                    isSensor = value.text.lowercased() == sensor
                    if !isSensor { break }
                } else if key.equals("time") {
                    t = try epochNanoseconds(value, reader: reader, prefix: prefix)
                } else if key.equals("x") || key.equals("y") || key.equals("z") {
                    let v: Double
                    switch NumberParser.parse(value) {
                    case .value(let d): v = d
                    case .nonFinite: throw reader.error(prefix + "'\(ByteReader.preview(value))' is not a finite number")
                    case .invalid: throw reader.error(prefix + "'\(ByteReader.preview(value))' is not a number")
                    }
                    if key.equals("x") { x = v } else if key.equals("y") { y = v } else { z = v }
                }
            }
            guard isSensor else { continue }
            guard let t else { throw reader.error(prefix + "no \"time\"") }
            guard let x, let y, let z else { throw reader.error(prefix + "the record needs \"x\", \"y\" and \"z\"") }
            return SLRow(time: t, value: Vector3(x, y, z), line: reader.lineNumber)
        }
        return nil
    }
}

/// Drops Sensor Logger's stale first row and repeated rows (see ``SensorLoggerReader``).
final class SLCleanRows: SLRowSource {
    private let inner: SLRowSource
    private var started = false
    private var held: SLRow?
    private var lastTime: Int64?
    var path: String { inner.path }
    var name: String { inner.name }

    init(_ inner: SLRowSource) { self.inner = inner }

    func next() throws(RecordingError) -> SLRow? {
        if !started {
            started = true
            guard let first = try inner.next() else { return nil }
            if let second = try inner.next() {
                let gap = second.time &- first.time
                let zero = first.value.x == 0 && first.value.y == 0 && first.value.z == 0
                if (zero && gap > 1_000_000_000) || gap > 60_000_000_000 {
                    lastTime = second.time
                    return second
                }
                held = second
            }
            lastTime = first.time
            return first
        }
        while true {
            let row: SLRow
            if let h = held { row = h; held = nil } else if let r = try inner.next() { row = r } else { return nil }
            if row.time == lastTime { continue }
            lastTime = row.time
            return row
        }
    }
}

/// Epoch nanoseconds as seconds since 1970, rounded once.
@inline(__always)
package func epochSeconds(_ ns: Int64) -> Double {
    let (q, r) = ns.quotientAndRemainder(dividingBy: 1_000_000_000)
    return Double(q) + Double(r) * 1e-9
}

/// Samples of one Sensor Logger sensor, converted.
struct SLStream: SampleStream {
    let rows: SLRowSource
    let sensor: SensorKind
    let convert: (Vector3) -> Vector3

    init(rows: SLRowSource, sensor: SensorKind, convert: @escaping (Vector3) -> Vector3) {
        self.rows = rows
        self.sensor = sensor
        self.convert = convert
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        guard let r = try rows.next() else { return nil }
        return RecordedSample(sample: RawSample(sensor: sensor, timestamp: epochSeconds(r.time), value: convert(r.value)),
                              path: rows.path, line: r.line)
    }
}

/// Raw acceleration from `Accelerometer` (user acceleration) + `Gravity`, converted.
struct SLSumStream: SampleStream {
    let user: SLRowSource
    let gravity: SLRowSource
    let convert: (Vector3) -> Vector3
    private var current: SLRow?
    private var upcoming: SLRow?
    private var started = false

    init(user: SLRowSource, gravity: SLRowSource, convert: @escaping (Vector3) -> Vector3) {
        self.user = user
        self.gravity = gravity
        self.convert = convert
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        guard let u = try user.next() else { return nil }
        if !started {
            started = true
            current = try gravity.next()
            upcoming = try gravity.next()
            guard current != nil else {
                throw RecordingError("Gravity has no rows: it is needed to turn Accelerometer (user acceleration) into raw acceleration",
                                     path: gravity.path)
            }
        }
        while let next = upcoming, next.time <= u.time {
            current = next
            upcoming = try gravity.next()
        }
        guard let g = current?.value else { return nil }
        let v = convert(u.value + g)
        return RecordedSample(sample: RawSample(sensor: .accelerometer, timestamp: epochSeconds(u.time), value: v),
                              path: user.path, line: u.line)
    }
}
