import MotionSources

/// The barometer readings of a recording: pressure (kPa) against time (s, the recording's clock), in
/// time order, for replay through `CMAltimeter` (``RecordedBarometerSource``).
///
/// Read from (the first found):
/// - Sensor Logger exports (folder or zip): `Barometer.csv`, columns `time` (UTC epoch nanoseconds, the
///   clock of the motion files) and `pressure` (hPa, divided by 10);
/// - SensorLog CSV: `altimeterTimestamp_sinceReboot(s)` and `altimeterPressure(kPa)`, sample-and-hold
///   repeats skipped;
/// - phyphox exports: a CSV whose header has `Time (s)` and `Pressure (hPa)` (seconds since the experiment
///   started; `,`, `;` or tab separated, decimal comma with `;` or tab);
/// - the project's raw CSV: rows whose `sensor` is `pressure`, with the pressure (kPa) in `x` (the motion
///   readers skip those rows).
///
/// A reading equal in time to the one before it is a repeat and skipped; one earlier than it, or a
/// pressure that is not a positive finite number, is an error naming the file and line.
package struct PressureTrack: Sendable, Hashable {
    /// Times (s), strictly increasing.
    package private(set) var timestamps: [Double] = []
    /// Pressures (kPa).
    package private(set) var pressures: [Double] = []
    /// Where the readings came from (`rec.zip/Barometer.csv`).
    package let path: String

    /// Number of readings.
    package var count: Int { timestamps.count }

    init(path: String) { self.path = path }

    mutating func append(_ t: Double, _ kPa: Double, reader: ByteReader) throws(RecordingError) {
        guard kPa.isFinite, kPa > 0 else { throw reader.error("pressure \(kPa) kPa is not a positive number") }
        if let last = timestamps.last {
            if t == last { return }
            if t < last { throw reader.error("time goes backwards (\(t) after \(last))") }
        }
        timestamps.append(t)
        pressures.append(kPa)
    }

    /// The pressure (kPa) at `t`, linearly interpolated; the first or last reading outside the track.
    package func pressure(at t: Double) -> Double? {
        guard let first = timestamps.first, let last = timestamps.last else { return nil }
        if !(t > first) { return pressures[0] }
        if t >= last { return pressures[pressures.count - 1] }
        var lo = 0, hi = timestamps.count - 1
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if timestamps[mid] <= t { lo = mid } else { hi = mid }
        }
        let u = (t - timestamps[lo]) / (timestamps[hi] - timestamps[lo])
        return pressures[lo] + u * (pressures[hi] - pressures[lo])
    }

    /// The pressure readings of the recording at `path` (file, folder or zip), or `nil` when it has none.
    /// - Throws: ``RecordingError`` when the recording cannot be opened or its pressure rows are malformed.
    package static func read(path: String) throws(RecordingError) -> PressureTrack? {
        let container = try Container.open(path: path)
        for entry in container.entries where entry.baseName.lowercased().hasSuffix(".csv") || container.kind == .file {
            if let track = try read(entry) { return track }
        }
        return nil
    }

    private enum Layout {
        case sensorLogger(time: Int, pressure: Int)
        case sensorLog(time: Int, pressure: Int)
        case phyphox(time: Int, pressure: Int)
        case raw(time: Int, sensor: Int, x: Int)
    }

    private static func read(_ entry: Container.Entry) throws(RecordingError) -> PressureTrack? {
        let reader = try entry.reader()
        guard let header = try reader.nextDataLine() else { return nil }
        let text = header.text
        let separator: UInt8 = text.contains("\t") ? 0x09 : text.contains(";") ? UInt8(ascii: ";") : UInt8(ascii: ",")
        let decimalComma = separator != UInt8(ascii: ",")
        var splitter = FieldSplitter(separator: separator)
        splitter.split(header)
        let names = splitter.ranges.map { headerName(header.slice($0)) }
        func index(_ n: String) -> Int? { names.firstIndex(of: n) }
        let layout: Layout
        if entry.baseName.lowercased() == "barometer.csv", let t = index("time"), let p = index("pressure") {
            layout = .sensorLogger(time: t, pressure: p)
        } else if let t = index("altimetertimestamp_sincereboot(s)"), let p = index("altimeterpressure(kpa)") {
            layout = .sensorLog(time: t, pressure: p)
        } else if let t = index("time (s)"), let p = names.firstIndex(where: { $0.hasPrefix("pressure (hpa)") }) {
            layout = .phyphox(time: t, pressure: p)
        } else if let t = index("timestamp"), let s = index("sensor"), let x = index("x") {
            layout = .raw(time: t, sensor: s, x: x)
        } else {
            return nil
        }
        var track = PressureTrack(path: entry.displayPath)
        while let line = try reader.nextDataLine() {
            splitter.split(line)
            let f = splitter.ranges
            func field(_ i: Int) throws(RecordingError) -> UnsafeBufferPointer<UInt8> {
                guard i < f.count else { throw reader.error("expected \(i + 1) columns or more, found \(f.count)") }
                return line.slice(f[i])
            }
            switch layout {
            case .sensorLogger(let ti, let pi):
                let ns = try epochNanoseconds(try field(ti), reader: reader)
                try track.append(Double(ns) / 1e9, try reader.number(try field(pi)) / 10, reader: reader)
            case .sensorLog(let ti, let pi):
                let tf = try field(ti), pf = try field(pi)
                if tf.isEmpty || pf.isEmpty { continue }  // the altimeter had no reading yet
                try track.append(try reader.number(tf), try reader.number(pf), reader: reader)
            case .phyphox(let ti, let pi):
                try track.append(try reader.number(try field(ti), decimalComma: decimalComma),
                                 try reader.number(try field(pi), decimalComma: decimalComma) / 10, reader: reader)
            case .raw(let ti, let si, let xi):
                guard try field(si).equals("pressure") else { continue }
                try track.append(try reader.number(try field(ti)), try reader.number(try field(xi)), reader: reader)
            }
        }
        return track.count > 0 ? track : nil
    }
}

/// A recording's pressure as a ``BarometerSource``: readings interpolated at the time asked, in virtual
/// time from the first reading (a reader such as `CMAltimeter` advances as fast as it likes).
///
/// Past the last reading ``readPressure(at:)`` throws ``SourceError`` `.deviceRemoved` ("the recording
/// ended"), so an altimeter stops there. Thread-safe: immutable.
package final class RecordedBarometerSource: BarometerSource {
    /// `replay:PATH`.
    package let identifier: String
    /// "Recorded barometer (PATH)".
    package let name: String
    /// The recording's pressure.
    package let track: PressureTrack
    /// The first reading's time.
    package var virtualStartTime: Double? { track.timestamps.first }

    /// A barometer replaying `track` (which must not be empty).
    package init(track: PressureTrack, path: String) {
        self.track = track
        identifier = "replay:\(path)"
        name = "Recorded barometer (\(track.path))"
    }

    /// The recording's barometer at `path`, or `nil` when it has no pressure.
    package convenience init?(path: String) throws(RecordingError) {
        guard let track = try PressureTrack.read(path: path), track.count > 0 else { return nil }
        self.init(track: track, path: path)
    }

    /// The interpolated pressure (kPa) at `timestamp`.
    /// - Throws: ``SourceError`` `.deviceRemoved` after the last reading.
    package func readPressure(at timestamp: Double) throws(SourceError) -> Double {
        guard let last = track.timestamps.last, timestamp <= last + 1, let p = track.pressure(at: timestamp) else {
            throw SourceError(.deviceRemoved, "the recording ended: \(track.path)")
        }
        return p
    }
}
