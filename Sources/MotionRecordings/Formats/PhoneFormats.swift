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
    /// One sensor's columns: its timestamp, three values (or six summed in pairs), an optional gate.
    struct Group {
        var sensor: SensorKind
        var timestamp: Int
        var values: [Int]  // 3, or 6 (two vectors added)
        var accuracy: Int?  // motionMagneticFieldCalibrationAccuracy
        var last = -Double.infinity
    }

    private let reader: ByteReader
    private var splitter: FieldSplitter
    private let decimalComma: Bool
    private var groups: [Group] = []
    private var width = 0
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
        var columns: [String: (index: Int, unit: String)] = [:]
        for (i, r) in splitter.ranges.enumerated() {
            let (name, unit) = splitUnit(header.slice(r).text.trimming("\""))
            if columns[name.lowercased()] == nil { columns[name.lowercased()] = (i, unit) }
        }
        func find(_ names: [String], unit check: (String) -> Bool, what: String) throws(RecordingError) -> [Int]? {
            var out: [Int] = []
            for n in names {
                guard let c = columns[n.lowercased()] else { return nil }
                if n.lowercased().contains("timestamp") {
                    guard c.unit.lowercased() == "s" || c.unit.isEmpty else { throw reader.error("column \(n) is in '\(c.unit)', expected seconds (s)") }
                } else if !check(c.unit) {
                    throw reader.error("column \(n) is in '\(c.unit)', expected \(what)")
                }
                out.append(c.index)
            }
            return out
        }
        let isG: (String) -> Bool = { $0.lowercased() == "g" }
        let isRadS: (String) -> Bool = { $0.lowercased() == "rad/s" }
        var notes: [String] = []
        if let c = try find(["accelerometerTimestamp_sinceReboot", "accelerometerAccelerationX", "accelerometerAccelerationY", "accelerometerAccelerationZ"], unit: isG, what: "G") {
            groups.append(Group(sensor: .accelerometer, timestamp: c[0], values: Array(c[1...])))
            notes.append("accelerometer: g, Apple's sign, unchanged")
        } else if let c = try find(["motionTimestamp_sinceReboot", "motionUserAccelerationX", "motionGravityX", "motionUserAccelerationY", "motionGravityY", "motionUserAccelerationZ", "motionGravityZ"], unit: isG, what: "G") {
            groups.append(Group(sensor: .accelerometer, timestamp: c[0], values: Array(c[1...])))
            notes.append("accelerometer: motionUserAcceleration + motionGravity, g")
        }
        if let c = try find(["gyroTimestamp_sinceReboot", "gyroRotationX", "gyroRotationY", "gyroRotationZ"], unit: isRadS, what: "rad/s") {
            groups.append(Group(sensor: .gyro, timestamp: c[0], values: Array(c[1...])))
            notes.append("gyroscope: rad/s, unchanged")
        } else if let c = try find(["motionTimestamp_sinceReboot", "motionRotationRateX", "motionRotationRateY", "motionRotationRateZ"], unit: isRadS, what: "rad/s") {
            groups.append(Group(sensor: .gyro, timestamp: c[0], values: Array(c[1...])))
            notes.append("gyroscope: motionRotationRate (bias-corrected), rad/s")
        }
        if let c = try find(["magnetometerTimestamp_sinceReboot", "magnetometerX", "magnetometerY", "magnetometerZ"], unit: isMicrotesla, what: "µT") {
            groups.append(Group(sensor: .magnetometer, timestamp: c[0], values: Array(c[1...])))
            notes.append("magnetometer: µT, unchanged")
        } else if let c = try find(["motionTimestamp_sinceReboot", "motionMagneticFieldX", "motionMagneticFieldY", "motionMagneticFieldZ"], unit: isMicrotesla, what: "µT") {
            groups.append(Group(sensor: .magnetometer, timestamp: c[0], values: Array(c[1...]), accuracy: columns["motionmagneticfieldcalibrationaccuracy"]?.index))
            notes.append("magnetometer: motionMagneticField (calibrated), µT, rows with accuracy −1 or an all-zero field skipped")
        }
        guard !groups.isEmpty else {
            throw reader.error("no accelerometer, gyroscope or magnetometer columns with their …Timestamp_sinceReboot in this SensorLog header")
        }
        width = groups.flatMap { [$0.timestamp] + $0.values + ($0.accuracy.map { [$0] } ?? []) }.max()! + 1
        conversion = notes.joined(separator: "; ")
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        while true {
            if let s = pending.pop() { return s }
            guard let line = try reader.nextDataLine() else { return nil }
            splitter.split(line)
            let f = splitter.ranges
            guard f.count >= width else { throw reader.error("expected \(width) columns or more, found \(f.count)") }
            for g in groups.indices {
                let tField = line.slice(f[groups[g].timestamp])
                if isMissing(tField) { continue }
                let t = try reader.number(tField, decimalComma: decimalComma)
                guard t > groups[g].last else { continue }  // held value: the sensor has not updated
                if let a = groups[g].accuracy {
                    let accuracy = line.slice(f[a])
                    if !isMissing(accuracy), try reader.number(accuracy, decimalComma: decimalComma) < 0 { continue }
                }
                let idx = groups[g].values
                if idx.contains(where: { isMissing(line.slice(f[$0])) }) { continue }
                var v = [0.0, 0.0, 0.0]
                if idx.count == 3 {
                    for k in 0..<3 { v[k] = try reader.number(line.slice(f[idx[k]]), decimalComma: decimalComma) }
                } else {
                    for k in 0..<3 {
                        v[k] = try reader.number(line.slice(f[idx[2 * k]]), decimalComma: decimalComma)
                            + reader.number(line.slice(f[idx[2 * k + 1]]), decimalComma: decimalComma)
                    }
                }
                if groups[g].accuracy != nil, v[0] == 0, v[1] == 0, v[2] == 0 { continue }
                groups[g].last = t
                batch.append(RecordedSample(sample: RawSample(sensor: groups[g].sensor, timestamp: t, value: Vector3(v[0], v[1], v[2])),
                                            path: reader.path, line: reader.lineNumber))
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
/// Conversion: phyphox writes acceleration in m/s² with Android's sign on both platforms (on iOS it
/// multiplies Core Motion's g by −9.81), so `a = −v / 9.81`, phyphox's own constant; rotation rate
/// (rad/s) and magnetic field (µT) unchanged.
///
/// Time base: with `meta/time.csv`, `timestamp` is seconds since 1970: the `system time` of the last
/// `START` event at or before the sample, plus the experiment time elapsed since it. Without it,
/// seconds since the experiment started (the `Time (s)` column).
enum PhyphoxReader {
    static let gravity = 9.81

    struct Group {
        var sensor: SensorKind
        var time: Int
        var axes: [Int]
    }

    static func open(_ c: Container) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        var metadata: [String: String] = [:]
        var starts: [(experiment: Double, system: Double)] = []
        if let time = c.entry(named: "meta/time.csv") {
            starts = try readStarts(time)
        }
        if let device = c.entry(named: "meta/device.csv") {
            let props = try readProperties(device)
            for (k, v) in props { metadata["device." + k] = v }
            let brand = props["deviceBrand"] ?? "", model = props["deviceModel"] ?? ""
            if !(brand + model).isEmpty { metadata["device"] = (brand + " " + model).trimming(" ") }
            if let v = props["version"] { metadata["appVersion"] = v }
            if !brand.isEmpty { metadata["platform"] = brand.lowercased() == "apple" ? "ios" : "android" }
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
            streams.append(PhyphoxStream(reader: reader, splitter: splitter, decimalComma: separator != 0x2C, groups: groups, starts: starts))
        }
        guard !streams.isEmpty else {
            throw RecordingError("no accelerometer (with g), gyroscope or magnetometer columns in this phyphox export", path: c.displayPath)
        }
        metadata["timeBase"] = starts.isEmpty
            ? "seconds since the experiment started (no meta/time.csv)"
            : "seconds since 1970, from meta/time.csv START events plus experiment time"
        metadata["conversion"] = "acceleration m/s², Android's sign → g, Apple's sign (−v / 9.81, phyphox's constant); gyroscope rad/s and magnetometer µT unchanged"
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
    private let width: Int
    private var pending = PendingSamples()
    private var batch: [RecordedSample] = []

    init(reader: ByteReader, splitter: FieldSplitter, decimalComma: Bool, groups: [PhyphoxReader.Group], starts: [(experiment: Double, system: Double)]) {
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
                let v = g.sensor == .accelerometer ? androidToCoreMotion(x, y, z, gravity: PhyphoxReader.gravity) : Vector3(x, y, z)
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
    private var lastTime: Double?
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
                t = try reader.number(row.slice(f[tc])) / 1000
            } else {
                t = Double(index) * (period ?? 0)
            }
            index += 1
            if t == lastTime { continue }
            lastTime = t
            for (kind, _, c) in chosen {
                let x = try reader.number(row.slice(f[c])), y = try reader.number(row.slice(f[c + 1])), z = try reader.number(row.slice(f[c + 2]))
                let v = kind == .accelerometer ? androidToCoreMotion(x, y, z) : Vector3(x, y, z)
                batch.append(RecordedSample(sample: RawSample(sensor: kind, timestamp: t, value: v), path: reader.path, line: reader.lineNumber))
            }
            pending.refill(&batch)
        }
    }
}
