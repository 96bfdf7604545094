import MotionFusion
import MotionSources

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
