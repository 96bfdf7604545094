import Foundation

/// A numeric CSV table whose header may follow `#` comment lines; empty or unparsable fields are NaN.
///
/// Parsed byte by byte with `strtod` for speed (BROAD trials are ~8 MB each).
public struct CSVTable: Sendable {
    /// The `#` comment lines, joined with newlines (without the `#`).
    public var comment: String
    /// Column names from the header.
    public var names: [String]
    /// Columns, each with one value per row.
    public var columns: [[Double]]
    /// Number of data rows.
    public var rowCount: Int { columns.first?.count ?? 0 }

    /// The column named `name`, if present.
    public func column(_ name: String) -> [Double]? {
        names.firstIndex(of: name).map { columns[$0] }
    }

    /// Reads a file.
    public init(contentsOf url: URL) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw BroadError.unreadable(url.path)
        }
        self.init(data: data)
    }

    /// Parses CSV bytes.
    public init(data: Data) {
        var bytes = [UInt8](data)
        bytes.append(0)
        var comments: [String] = []
        var names: [String] = []
        var columns: [[Double]] = []
        bytes.withUnsafeMutableBufferPointer { buf in
            let n = buf.count - 1
            var i = 0
            // Comment lines and header.
            while i < n {
                var j = i
                while j < n && buf[j] != 10 { j += 1 }
                var end = j
                if end > i && buf[end - 1] == 13 { end -= 1 }
                let line = String(decoding: UnsafeBufferPointer(rebasing: buf[i..<end]), as: UTF8.self)
                i = j + 1
                if line.hasPrefix("#") {
                    comments.append(String(line.dropFirst()))
                    continue
                }
                names = line.split(separator: ",", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                break
            }
            columns = Array(repeating: [], count: names.count)
            let estimate = max(0, (n - i) / max(1, 12 * names.count))
            for c in columns.indices { columns[c].reserveCapacity(estimate) }
            guard let base = buf.baseAddress else { return }
            // Rows.
            while i < n {
                if buf[i] == 10 || buf[i] == 13 { i += 1; continue }
                var c = 0
                while true {
                    // Parse one field starting at i.
                    var value = Double.nan
                    var endPtr: UnsafeMutablePointer<CChar>? = nil
                    let start = UnsafeMutableRawPointer(base + i).assumingMemoryBound(to: CChar.self)
                    if buf[i] != 44 && buf[i] != 10 && buf[i] != 13 {
                        let v = strtod(start, &endPtr)
                        if let e = endPtr, e != start {
                            value = v
                            i += e - start
                        }
                    }
                    // Skip to the field's end.
                    while i < n && buf[i] != 44 && buf[i] != 10 { i += 1 }
                    if c < columns.count { columns[c].append(value) }
                    c += 1
                    if i >= n || buf[i] == 10 { i += 1; break }
                    i += 1 // comma
                }
                while c < columns.count { columns[c].append(.nan); c += 1 }
            }
        }
        self.comment = comments.joined(separator: "\n")
        self.names = names
        self.columns = columns
    }
}
