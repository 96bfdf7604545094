/// Which format a recording is in, from its content (never from file names, except to find the
/// parts of a multi-file export: `Metadata.csv`, `meta/time.csv`).
enum FormatDetection {
    /// Known format names for messages.
    static let known = RecordingFormat.allCases.map(\.rawValue).joined(separator: ", ")

    /// The format of a container's content.
    static func detect(_ c: Container) throws(RecordingError) -> RecordingFormat {
        if c.kind == .folder || c.kind == .zip || c.entries.count != 1 {
            return try detectExport(c)
        }
        let entry = c.entries[0]
        let prefix = try entry.prefix()
        if let f = sniff(prefix) { return f }
        throw unrecognised(prefix, path: entry.displayPath)
    }

    private static func unrecognised(_ prefix: [UInt8], path: String) -> RecordingError {
        var body = prefix[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return RecordingError("empty file: no header and no samples", path: path)
        }
        if isBinary(prefix) { return RecordingError("binary data: not a recording in a known format (\(known))", path: path) }
        let firstLine = body.prefix { $0 != 0x0A }.prefix(200)
        let shown = firstLine.withUnsafeBufferPointer { ByteReader.preview($0) }
        return RecordingError("not a recording in a known format (\(known)); it starts '\(shown)'. Use --input-format to force one",
                              path: path, line: 1)
    }

    static func isBinary(_ prefix: [UInt8]) -> Bool {
        prefix.contains(0) || prefix.prefix(4096).filter({ $0 < 0x09 || ($0 > 0x0D && $0 < 0x20) }).count > 8
    }

    private static func detectExport(_ c: Container) throws(RecordingError) -> RecordingFormat {
        guard !c.entries.isEmpty else {
            throw RecordingError("not a known export: it holds no files", path: c.displayPath)
        }
        var sniffed: [(Container.Entry, RecordingFormat?)] = []
        for e in c.entries where e.name.lowercased().hasSuffix(".csv") || e.name.lowercased().hasSuffix(".json")
            || e.name.lowercased().hasSuffix(".jsonl") || e.name.lowercased().hasSuffix(".txt") || !e.baseName.contains(".") {
            sniffed.append((e, sniff(try e.prefix(4096))))
        }
        let names = Set(c.entries.map { $0.baseName.lowercased() })
        if sniffed.contains(where: { $0.1 == .sensorlogger }) || (names.contains("metadata.csv") && SensorLoggerReader.hasSensorFile(c)) {
            return .sensorlogger
        }
        if c.entries.contains(where: { $0.name.lowercased().hasSuffix("meta/time.csv") || $0.name.lowercased().hasSuffix("meta/device.csv") })
            || sniffed.contains(where: { $0.1 == .phyphox }) {
            return .phyphox
        }
        let formats = sniffed.compactMap(\.1)
        if let first = formats.first, (first == .csv || first == .jsonl), formats.count == sniffed.count, formats.allSatisfy({ $0 == first }) {
            return first
        }
        if formats.count == 1, let only = formats.first { return only }
        let shown = c.entries.prefix(5).map(\.name).joined(separator: ", ") + (c.entries.count > 5 ? ", …" : "")
        throw RecordingError("not a known export (Sensor Logger, phyphox, or recordings of the project's own formats); it holds \(shown)",
                             path: c.displayPath)
    }

    /// The format that the first bytes of one file suggest, or `nil`.
    static func sniff(_ prefix: [UInt8]) -> RecordingFormat? {
        var body = prefix[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if isBinary(Array(body)) { return nil }
        let text = String(decoding: body, as: UTF8.self)
        var lines = body.split(separator: 0x0A, omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self).trimming(" \t\r") }
            .filter { !$0.isEmpty }
        guard let first = lines.first else { return nil }
        if first.hasPrefix("@") { return .hyperimu }
        if first.hasPrefix("[") { return text.contains("\"sensor\"") ? .sensorlogger : nil }
        if first.hasPrefix("{") {
            if first.contains("\"seconds_elapsed\"") { return .sensorlogger }
            return first.contains("\"timestamp\"") ? .jsonl : nil
        }
        if first.hasPrefix("# BROAD") { return .broad }
        if first.hasPrefix("#") {
            lines.removeAll { $0.hasPrefix("#") }
            guard let header = lines.first else { return nil }
            if header.hasPrefix("{") { return header.contains("\"timestamp\"") ? .jsonl : nil }
            return sniffHeader(header)
        }
        return sniffHeader(first)
    }

    private static func sniffHeader(_ header: String) -> RecordingFormat? {
        let separators: Set<Character> = [",", ";", "\t"]
        let names = header.split(whereSeparator: { separators.contains($0) })
            .map { $0.trimming(" \"").lowercased() }
        let set = Set(names)
        if set.contains("acc_x") && set.contains("gyr_x") { return .broad }
        if names.contains(where: { $0.hasPrefix("accelerometertimestamp_sincereboot") || $0.hasPrefix("gyrotimestamp_sincereboot")
            || $0.hasPrefix("motiontimestamp_sincereboot") || $0.hasPrefix("loggingtime(") }) {
            return .sensorlog
        }
        if set.contains("time") && set.contains("seconds_elapsed") { return .sensorlogger }
        if set.contains("timestamp") && (set.contains("q_w") || (set.contains("x") && set.contains("y") && set.contains("z"))) {
            return .csv
        }
        if names.first?.hasPrefix("time (") == true { return .phyphox }
        if set.contains("timestamp") && names.contains(where: { $0.hasSuffix(".x") }) { return .hyperimu }
        return nil
    }

    /// The entries of a container read as the project's own format: all of them for a folder or an
    /// archive (each a stream), or the file itself.
    static func entries(of c: Container, as format: RecordingFormat) throws(RecordingError) -> [Container.Entry] {
        guard !c.entries.isEmpty else { throw RecordingError("not a known export: it holds no files", path: c.displayPath) }
        if c.entries.count == 1 { return c.entries }
        var chosen: [Container.Entry] = []
        for e in c.entries where sniff(try e.prefix(4096)) == format { chosen.append(e) }
        guard !chosen.isEmpty else {
            throw RecordingError("holds no \(format.rawValue) recording", path: c.displayPath)
        }
        return chosen
    }

    /// The one entry of a container holding a one-file format.
    static func single(of c: Container, as format: RecordingFormat) throws(RecordingError) -> Container.Entry {
        let chosen = try entries(of: c, as: format)
        guard chosen.count == 1 else {
            throw RecordingError("holds \(chosen.count) \(format.rawValue) files; open one of them", path: c.displayPath)
        }
        return chosen[0]
    }
}
