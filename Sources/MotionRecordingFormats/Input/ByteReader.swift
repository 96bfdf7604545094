#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads lines (or JSON objects) from a ``ByteSource`` in bounded memory, without copying them.
///
/// A line is handed out as a buffer pointer into the reader's own storage, valid until the next call.
/// Line ends are `\n` or `\r\n`; a final line without a newline is read too. A UTF-8 byte-order mark at
/// the start is skipped; trailing spaces, tabs and `\r` are trimmed from every line. A line longer than
/// ``maximumLineLength`` is an error (binary data, or not a line-oriented file), so memory stays bounded
/// whatever the input. Not thread-safe: one reader belongs to one stream.
final class ByteReader {
    /// The longest line (or JSON object) accepted, in bytes: 1 MiB.
    static let maximumLineLength = 1 << 20

    /// The path shown in errors.
    let path: String
    /// The 1-based number of the last line returned (for JSON objects: the line the object starts on).
    private(set) var lineNumber = 0

    private var source: any ByteSource
    private var storage: UnsafeMutableRawBufferPointer
    private var lo = 0
    private var hi = 0
    private var atEnd = false
    private var started = false
    /// Newlines consumed before `lo` by ``nextObject()``, not yet added to ``lineNumber``.
    private var objectLine = 1

    init(source: any ByteSource, path: String, initialCapacity: Int = 1 << 16) {
        self.source = source
        self.path = path
        self.storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(64, initialCapacity), alignment: 16)
    }

    deinit { storage.deallocate() }

    private var base: UnsafeMutablePointer<UInt8> { storage.baseAddress!.assumingMemoryBound(to: UInt8.self) }

    /// Reads more bytes after `hi`, moving the unread part to the front and growing the storage when
    /// needed. Returns false at the end of the source.
    private func fill() throws(RecordingError) -> Bool {
        if atEnd { return false }
        if lo > 0 {
            if hi > lo { memmove(storage.baseAddress!, storage.baseAddress! + lo, hi - lo) }
            hi -= lo
            lo = 0
        }
        if hi == storage.count {
            guard storage.count < Self.maximumLineLength + 1 else { return true }
            let bigger = UnsafeMutableRawBufferPointer.allocate(
                byteCount: min(storage.count * 2, Self.maximumLineLength + 1), alignment: 16)
            bigger.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: hi)
            storage.deallocate()
            storage = bigger
        }
        let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[hi...]))
        if n == 0 {
            atEnd = true
            return false
        }
        hi += n
        if !started { skipByteOrderMark() }
        return true
    }

    private func skipByteOrderMark() {
        if hi - lo >= 3 {
            started = true
            if base[lo] == 0xEF && base[lo + 1] == 0xBB && base[lo + 2] == 0xBF { lo += 3 }
        } else if atEnd {
            started = true
        }
    }

    private func tooLong() -> RecordingError {
        RecordingError("line longer than \(Self.maximumLineLength >> 20) MiB: binary data or not a recording",
                       path: path, line: lineNumber + 1)
    }

    /// The next line, trimmed of trailing white space; `nil` at the end. Blank lines are returned (empty).
    func nextLine() throws(RecordingError) -> UnsafeBufferPointer<UInt8>? {
        var searchFrom = lo
        while true {
            if !started, !atEnd, hi - lo < 3 {
                _ = try fill()
                searchFrom = lo
                continue
            }
            if hi > searchFrom, let nl = memchr(base + searchFrom, 0x0A, hi - searchFrom) {
                let end = base.distance(to: nl.assumingMemoryBound(to: UInt8.self))
                let line = trimmed(lo, end)
                lo = end + 1
                lineNumber += 1
                return line
            }
            if hi - lo > Self.maximumLineLength { throw tooLong() }
            let scanned = hi - lo
            if try !fill() {
                guard lo < hi else { return nil }
                let line = trimmed(lo, hi)
                lo = hi
                lineNumber += 1
                return line
            }
            searchFrom = lo + scanned
        }
    }

    private func trimmed(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        var e = end
        while e > start, base[e - 1] == 0x20 || base[e - 1] == 0x09 || base[e - 1] == 0x0D { e -= 1 }
        return UnsafeBufferPointer(start: base + start, count: e - start)
    }

    // MARK: JSON objects

    /// The next top-level JSON object of a document that is a sequence of objects, optionally inside an
    /// array (`[{…},{…}]`, `{…}{…}`, one per line…): the bytes from `{` to its matching `}`. Commas,
    /// white space and the array's brackets between objects are skipped, and a missing closing `]` is
    /// accepted. ``lineNumber`` is the line the object starts on. `nil` at the end.
    /// - Throws: when something other than an object appears, or the input ends inside one.
    func nextObject() throws(RecordingError) -> UnsafeBufferPointer<UInt8>? {
        // Skip separators.
        while true {
            if lo == hi || (!started && !atEnd && hi - lo < 3) {
                if try !fill() && lo == hi { lineNumber = objectLine; return nil }
                continue
            }
            let b = base[lo]
            switch b {
            case 0x0A: objectLine += 1; lo += 1
            case 0x20, 0x09, 0x0D, 0x2C, 0x5B, 0x5D: lo += 1  // space tab CR , [ ]
            case 0x7B: break  // {
            default:
                lineNumber = objectLine
                throw RecordingError("expected a JSON object, found '\(Self.preview(UnsafeBufferPointer(start: base + lo, count: min(hi - lo, 20))))'",
                                     path: path, line: objectLine)
            }
            if b == 0x7B { break }
        }
        lineNumber = objectLine
        // Find the matching brace.
        var i = lo
        var depth = 0
        var inString = false
        var escaped = false
        var newlines = 0
        while true {
            if i == hi {
                let offset = i - lo
                if hi - lo > Self.maximumLineLength {
                    throw RecordingError("JSON object longer than 1 MiB", path: path, line: objectLine)
                }
                if try !fill() {
                    throw RecordingError("the input ends inside a JSON object", path: path, line: objectLine)
                }
                i = lo + offset
                continue
            }
            let b = base[i]
            if inString {
                if escaped { escaped = false }
                else if b == 0x5C { escaped = true }
                else if b == 0x22 { inString = false }
                else if b == 0x0A { newlines += 1 }
            } else {
                switch b {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth == 0 {
                        let object = UnsafeBufferPointer(start: base + lo, count: i + 1 - lo)
                        lo = i + 1
                        objectLine += newlines
                        return object
                    }
                case 0x0A: newlines += 1
                default: break
                }
            }
            i += 1
        }
    }

    /// Reads up to `limit` bytes from the start without consuming them (for detection).
    func peek(upTo limit: Int) throws(RecordingError) -> [UInt8] {
        while hi - lo < limit, try fill() {}
        return Array(UnsafeBufferPointer(start: base + lo, count: min(limit, hi - lo)))
    }

    /// Printable text of some bytes for an error message, at most 40 characters.
    static func preview(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var s = String(decoding: bytes.prefix(60), as: UTF8.self)
        s = String(s.map { $0.isASCII && ($0.asciiValue! < 0x20 || $0.asciiValue! == 0x7F) ? "?" : $0 })
        return s.count > 40 ? String(s.prefix(40)) + "…" : s
    }
}
