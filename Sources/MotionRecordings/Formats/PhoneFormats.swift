import MotionFusion
import MotionSources

/// The separator of a delimited header: tab, `;` or `,`, whichever occurs most outside quotes.
func detectSeparator(_ header: UnsafeBufferPointer<UInt8>) -> UInt8 {
    var counts: [UInt8: Int] = [0x2C: 0, 0x3B: 0, 0x09: 0]
    var quoted = false
    for b in header {
        if b == 0x22 { quoted.toggle() } else if !quoted, counts[b] != nil { counts[b]! += 1 }
    }
    if counts[0x09]! > 0 && counts[0x09]! >= counts[0x2C]! && counts[0x09]! >= counts[0x3B]! { return 0x09 }
    if counts[0x3B]! > counts[0x2C]! { return 0x3B }
    return 0x2C
}

/// Splits `name(unit)` (SensorLog) or `Name (unit)` (phyphox) into a name and a unit.
func splitUnit(_ header: String) -> (name: String, unit: String) {
    guard header.hasSuffix(")"), let open = header.lastIndex(of: "(") else { return (header.trimming(" "), "") }
    let name = header[..<open].trimming(" ")
    let unit = header[header.index(after: open)..<header.index(before: header.endIndex)].trimming(" ")
    return (name, unit)
}

/// True for a microtesla unit however the µ is written.
func isMicrotesla(_ unit: String) -> Bool {
    ["µt", "μt", "ut", "microtesla"].contains(unit.lowercased())
}

/// True for a field that holds no value: empty, `null`, `NaN` (where a format writes it for a gap).
func isMissing(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
    field.isEmpty || field.equals("null") || field.equals("NaN") || field.equals("nan")
}

// MARK: - SensorLog

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

// MARK: - phyphox

/// phyphox (RWTH Aachen) CSV export: a zip (or its folder) with one CSV per export set plus `meta/`,
/// or one of its CSV files alone.
///
/// Each CSV is read by header: a `Time (s)` column starts a group, and the `… x`, `… y`, `… z` columns
/// after it (by unit: `m/s^2` acceleration with g, not "linear" or "gravity"; `rad/s` gyroscope; `µT`
/// magnetometer) are that group's sensor. Separators `,`, `;` or tab; decimal point, or decimal comma with
/// `;` and tab; quoted headers. A `NaN` or empty cell is phyphox's "no value" (columns of unequal length)
/// and skips that group's sample on that row. When several files hold the same sensor, the first (by
/// name) is read.
///
/// Conversion (``PhyphoxPlatform/value(_:_:_:_:platform:)``, shared with the live `phyphox://`
/// source): phyphox writes acceleration in m/s² with Android's sign on both platforms, so
/// `a = −v / g` with g = 9.81 on iOS (phyphox multiplies Core Motion's g by −9.81) and 9.80665 on
/// Android (the sensor's own m/s²), the platform from `meta/device.csv`'s `deviceBrand` (9.81 when
/// unknown); rotation rate (rad/s) and magnetic field (µT) unchanged.
///
/// Time base: with `meta/time.csv`, `timestamp` is seconds since 1970: the `system time` of the last
/// `START` event at or before the sample, plus the experiment time elapsed since it. Without it,
/// seconds since the experiment started (the `Time (s)` column).
enum PhyphoxReader {
    struct Group {
        var sensor: SensorKind
        var time: Int
        var axes: [Int]
    }

