import MotionFusion
import MotionSources

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
