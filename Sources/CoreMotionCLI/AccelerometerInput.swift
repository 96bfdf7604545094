import MotionRecordingFormats
import MotionSources

/// The accelerometer samples of a recording, in time order, read through MotionRecordingFormats: every
/// format it reads (the project's CSV and JSONL, phone exports, BROAD), merged by timestamp, so a
/// malformed line is reported as `file:line: message`. Other sensors' samples are skipped.
struct AccelerometerInput {
    /// Timestamps (s) and acceleration (g, Core Motion sign).
    var t: [Double] = [], x: [Double] = [], y: [Double] = [], z: [Double] = []

    /// Reads `path` (format detected from its content); throws a one-line ``CLIError`` naming the
    /// file (and line) on failure.
    init(path: String) throws {
        do throws(RecordingError) {
            let input = try RecordingInput.open(path: path)
            var merge = SampleMerge(input.streams)
            while let recorded = try merge.next() {
                let sample = recorded.sample
                guard sample.sensor == .accelerometer else { continue }
                t.append(sample.timestamp)
                x.append(sample.value.x)
                y.append(sample.value.y)
                z.append(sample.value.z)
            }
        } catch {
            throw CLIError(error.description)
        }
        if t.isEmpty { throw CLIError("\(path): no accelerometer samples") }
    }
}
