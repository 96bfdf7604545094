import Foundation

/// What holds a recording's parts: one file, a folder, a zip archive, or entries in memory.
struct Container {
    enum Kind: Equatable { case file, folder, zip, memory }

    /// One part: a file of a folder, an entry of an archive, or the file itself.
    struct Entry {
        /// The path inside the container, `/`-separated (for a plain file: its name).
        var name: String
        /// The path shown in errors: `rec.csv`, `export/Gyroscope.csv`, `export.zip/Gyroscope.csv`.
        var displayPath: String
        /// Opens a new stream of the entry's bytes.
        var open: () throws(RecordingError) -> any ByteSource

        /// The last path component.
        var baseName: String { name.split(separator: "/").last.map(String.init) ?? name }

        /// A line reader of the entry.
        func reader() throws(RecordingError) -> ByteReader {
            ByteReader(source: try open(), path: displayPath)
        }

        /// The first bytes (at most `limit`), for detection.
        func prefix(_ limit: Int = 1 << 16) throws(RecordingError) -> [UInt8] {
            try reader().peek(upTo: limit)
        }
    }

    var kind: Kind
    var displayPath: String
    var entries: [Entry]

    /// The entry whose path is `name`, or ends with `/name`, ignoring case.
    func entry(named name: String) -> Entry? {
        let lower = name.lowercased()
        return entries.first { $0.name.lowercased() == lower || $0.name.lowercased().hasSuffix("/" + lower) }
    }

    /// True for files that are never part of a recording: macOS resource forks, hidden files.
    static func isIgnored(_ name: String) -> Bool {
        let parts = name.split(separator: "/")
        if parts.contains(where: { $0 == "__MACOSX" }) { return true }
        guard let last = parts.last else { return true }
        return last.hasPrefix(".")
    }

    /// Opens `path`: a folder, a zip archive (by content), or a plain file.
    static func open(path: String) throws(RecordingError) -> Container {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw RecordingError("no such file or folder", path: path)
        }
        if isDirectory.boolValue { return try folder(path) }
        let bytes = try FileBytes(path: path)
        return try fromBytes(bytes, displayPath: path, name: (path as NSString).lastPathComponent, kind: .file)
    }

    /// One file's bytes: a zip archive if they start like one, else a single-entry container.
    static func fromBytes(_ bytes: RandomAccessBytes, displayPath: String, name: String, kind: Kind) throws(RecordingError) -> Container {
        let head = try bytes.bytes(at: 0, count: 4)
        if ZipArchive.looksLikeZip(head) {
            let zip = try ZipArchive(bytes: bytes, path: displayPath)
            let entries = zip.entries.filter { !$0.name.hasSuffix("/") && !isIgnored($0.name) }.map { e in
                Entry(name: e.name, displayPath: displayPath + "/" + e.name,
                      open: { () throws(RecordingError) -> any ByteSource in try zip.open(e) })
            }
            return Container(kind: .zip, displayPath: displayPath, entries: entries)
        }
        let entry = Entry(name: name, displayPath: displayPath,
                          open: { () throws(RecordingError) -> any ByteSource in RangeSource(bytes) })
        return Container(kind: kind, displayPath: displayPath, entries: [entry])
    }

    /// Named entries held in memory (tests, fuzzing): a zip if one entry only and it is a zip.
    static func fromMemory(_ entries: [String: [UInt8]], displayPath: String) throws(RecordingError) -> Container {
        if entries.count == 1, let (name, bytes) = entries.first {
            return try fromBytes(MemoryBytes(bytes), displayPath: displayPath == "" ? name : displayPath, name: name, kind: .memory)
        }
        let list = entries.keys.sorted().filter { !isIgnored($0) }.map { name in
            let data = MemoryBytes(entries[name]!)
            return Entry(name: name, displayPath: displayPath + "/" + name,
                         open: { () throws(RecordingError) -> any ByteSource in RangeSource(data) })
        }
        return Container(kind: .folder, displayPath: displayPath, entries: list)
    }

    private static func folder(_ path: String) throws(RecordingError) -> Container {
        let root = URL(fileURLWithPath: path)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else {
            throw RecordingError("cannot list the folder", path: path)
        }
        var names: [String] = []
        let rootPath = root.standardizedFileURL.path
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            var full = url.standardizedFileURL.path
            if full.hasPrefix(rootPath + "/") { full.removeFirst(rootPath.count + 1) }
            if !isIgnored(full) { names.append(full) }
            if names.count > 10_000 { throw RecordingError("not a known export: more than 10,000 files", path: path) }
        }
        names.sort()
        let shownRoot = path.hasSuffix("/") ? String(path.dropLast()) : path
        let entries = names.map { name in
            let file = shownRoot + "/" + name
            return Entry(name: name, displayPath: file,
                         open: { () throws(RecordingError) -> any ByteSource in RangeSource(try FileBytes(path: file)) })
        }
        return Container(kind: .folder, displayPath: shownRoot, entries: entries)
    }
}
