// The recording readers of MotionRecordings (issue 8), when that module has its readers
// (RecordingInput): Fuzz/build compiles it only then, so this target exists only then.
#if canImport(MotionRecordings)
import MotionRecordings

/// The input's first byte picks the format (detected from the content, or one forced), the rest
/// is the file: every reader, zip archives included, gets arbitrary bytes.
@Sendable func fuzzRecordings(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let formats = RecordingFormat.allCases
    let choice = Int(first) % (formats.count + 1)
    let format = choice == 0 ? nil : formats[choice - 1]
    let body = Array(bytes.dropFirst())
    guard var input = try? RecordingInput.open(bytes: body, name: "fuzz", format: format) else { return }
    // Every good sample before an error is returned; an error ends the stream.
    for i in input.streams.indices {
        var count = 0
        while count < 100_000, let s = try? input.streams[i].next() {
            count += 1
            _ = s
        }
    }
}

let recordingTargets: [String: @Sendable ([UInt8]) -> Void] = ["recordings": fuzzRecordings]
#else
let recordingTargets: [String: @Sendable ([UInt8]) -> Void] = [:]
#endif
