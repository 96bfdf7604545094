import MotionFusion
import MotionSources

/// BROAD's compact CSV (D. Laidig, M. Caruso, A. Cereatti, T. Seel, "BROAD—A Benchmark for Robust
/// Inertial Orientation Estimation", *Data* 6(7):72, 2021, doi:10.3390/data6070072).
///
/// Reads only the IMU columns, by name: `acc_x…z` (m/s², specific force: the axis pointing up at rest
/// reads +9.8) become g with Apple's sign (`−a / 9.80665`, as ``BroadTrial`` does), `gyr_x…z` stay
/// rad/s, `mag_x…z` stay µT. Each row yields an accelerometer, a gyroscope and a magnetometer sample
/// with timestamp `index / rate` (seconds since the first row; the rate from `sampling_rate_hz=` in a
/// comment, else BROAD's 285.714… Hz).
enum BroadReader {
    static let defaultRate = 285.7142857142857

    static func open(_ entry: Container.Entry) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        let stream = try BroadStream(reader: entry.reader())
        return ([stream], [
            "timeBase": "row index / \(stream.rate) Hz: seconds since the first row",
            "conversion": "accelerometer m/s² specific force → g, Apple's sign (−a / 9.80665); gyroscope rad/s and magnetometer µT unchanged",
            "samplingRate": "\(stream.rate)",
        ])
    }
}

struct BroadStream: SampleStream {
    /// The IMU columns, in the order rows return them.
    static let imuColumns = ["acc_x", "acc_y", "acc_z", "gyr_x", "gyr_y", "gyr_z", "mag_x", "mag_y", "mag_z"]

    private let reader: ByteReader
    private var splitter = FieldSplitter(separator: UInt8(ascii: ","))
    private var columns: [Int] = []  // the IMU columns, then the extra ones asked for
    private var width = 0
    private(set) var rate = BroadReader.defaultRate
    private var index = 0
    private var pending = PendingSamples()
    private var batch: [RecordedSample] = []

    /// Reads the header; `extraColumns` are further columns that ``nextRow()`` returns after the
    /// nine IMU values (BROAD's truth quaternion and movement flag, for the benchmark).
    init(reader: ByteReader, extraColumns: [String] = []) throws(RecordingError) {
        self.reader = reader
        while let line = try reader.nextLine() {
            if line.isBlank { continue }
            if line.isComment {
                let text = line.text
                if let r = text.firstRange(of: "sampling_rate_hz=") {
                    let value = Array(text[r.upperBound...].prefix { $0 != ";" && $0 != " " }.utf8)
                    let parsed = value.withUnsafeBufferPointer { NumberParser.parse($0) }
                    guard case .value(let v) = parsed, v > 0, v < 1e9 else {
                        throw reader.error("sampling_rate_hz must be a positive number of Hz")
                    }
                    rate = v
                }
                continue
            }
            splitter.split(line)
            let names = splitter.ranges.map { headerName(line.slice($0)) }
            for name in Self.imuColumns + extraColumns {
                guard let i = names.firstIndex(of: name) else {
                    throw reader.error("BROAD header without a column '\(name)'")
                }
                columns.append(i)
            }
            width = columns.max()! + 1
            return
        }
        throw RecordingError("no BROAD header line", path: reader.path)
    }

    /// The next row's values, in the order of the columns read (IMU, then extra), unconverted; `nil`
    /// at the end.
    mutating func nextRow() throws(RecordingError) -> [Double]? {
        guard let line = try reader.nextDataLine() else { return nil }
        splitter.split(line)
        let f = splitter.ranges
        guard f.count >= width else { throw reader.error("expected \(width) columns or more, found \(f.count)") }
        var v = [Double](repeating: 0, count: columns.count)
        for k in columns.indices {
            let field = line.slice(f[columns[k]])
            // An extra column may be empty: BROAD leaves the truth empty where the optical system lost
            // the markers, which the benchmark reads as NaN (unscored). The IMU never is.
            v[k] = k >= Self.imuColumns.count && field.isEmpty ? .nan : try reader.number(field)
        }
        return v
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        if let s = pending.pop() { return s }
        guard let v = try nextRow() else { return nil }
        let t = Double(index) / rate
        index += 1
        let p = reader.path, n = reader.lineNumber
        batch.append(RecordedSample(sample: RawSample(sensor: .accelerometer, timestamp: t, value: PhoneUnits.androidAcceleration(v[0], v[1], v[2])), path: p, line: n))
        batch.append(RecordedSample(sample: RawSample(sensor: .gyro, timestamp: t, value: Vector3(v[3], v[4], v[5])), path: p, line: n))
        batch.append(RecordedSample(sample: RawSample(sensor: .magnetometer, timestamp: t, value: Vector3(v[6], v[7], v[8])), path: p, line: n))
        pending.refill(&batch)
        return pending.pop()
    }
}

/// A BROAD trial read whole, for the benchmark: the IMU in Core Motion's units (as ``BroadReader``
/// converts them) and the optical truth. Read through this module's line reader and number parser,
/// so it accepts and rejects exactly what `fuse` and `replay:` do.
package struct BroadTable: Sendable {
    /// Samples per second (`sampling_rate_hz=` in a comment, else 285.714… Hz).
    package var rate: Double
    /// Specific force in g, Apple's sign, one per row.
    package var accelerometer: [Vector3] = []
    /// Angular rate in rad/s, one per row.
    package var gyro: [Vector3] = []
    /// Magnetic field in µT, one per row.
    package var magnetometer: [Vector3] = []
    /// The optical truth, sensor → ENU (`q_w,q_x,q_y,q_z`), one per row.
    package var truth: [Quaternion] = []
    /// BROAD's `movement` flag (1 = moving), one per row.
    package var movement: [Bool] = []

    /// Reads the BROAD CSV at `path`.
    /// - Throws: ``RecordingError`` naming the file and line that cannot be read.
    /// - Complexity: O(rows), memory O(rows).
    package static func read(path: String) throws(RecordingError) -> BroadTable {
        let entry = try FormatDetection.single(of: try Container.open(path: path), as: .broad)
        var stream = try BroadStream(reader: entry.reader(), extraColumns: ["q_w", "q_x", "q_y", "q_z", "movement"])
        var table = BroadTable(rate: stream.rate)
        while let v = try stream.nextRow() {
            table.accelerometer.append(PhoneUnits.androidAcceleration(v[0], v[1], v[2]))
            table.gyro.append(Vector3(v[3], v[4], v[5]))
            table.magnetometer.append(Vector3(v[6], v[7], v[8]))
            table.truth.append(Quaternion(w: v[9], x: v[10], y: v[11], z: v[12]))
            table.movement.append(v[13] == 1)
        }
        return table
    }
}