    static func open(_ c: Container) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        var metadata: [String: String] = [:]
        var starts: [(experiment: Double, system: Double)] = []
        var platform: PhyphoxPlatform?
        if let time = c.entry(named: "meta/time.csv") {
            starts = try readStarts(time)
        }
        if let device = c.entry(named: "meta/device.csv") {
            let props = try readProperties(device)
            for (k, v) in props { metadata["device." + k] = v }
            let brand = props["deviceBrand"] ?? "", model = props["deviceModel"] ?? ""
            if !(brand + model).isEmpty { metadata["device"] = (brand + " " + model).trimming(" ") }
            if let v = props["version"] { metadata["appVersion"] = v }
            platform = PhyphoxPlatform.from(deviceBrand: brand)
            if let platform { metadata["platform"] = platform.rawValue }
        }
        var streams: [any SampleStream] = []
        var seen = Set<SensorKind>()
        let files = c.entries.filter { !$0.name.lowercased().hasPrefix("meta/") && !$0.name.lowercased().contains("/meta/") }
        for e in files where e.name.lowercased().hasSuffix(".csv") || c.entries.count == 1 {
            let reader = try e.reader()
            guard let header = try reader.nextDataLine() else { continue }
            let separator = detectSeparator(header)
            var splitter = FieldSplitter(separator: separator)
            splitter.split(header)
            let groups = self.groups(header, splitter.ranges).filter { !seen.contains($0.sensor) }
            if groups.isEmpty { continue }
            for g in groups { seen.insert(g.sensor) }
            streams.append(PhyphoxStream(reader: reader, splitter: splitter, decimalComma: separator != 0x2C, groups: groups, starts: starts, platform: platform))
        }
        guard !streams.isEmpty else {
            throw RecordingError("no accelerometer (with g), gyroscope or magnetometer columns in this phyphox export", path: c.displayPath)
        }
        metadata["timeBase"] = starts.isEmpty
            ? "seconds since the experiment started (no meta/time.csv)"
            : "seconds since 1970, from meta/time.csv START events plus experiment time"
        metadata["conversion"] = "acceleration m/s², Android's sign → g, Apple's sign (−v / \(platform == .android ? "9.80665, Android's" : "9.81, phyphox's") constant); gyroscope rad/s and magnetometer µT unchanged"
        return (streams, metadata)
    }

    static func groups(_ header: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>]) -> [Group] {
        var out: [Group] = []
        var time: Int? = nil
        var axes: [SensorKind: [Int?]] = [:]
        func flush() {
            guard let t = time else { return }
            for (kind, a) in axes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                if let x = a[0], let y = a[1], let z = a[2] { out.append(Group(sensor: kind, time: t, axes: [x, y, z])) }
            }
            axes = [:]
        }
        for (i, r) in ranges.enumerated() {
            let (name, unit) = splitUnit(header.slice(r).text.trimming("\" "))
            let lower = name.lowercased()
            if lower == "time" || lower.hasPrefix("time ") {
                flush()
                time = i
                continue
            }
            let words = lower.split(separator: " ")
            guard let axis = words.last.flatMap({ ["x": 0, "y": 1, "z": 2][String($0)] }) else { continue }
            let u = unit.lowercased().replacing("²", with: "^2")
            let kind: SensorKind
            if u == "m/s^2" && !lower.contains("linear") && !lower.contains("gravity") { kind = .accelerometer }
            else if u == "rad/s" { kind = .gyro }
            else if isMicrotesla(unit) { kind = .magnetometer }
            else { continue }
            var a = axes[kind] ?? [nil, nil, nil]
            if a[axis] == nil { a[axis] = i }
            axes[kind] = a
        }
        flush()
        return out
    }

    /// `meta/time.csv`: the START events' experiment time and system time (epoch s).
    private static func readStarts(_ entry: Container.Entry) throws(RecordingError) -> [(experiment: Double, system: Double)] {
        let reader = try entry.reader()
        guard let header = try reader.nextDataLine() else { return [] }
        var splitter = FieldSplitter(separator: detectSeparator(header))
        let comma = splitter.separator != 0x2C
        splitter.split(header)
        let names = splitter.ranges.map { headerName(header.slice($0)) }
        guard let ev = names.firstIndex(of: "event"), let ex = names.firstIndex(of: "experiment time"),
              let sy = names.firstIndex(of: "system time")
        else { throw reader.error("meta/time.csv needs the columns event, experiment time and system time") }
        var out: [(Double, Double)] = []
        while let line = try reader.nextDataLine() {
            splitter.split(line)
            let f = splitter.ranges
            guard f.count > max(ev, ex, sy) else { throw reader.error("expected \(max(ev, ex, sy) + 1) columns, found \(f.count)") }
            guard line.slice(f[ev]).text.uppercased() == "START" else { continue }
            out.append((try reader.number(line.slice(f[ex]), decimalComma: comma), try reader.number(line.slice(f[sy]), decimalComma: comma)))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// `meta/device.csv`: `property,value` rows.
    private static func readProperties(_ entry: Container.Entry) throws(RecordingError) -> [String: String] {
        let reader = try entry.reader()
        guard let header = try reader.nextDataLine() else { return [:] }
        var splitter = FieldSplitter(separator: detectSeparator(header))
        var out: [String: String] = [:]
        while let line = try reader.nextDataLine() {
            splitter.split(line)
            if splitter.ranges.count >= 2 {
                out[line.slice(splitter.ranges[0]).text] = line.slice(splitter.ranges[1]).text
            }
        }
        return out
    }
}

struct PhyphoxStream: SampleStream {
    let reader: ByteReader
    var splitter: FieldSplitter
    let decimalComma: Bool
    let groups: [PhyphoxReader.Group]
    let starts: [(experiment: Double, system: Double)]
    let platform: PhyphoxPlatform?
    private let width: Int
    private var pending = PendingSamples()
    private var batch: [RecordedSample] = []

    init(reader: ByteReader, splitter: FieldSplitter, decimalComma: Bool, groups: [PhyphoxReader.Group], starts: [(experiment: Double, system: Double)],
         platform: PhyphoxPlatform?) {
        self.platform = platform
        self.reader = reader
        self.splitter = splitter
        self.decimalComma = decimalComma
        self.groups = groups
        self.starts = starts
        width = groups.flatMap { [$0.time] + $0.axes }.max()! + 1
    }

    private func epoch(_ t: Double) -> Double {
        guard var s = starts.first else { return t }
        for candidate in starts where candidate.experiment <= t { s = candidate }
        return s.system + (t - s.experiment)
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        while true {
            if let s = pending.pop() { return s }
            guard let line = try reader.nextDataLine() else { return nil }
            splitter.split(line)
            let f = splitter.ranges
            for g in groups {
                guard g.time < f.count, g.axes.allSatisfy({ $0 < f.count }) else {
                    throw reader.error("expected \(width) columns, found \(f.count)")
                }
                let tField = line.slice(f[g.time])
                if isMissing(tField) || g.axes.contains(where: { isMissing(line.slice(f[$0])) }) { continue }
                let t = epoch(try reader.number(tField, decimalComma: decimalComma))
                let x = try reader.number(line.slice(f[g.axes[0]]), decimalComma: decimalComma)
                let y = try reader.number(line.slice(f[g.axes[1]]), decimalComma: decimalComma)
                let z = try reader.number(line.slice(f[g.axes[2]]), decimalComma: decimalComma)
                let v = PhyphoxPlatform.value(g.sensor, x, y, z, platform: platform)
                batch.append(RecordedSample(sample: RawSample(sensor: g.sensor, timestamp: t, value: v), path: reader.path, line: reader.lineNumber))
            }
            pending.refill(&batch)
        }
    }
}

// MARK: - HyperIMU

/// HyperIMU (Android, ianovir) CSV file.
///
/// `@` preamble lines (`@ HyperIMU - ianovir - 2017`, `@ Date: … Sampling Time: 20ms`), then a header
/// `timestamp,NAME.x,NAME.y,NAME.z,…` with three columns per sensor in the order chosen in the app.
/// Sensors by name: the accelerometer (`…Accelerometer…`, not linear acceleration or gravity), the
/// gyroscope (`…Gyroscope…`, the uncalibrated one preferred, as Core Motion's raw gyroscope), the
/// magnetometer (`…Magnetic…`/`…Magnetometer…`, uncalibrated preferred); other sensors (rotation vector,
/// orientation, GPS…) are ignored. Older files without a column row name the sensors in an `@Sensors:`
/// line instead: three columns each, after the timestamp.
///
/// Conversion: acceleration m/s² with Android's sign → `−v / 9.80665`; rad/s and µT unchanged.
/// Time base: the `timestamp` column (epoch milliseconds) in seconds since 1970; without one, the row
/// index times the preamble's sampling time, seconds since the first row. A row with the same timestamp
/// as the row before it is a repeat and is skipped; a `#` that ends a line (the app's line-end option)
/// is dropped.
enum HyperIMUReader {
    static func open(_ entry: Container.Entry) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        let stream = try HyperIMUStream(reader: entry.reader())
        return ([stream], [
            "timeBase": stream.period == nil ? "timestamp column (epoch ms) in seconds since 1970" : "row index × sampling time, seconds since the first row",
            "conversion": "accelerometer m/s², Android's sign → g, Apple's sign (−v / 9.80665); gyroscope rad/s and magnetometer µT unchanged",
            "sensors": stream.names.joined(separator: ", "),
        ])
    }

    /// Picks the columns of each sensor kind from `NAME` → first-column index.
    static func choose(_ sensors: [(name: String, index: Int)]) -> [(SensorKind, String, Int)] {
        func best(_ matches: (String) -> Bool, preferUncalibrated: Bool) -> (String, Int)? {
            let candidates = sensors.filter { matches($0.name.lowercased()) }
            let preferred = candidates.first { $0.name.lowercased().contains("uncalibrated") == preferUncalibrated }
            return (preferred ?? candidates.first).map { ($0.name, $0.index) }
        }
        var out: [(SensorKind, String, Int)] = []
        if let a = best({ ($0.contains("accelerometer") || $0.contains("acceleration")) && !$0.contains("linear") && !$0.contains("gravity") }, preferUncalibrated: false) {
            out.append((.accelerometer, a.0, a.1))
        }
        if let g = best({ $0.contains("gyro") }, preferUncalibrated: true) { out.append((.gyro, g.0, g.1)) }
        if let m = best({ $0.contains("magnet") }, preferUncalibrated: true) { out.append((.magnetometer, m.0, m.1)) }
        return out
    }
}

