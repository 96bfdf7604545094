import ArgumentParser

/// The line formats of `coremotion stream` and `coremotion recorded`: CSV with a header, or JSON
/// Lines with the same field names. Raw samples are written by MotionRecordingFormats'
/// `RawRecordingWriter`, device motion by its `DeviceMotionWriter`, so `replay:` and `fuse` read
/// both back. Units are Core Motion's; `.` is the decimal separator whatever the locale.
enum SampleFormat: String, ExpressibleByArgument, CaseIterable {
    case csv
    case jsonl
}
