import Foundation
import MotionSources

/// The accelerometer samples of a recording in the project's CSV layouts (`timestamp,sensor,x,y,z` or
/// `timestamp,x,y,z` with `# sensor=accelerometer`), read through ``ReplayFormat/Parser`` so a malformed
/// line is reported with its number. Other sensors' rows are skipped.
///
/// - Note: for the coordinator: when `MotionRecordings` gains `RecordingInput.open(path:format:)`, read
///   through it here so every recording format is accepted.
struct AccelerometerInput {
    /// Timestamps (s) and acceleration (g, Core Motion sign).
    var t: [Double] = [], x: [Double] = [], y: [Double] = [], z: [Double] = []

    /// Reads `path`; throws a one-line ``CLIError`` naming the file (and line) on failure.
    init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("\(path): cannot read the file")
        }
        let text = String(decoding: data, as: UTF8.self)
        var parser = ReplayFormat.Parser(path: path)
        var number = 0
        do {
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                number += 1
                guard let sample = try parser.parse(line: line, number: number), sample.sensor == .accelerometer else {
                    continue
                }
                t.append(sample.timestamp)
                x.append(sample.value.x)
                y.append(sample.value.y)
                z.append(sample.value.z)
            }
        } catch {
            throw CLIError(error.description)
        }
        if parser.layout == nil { throw CLIError("\(path): no header; expected '\(ReplayFormat.multiSensorHeader)'") }
        if t.isEmpty { throw CLIError("\(path): no accelerometer samples") }
    }
}