struct HyperIMUStream: SampleStream {
    private let reader: ByteReader
    private var splitter = FieldSplitter(separator: 0x2C)
    private var timestampColumn: Int?
    private var chosen: [(SensorKind, String, Int)] = []
    private(set) var period: Double?
    private var width = 0
    private var index = 0
    private var rows = HyperIMURowDecoder()
    private var pending = PendingSamples()
    private var batch: [RecordedSample] = []
    private var firstRow: UnsafeBufferPointer<UInt8>?
    var names: [String] { chosen.map(\.1) }

    init(reader: ByteReader) throws(RecordingError) {
        self.reader = reader
        var listed: [String] = []
        while let line = try reader.nextLine() {
            if line.isBlank || line.isComment { continue }
            if line.first == UInt8(ascii: "@") {
                let text = line.text
                let lower = text.lowercased()
                if let r = lower.firstRange(of: "sampling") {
                    let rest = lower[r.upperBound...].drop { !$0.isNumber }
                    let digits = rest.prefix { $0.isNumber || $0 == "." }
                    if let v = Double(digits), v > 0, v < 1e7 {
                        period = rest.dropFirst(digits.count).trimming(" ").hasPrefix("s") ? v : v / 1000
                    }
                }
                if let r = lower.firstRange(of: "sensors:") {
                    listed = text[r.upperBound...].split(whereSeparator: { $0 == "," || $0 == ";" }).map { $0.trimming(" ") }.filter { !$0.isEmpty }
                }
                continue
            }
            splitter.split(trimHash(line))
            let cells = splitter.ranges.map { line.slice($0).text.trimming(" \"") }
            if cells.contains(where: { $0.contains { $0.isLetter } }) {
                // A column row.
                timestampColumn = cells.firstIndex { $0.lowercased() == "timestamp" }
                var sensors: [(String, Int)] = []
                for (i, c) in cells.enumerated() where c.lowercased().hasSuffix(".x") {
                    let name = String(c.dropLast(2))
                    if cells.indices.contains(i + 2), cells[i + 1].lowercased() == name.lowercased() + ".y",
                       cells[i + 2].lowercased() == name.lowercased() + ".z" {
                        sensors.append((name, i))
                    }
                }
                chosen = HyperIMUReader.choose(sensors)
                if timestampColumn != nil { period = nil }
            } else {
                // No column row: sensors from `@Sensors:`, three columns each, after an optional timestamp.
                let hasTimestamp = cells.count == 3 * listed.count + 1
                guard !listed.isEmpty, hasTimestamp || cells.count >= 3 * listed.count else {
                    throw reader.error("HyperIMU file without a column row or an '@Sensors:' line naming its columns")
                }
                timestampColumn = hasTimestamp ? 0 : nil
                chosen = HyperIMUReader.choose(listed.enumerated().map { ($0.element, (hasTimestamp ? 1 : 0) + 3 * $0.offset) })
                if hasTimestamp { period = nil }
                firstRow = line
            }
            guard !chosen.isEmpty else { throw reader.error("no accelerometer, gyroscope or magnetometer columns in this HyperIMU file") }
            guard timestampColumn != nil || period != nil else {
                throw reader.error("no timestamp column and no sampling time in the '@' preamble")
            }
            width = max(timestampColumn ?? 0, chosen.map { $0.2 + 2 }.max() ?? 0) + 1
            return
        }
        throw RecordingError("no HyperIMU header", path: reader.path)
    }

