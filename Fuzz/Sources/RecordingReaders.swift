// The recording readers of MotionRecordingFormats (issue 8), when that module has its readers
// (RecordingInput): Fuzz/build compiles it only then, so this target exists only then.
#if canImport(MotionRecordingFormats)
import MotionRecordingFormats

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

/// What `replay:` and `fuse` do with a file: the project's CSV read and merged by timestamp. Every
/// sample the merge returns is finite and no older than the one before it.
@Sendable func fuzzReplay(_ bytes: [UInt8]) {
    guard let input = try? RecordingInput.open(bytes: bytes, name: "fuzz.csv", format: .csv) else { return }
    var merge = SampleMerge(input.streams)
    var last = -Double.infinity
    var count = 0
    while count < 100_000, let s = try? merge.next() {
        count += 1
        require(s.sample.timestamp.isFinite && s.sample.value.isFinite, "merged samples are finite")
        require(s.sample.timestamp >= last, "merged samples come out in time order")
        last = s.sample.timestamp
    }
}

/// Sensor Logger's push message (HTTP push from phones, MQTT payloads), JSON or the compact binary
/// layout: decoded, or refused with a message, never a trap.
@Sendable func fuzzPush(_ bytes: [UInt8]) {
    do {
        let message = try SensorLoggerPush.decode(bytes)
        for e in message.payload { _ = e.name }
    } catch {
        require(!error.message.isEmpty, "a refusal says why")
    }
}

let recordingTargets: [String: @Sendable ([UInt8]) -> Void] = [
    "recordings": fuzzRecordings,
    "replay": fuzzReplay,
    "push": fuzzPush,
]
#else
let recordingTargets: [String: @Sendable ([UInt8]) -> Void] = [:]
#endif
