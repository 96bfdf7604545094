import MotionSources

extension ReplaySource {
    /// Opens a recording file, folder or archive.
    ///
    /// - Parameters:
    ///   - path: the recording.
    ///   - format: the format, or `nil` to detect it from the content.
    ///   - clock: the pacing; default ``Clock/realTime``.
    ///   - notice: where notes on playback go (compressed gaps); default standard error.
    /// - Throws: ``SourceError`` when the recording cannot be opened or holds no sample before its
    ///   first bad line.
    package convenience init(path: String, format: RecordingFormat? = nil, clock: Clock = .realTime,
                             notice: @escaping @Sendable (String) -> Void = ReplaySource.standardErrorNotice) throws(SourceError) {
        try self.init(name: path, clock: clock, notice: notice) { () throws(RecordingError) -> [any SampleStream] in
            try RecordingInput.open(path: path, format: format).streams
        }
    }

}
