import MotionFusion

/// The CSV that `coremotion stream` writes and ``ReplaySource`` plays back.
///
/// Two layouts are accepted, each after any number of `#` comment lines and blank lines:
/// - **Several sensors**, as `coremotion stream --sensor raw` writes: header `timestamp,sensor,x,y,z`,
///   where `sensor` is `accelerometer`, `gyro` or `magnetometer`.
/// - **One sensor**, as `coremotion stream --sensor accelerometer|gyro|magnetometer` writes: header
///   `timestamp,x,y,z`, with a comment naming the sensor, `# sensor=gyro`, before the first row
///   (`coremotion stream` writes it right after the header, so the header stays the first line).
///
/// Units are Core Motion's: g (face up reads z ≈ −1), rad/s, µT; `timestamp` is in seconds since boot.
/// Timestamps must not decrease within one sensor. Parsing is independent of the locale: `.` is the
/// decimal separator.
public enum ReplayFormat {
    /// The header of a recording of several sensors.
    public static let multiSensorHeader = "timestamp,sensor,x,y,z"
    /// The header of a recording of one sensor.
    public static let singleSensorHeader = "timestamp,x,y,z"

    /// The comment line that names the sensor of a one-sensor recording.
    public static func sensorComment(_ sensor: SensorKind) -> String { "# sensor=\(sensor.rawValue)" }

    /// What the header of a file says about its rows.
    public enum Layout: Sendable, Hashable {
        /// `timestamp,sensor,x,y,z`.
        case multiSensor
        /// `timestamp,x,y,z` for the given sensor.
        case singleSensor(SensorKind)
    }

    /// Incremental parser: feed it lines in order with their 1-based numbers.
    public struct Parser: Sendable {
        /// The layout, once the header has been read.
        public private(set) var layout: Layout?
        private var commentSensor: SensorKind?
        private var awaitingSensorName = false
        private var lastTimestamp: [SensorKind: Double] = [:]
        /// The path reported in errors.
        public let path: String?

        /// Creates a parser; `path` is only used in error messages.
        public init(path: String? = nil) {
            self.path = path
        }

        /// Parses one line. Returns the sample it holds, or `nil` for a comment, blank or header line.
        /// - Throws: ``SourceError`` of kind `.malformedInput` or `.timestampRegression` naming the line.
        public mutating func parse(line raw: Substring, number: Int) throws(SourceError) -> RawSample? {
            let line = raw.trimmingSpaces
            if line.isEmpty { return nil }
            if line.first == "#" {
                if let range = line.range(of: "sensor=") {
                    let name = line[range.upperBound...].prefix { $0.isLetter }
                    commentSensor = SensorKind(rawValue: String(name))
                }
                return nil
            }
            if awaitingSensorName {
                guard let commentSensor else {
                    throw fail(.malformedInput, "a one-sensor recording needs a '# sensor=NAME' comment before its first row", number)
                }
                awaitingSensorName = false
                layout = .singleSensor(commentSensor)
            }
            guard let layout else {
                let header = line.split(separator: ",").map { $0.trimmingSpaces.lowercased() }
                if header == ["timestamp", "sensor", "x", "y", "z"] {
                    self.layout = .multiSensor
                } else if header == ["timestamp", "x", "y", "z"] {
                    if let commentSensor {
                        self.layout = .singleSensor(commentSensor)
                    } else {
                        awaitingSensorName = true
                        return nil
                    }
                } else {
                    throw fail(.malformedInput, "unrecognised header '\(line)'; expected '\(ReplayFormat.multiSensorHeader)' or '\(ReplayFormat.singleSensorHeader)'", number)
                }
                return nil
            }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            let sensor: SensorKind
            let numbers: ArraySlice<Substring>
            switch layout {
            case .multiSensor:
                guard fields.count == 5 else { throw fail(.malformedInput, "expected 5 columns, found \(fields.count)", number) }
                guard let s = SensorKind(rawValue: String(fields[1].trimmingSpaces)) else {
                    throw fail(.malformedInput, "unknown sensor '\(fields[1])'", number)
                }
                sensor = s
                numbers = [fields[0], fields[2], fields[3], fields[4]]
            case .singleSensor(let s):
                guard fields.count == 4 else { throw fail(.malformedInput, "expected 4 columns, found \(fields.count)", number) }
                sensor = s
                numbers = fields[0...3]
            }
            var values = [Double](repeating: 0, count: 4)
            for (i, field) in numbers.enumerated() {
                guard let v = Double(field.trimmingSpaces) else {
                    throw fail(.malformedInput, "'\(field)' is not a number", number)
                }
                guard v.isFinite else { throw fail(.malformedInput, "value '\(field)' is not finite", number) }
                values[i] = v
            }
            let t = values[0]
            if let last = lastTimestamp[sensor], t < last {
                throw fail(.timestampRegression, "timestamp \(t) goes back from \(last) for \(sensor.rawValue)", number)
            }
            lastTimestamp[sensor] = t
            return RawSample(sensor: sensor, timestamp: t, value: Vector3(values[1], values[2], values[3]))
        }

        private func fail(_ kind: SourceError.Kind, _ message: String, _ line: Int) -> SourceError {
            SourceError(kind, message, path: path, line: line)
        }
    }
}

extension Substring {
    /// The substring without leading and trailing spaces, tabs and carriage returns.
    var trimmingSpaces: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}

extension StringProtocol {
    /// The range of the first occurrence of `needle`, without Foundation.
    func range(of needle: String) -> Range<Index>? {
        guard !needle.isEmpty else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(needle) {
                return i..<index(i, offsetBy: needle.count)
            }
            i = index(after: i)
        }
        return nil
    }
}
