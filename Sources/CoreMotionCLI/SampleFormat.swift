import ArgumentParser
import OpenCoreMotion

/// The line formats `coremotion stream` writes for raw sensors (device motion: MotionRecordings'
/// ``DeviceMotionWriter``). Numbers use Swift's shortest round-trip form and
/// `.` as the decimal separator, whatever the locale. Units are Core Motion's.
enum SampleFormat: String, ExpressibleByArgument, CaseIterable {
    case csv
    case jsonl

    /// The CSV header of one raw sensor: `timestamp,x,y,z`. The next line is a comment naming the
    /// sensor (`# sensor=gyro`), which `replay:` reads.
    static let rawHeader = "timestamp,x,y,z"
    /// The CSV header of all raw sensors interleaved.
    static let multiSensorHeader = "timestamp,sensor,x,y,z"

    func line(timestamp: Double, sensor: String?, x: Double, y: Double, z: Double) -> String {
        switch self {
        case .csv:
            if let sensor { return "\(timestamp),\(sensor),\(x),\(y),\(z)" }
            return "\(timestamp),\(x),\(y),\(z)"
        case .jsonl:
            let s = sensor.map { "\"sensor\":\"\($0)\"," } ?? ""
            return "{\"timestamp\":\(timestamp),\(s)\"x\":\(x),\"y\":\(y),\"z\":\(z)}"
        }
    }
}
