/// A recording opened for reading: its format, one lazily read stream of samples per part, and what
/// it says about itself.
///
/// The one way in for every recording format (``RecordingFormat``): a plain file, an unzipped export
/// folder, or a zip archive, with the format detected from content (never the file name) unless it is
/// forced. Samples come out in Core Motion's units and signs; each stream yields its part's samples in
/// the order the part holds them (merging them by timestamp is the consumer's job). Opening reads only
/// the small parts needed to decide how to read (headers, `Metadata.csv`, `meta/time.csv`); the data
/// itself is read as the streams are pulled, in bounded memory (about 64 KiB per stream, at most
/// 1 MiB for the longest line).
///
/// Not thread-safe: use one input (and each of its streams) from one thread at a time. Values are
/// independent copies of nothing shared, so different inputs may be read on different threads.
package struct RecordingInput {
    /// The path the input was opened from (for in-memory inputs, the name given).
    package let path: String
    /// The format, as detected or forced.
    package let format: RecordingFormat
    /// One stream per part (file or archive entry, or a pair of them joined, such as Sensor Logger's
    /// `Accelerometer` + `Gravity`), each in the order of its part, read lazily.
    package var streams: [any SampleStream]
    /// What the recording says about itself and how it is read: `format`, `container` (`file`,
    /// `folder`, `zip`, `memory`), `timeBase` (what timestamps mean), `conversion` (what was done to
    /// the values), and per format for example `platform`, `appVersion`, `device`, `standardisation`.
    package var metadata: [String: String]

    /// Creates an input from parts (for readers of other sources and tests).
    package init(path: String, format: RecordingFormat, streams: [any SampleStream], metadata: [String: String]) {
        self.path = path
        self.format = format
        self.streams = streams
        self.metadata = metadata
    }

    /// Opens a recording file, export folder or zip archive.
    ///
    /// - Parameters:
    ///   - path: a file (plain or zip, told apart by content) or a folder holding a known export.
    ///   - format: the format to read it as; `nil` (the default) detects it from content.
    /// - Throws: ``RecordingError`` naming the path (and line, when one is at fault): no such file, a
    ///   folder that is not a known export, an empty or binary file, content of no known format,
    ///   a truncated or corrupt zip archive, or a malformed header.
    package static func open(path: String, format: RecordingFormat? = nil) throws(RecordingError) -> RecordingInput {
        try Self.open(container: try Container.open(path: path), format: format)
    }

    /// Opens a recording held in memory, exactly as ``open(path:format:)`` would read a file with these
    /// bytes (zip archives included). Safe on any bytes: meant for tests and fuzzing.
    /// - Parameter name: the path shown in errors.
    package static func open(bytes: [UInt8], name: String = "<memory>", format: RecordingFormat? = nil) throws(RecordingError) -> RecordingInput {
        try Self.open(container: try Container.fromBytes(MemoryBytes(bytes), displayPath: name, name: name, kind: .memory), format: format)
    }

    /// Opens a recording made of named parts held in memory, as ``open(path:format:)`` reads a folder
    /// holding these files (`["Metadata.csv": …, "Accelerometer.csv": …]`, `"meta/time.csv"`). One entry
    /// alone is read as a file of that name.
    /// - Parameter name: the folder name shown in errors (`name/Accelerometer.csv:3: …`).
    package static func open(entries: [String: [UInt8]], name: String = "<memory>", format: RecordingFormat? = nil) throws(RecordingError) -> RecordingInput {
        try Self.open(container: try Container.fromMemory(entries, displayPath: name), format: format)
    }

    static func open(container: Container, format forced: RecordingFormat?) throws(RecordingError) -> RecordingInput {
        let format: RecordingFormat
        if let forced { format = forced } else { format = try FormatDetection.detect(container) }
        var (streams, metadata): ([any SampleStream], [String: String])
        switch format {
        case .csv, .jsonl:
            let entries = try FormatDetection.entries(of: container, as: format)
            streams = []
            for e in entries {
                let r = try e.reader()
                streams.append(format == .csv ? RawCSVStream(reader: r) as any SampleStream : RawJSONLStream(reader: r))
            }
            metadata = [
                "timeBase": "seconds since boot of the recording machine, as written",
                "conversion": "none (Core Motion units: g, rad/s, µT)",
            ]
        case .broad:
            let entry = try FormatDetection.single(of: container, as: format)
            (streams, metadata) = try BroadReader.open(entry)
        case .sensorlogger:
            (streams, metadata) = try SensorLoggerReader.open(container)
        case .sensorlog:
            let entry = try FormatDetection.single(of: container, as: format)
            (streams, metadata) = try SensorLogReader.open(entry)
        case .phyphox:
            (streams, metadata) = try PhyphoxReader.open(container)
        case .hyperimu:
            let entry = try FormatDetection.single(of: container, as: format)
            (streams, metadata) = try HyperIMUReader.open(entry)
        }
        metadata["format"] = format.rawValue
        metadata["container"] = switch container.kind {
        case .file: "file"
        case .folder: "folder"
        case .zip: "zip"
        case .memory: "memory"
        }
        return RecordingInput(path: container.displayPath, format: format, streams: streams, metadata: metadata)
    }

    /// Every sample of every stream, stream after stream, each in file order (not merged by time).
    /// Reads the whole recording into memory: for tests and small files.
    /// - Throws: the first ``RecordingError`` of any stream.
    package mutating func readAllInFileOrder() throws(RecordingError) -> [RecordedSample] {
        var all: [RecordedSample] = []
        for i in streams.indices {
            while let s = try streams[i].next() { all.append(s) }
        }
        return all
    }
}
