import Foundation
import MotionFusion

/// A raw sensor recording as written by `coremotion stream --sensor raw`: CSV with header
/// `timestamp,sensor,x,y,z`, `sensor` ∈ `accelerometer | gyro | magnetometer`, units g (Core Motion sign),
/// rad/s, µT; timestamps in seconds. Rows may interleave sensors at different rates.
public struct SensorRecording: Sendable {
    /// Which sensor a row comes from.
    public enum Sensor: String, Sendable, CaseIterable {
        /// Accelerometer, g.
        case accelerometer
        /// Gyroscope, rad/s.
        case gyro
        /// Magnetometer, µT.
        case magnetometer
    }

    /// One row.
    public struct Row: Sendable, Hashable {
        /// Timestamp, seconds.
        public var timestamp: Double
        /// The sensor.
        public var sensor: Sensor
        /// The value (unit per ``Sensor``).
        public var value: Vector3
    }

    /// The rows in file order.
    public var rows: [Row]
    /// Number of lines that could not be parsed (skipped).
    public var skippedLines: Int

    /// Parses a recording. Unknown sensors and malformed lines are skipped and counted.
    public init(contentsOf url: URL) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw BroadError.unreadable(url.path)
        }
        self.init(text: String(decoding: data, as: UTF8.self))
    }

    /// Parses CSV text.
    public init(text: String) {
        var rows: [Row] = []
        var skipped = 0
        var header: [String]? = nil
        var idx = (t: 0, s: 1, x: 2, y: 3, z: 4)
        for line in text.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("#") { continue }
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            if header == nil {
                header = f
                if let t = f.firstIndex(of: "timestamp"), let s = f.firstIndex(of: "sensor"),
                   let x = f.firstIndex(of: "x"), let y = f.firstIndex(of: "y"), let z = f.firstIndex(of: "z") {
                    idx = (t, s, x, y, z)
                }
                continue
            }
            guard f.count > max(idx.t, idx.s, idx.x, idx.y, idx.z),
                  let t = Double(f[idx.t]), let sensor = Sensor(rawValue: f[idx.s].lowercased()),
                  let x = Double(f[idx.x]), let y = Double(f[idx.y]), let z = Double(f[idx.z]) else {
                skipped += 1
                continue
            }
            rows.append(Row(timestamp: t, sensor: sensor, value: Vector3(x, y, z)))
        }
        self.rows = rows
        self.skippedLines = skipped
    }

    /// Whether the recording contains magnetometer rows.
    public var hasMagnetometer: Bool { rows.contains { $0.sensor == .magnetometer } }
}