    private func trimHash(_ line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var l = line
        while let last = l.last, last == UInt8(ascii: "#") || last == 0x20 { l = UnsafeBufferPointer(rebasing: l.dropLast()) }
        return l
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        while true {
            if let s = pending.pop() { return s }
            let line: UnsafeBufferPointer<UInt8>
            if let f = firstRow {
                line = f
                firstRow = nil
            } else {
                guard let l = try reader.nextLine() else { return nil }
                if l.isBlank || l.isComment || l.first == UInt8(ascii: "@") { continue }
                line = l
            }
            let row = trimHash(line)
            splitter.split(row)
            let f = splitter.ranges
            guard f.count >= width else { throw reader.error("expected \(width) columns or more, found \(f.count)") }
            let t: Double
            if let tc = timestampColumn {
                t = HyperIMURowDecoder.seconds(epochMilliseconds: try reader.number(row.slice(f[tc])))
            } else {
                t = Double(index) * (period ?? 0)
            }
            index += 1
            guard rows.isNew(time: t) else { continue }
            for (kind, _, c) in chosen {
                let x = try reader.number(row.slice(f[c])), y = try reader.number(row.slice(f[c + 1])), z = try reader.number(row.slice(f[c + 2]))
                let v = HyperIMURowDecoder.value(kind, x, y, z)
                batch.append(RecordedSample(sample: RawSample(sensor: kind, timestamp: t, value: v), path: reader.path, line: reader.lineNumber))
            }
            pending.refill(&batch)
        }
    }
}
