import MotionSources

extension ReplaySource {
    /// Opens a recording file, folder or archive.
    ///
    /// - Parameters:
    ///   - path: the recording.
    ///   - format: the format, or `nil` to detect it from the content.
    ///   - clock: the pacing; default ``Clock/realTime``.
    /// - Throws: ``SourceError`` when the recording cannot be opened or holds no sample before its
    ///   first bad line.
    package convenience init(path: String, format: RecordingFormat? = nil, clock: Clock = .realTime) throws(SourceError) {
        try self.init(name: path, clock: clock) { () throws(RecordingError) -> [any SampleStream] in
            try RecordingInput.open(path: path, format: format).streams
        }
    }

}
