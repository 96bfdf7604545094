import MotionSources

extension ReplaySource {
    /// Opens a recording file, folder or archive.
    ///
    /// - Parameters:
    ///   - path: the recording.
    ///   - format: the format, or `nil` to detect it from the content.
    ///   - clock: the pacing; default ``Clock/realTime``.
    ///   - notice: where notes on playback go (compressed gaps); default standard error.
    ///   - sourceClock: the clock real-time playback follows; default the real one, a ``ManualClock`` in tests.
    /// - Throws: ``SourceError`` when the recording cannot be opened or holds no sample before its
    ///   first bad line.
    package convenience init(path: String, format: RecordingFormat? = nil, clock: Clock = .realTime,
                             notice: @escaping @Sendable (String) -> Void = ReplaySource.standardErrorNotice,
                             sourceClock: any SourceClock = MonotonicSourceClock.shared) throws(SourceError) {
        try self.init(name: path, clock: clock, notice: notice, sourceClock: sourceClock) { () throws(RecordingError) -> [any SampleStream] in
            try RecordingInput.open(path: path, format: format).streams
        }
    }

}

extension SourceProvider {
    /// Recordings: `replay:PATH` (any recording ``RecordingInput`` reads, played in real time), and the
    /// recording's pressure as a barometer (``RecordedBarometerSource``; none when it has no pressure or
    /// cannot be read). It finds no device by itself.
    package static let replay = SourceProvider(
        schemes: SourceSchemes.replay,
        usage: "replay:PATH",
        makeSource: { spec, _ throws(SourceError) in
            let path = String(spec.dropFirst("replay:".count))
            guard spec.count > "replay".count, !path.isEmpty else {
                throw SourceError(.unavailable, "replay needs a file: replay:PATH")
            }
            return try ReplaySource(path: path)
        },
        makeBarometer: { spec, _ in
            let path = String(spec.dropFirst("replay:".count))
            guard spec.count > "replay".count, !path.isEmpty else { return nil }
            return (try? RecordedBarometerSource(path: path)) ?? nil
        }
    )
}
