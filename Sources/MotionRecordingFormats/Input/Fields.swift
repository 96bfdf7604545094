/// Splits one line of delimited text into fields, in place.
///
/// A field may be quoted (`"Time (s)"`; a doubled `""` inside stands for one quote and is left
/// doubled in the range); spaces and tabs around a field are trimmed (unless the separator is a tab).
/// The ranges index into the line. The array is reused, so splitting allocates nothing once it has
/// grown to the widest line.
struct FieldSplitter {
    let separator: UInt8
    private(set) var ranges: [Range<Int>] = []

    init(separator: UInt8) { self.separator = separator }

    mutating func split(_ line: UnsafeBufferPointer<UInt8>) {
        ranges.removeAll(keepingCapacity: true)
        let n = line.count
        var i = 0
        while true {
            // Leading white space.
            while i < n, line[i] == 0x20 || (line[i] == 0x09 && separator != 0x09) { i += 1 }
            var start = i
            var end: Int
            if i < n, line[i] == 0x22 {
                start = i + 1
                i = start
                while i < n {
                    if line[i] == 0x22 {
                        if i + 1 < n, line[i + 1] == 0x22 { i += 2; continue }
                        break
                    }
                    i += 1
                }
                end = i
                if i < n { i += 1 }  // closing quote
                while i < n, line[i] != separator { i += 1 }
            } else {
                while i < n, line[i] != separator { i += 1 }
                end = i
                while end > start, line[end - 1] == 0x20 || (line[end - 1] == 0x09 && separator != 0x09) { end -= 1 }
            }
            ranges.append(start..<end)
            if i >= n { break }
            i += 1  // separator
        }
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// The sub-buffer of `range`.
    @inline(__always)
    func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: baseAddress.map { $0 + range.lowerBound }, count: range.count)
    }

    /// The bytes as text (invalid UTF-8 repaired).
    var text: String { String(decoding: self, as: UTF8.self) }

    /// True when the bytes equal the ASCII `string`.
    func equals(_ string: StaticString) -> Bool {
        guard count == string.utf8CodeUnitCount else { return false }
        let p = string.utf8Start
        for i in 0..<count where self[i] != p[i] { return false }
        return true
    }

    /// True when the first non-blank byte is `#`.
    var isComment: Bool {
        for b in self {
            if b == 0x20 || b == 0x09 { continue }
            return b == 0x23
        }
        return false
    }

    /// True when every byte is a space or tab (or there is none).
    var isBlank: Bool { allSatisfy { $0 == 0x20 || $0 == 0x09 } }
}

/// A flat JSON object parsed in place: keys and values as byte ranges of the object's text.
///
/// Strings are unquoted (escapes are left as written: the formats read here never escape inside the
/// names or numbers they need); numbers, `true`, `false` and `null` are kept as their text; nested
/// objects and arrays are kept whole. Reused between objects, so parsing allocates nothing once grown.
struct FlatJSONObject {
    /// One member: key and value ranges, and whether the value was a JSON string.
    struct Member {
        var key: Range<Int>
        var value: Range<Int>
        var isString: Bool
    }
    private(set) var members: [Member] = []

    /// Parses `object` (from `{` to `}`); returns a message saying what is wrong, or `nil`.
    mutating func parse(_ o: UnsafeBufferPointer<UInt8>) -> String? {
        members.removeAll(keepingCapacity: true)
        let n = o.count
        var i = 0
        func skipSpace() { while i < n, o[i] == 0x20 || o[i] == 0x09 || o[i] == 0x0A || o[i] == 0x0D { i += 1 } }
        func string() -> Range<Int>? {
            guard i < n, o[i] == 0x22 else { return nil }
            let start = i + 1
            i = start
            while i < n {
                if o[i] == 0x5C { i += 2; continue }
                if o[i] == 0x22 { i += 1; return start..<(i - 1) }
                i += 1
            }
            return nil
        }
        skipSpace()
        guard i < n, o[i] == 0x7B else { return "not a JSON object" }
        i += 1
        skipSpace()
        if i < n, o[i] == 0x7D { i += 1; skipSpace(); return i == n ? nil : "text after the JSON object" }
        while true {
            skipSpace()
            guard let key = string() else { return "malformed JSON: expected a quoted key" }
            skipSpace()
            guard i < n, o[i] == 0x3A else { return "malformed JSON: expected ':' after a key" }
            i += 1
            skipSpace()
            guard i < n else { return "malformed JSON: missing value" }
            if o[i] == 0x22 {
                guard let v = string() else { return "malformed JSON: unterminated string" }
                members.append(Member(key: key, value: v, isString: true))
            } else if o[i] == 0x7B || o[i] == 0x5B {
                let start = i
                var depth = 0
                var inString = false
                while i < n {
                    let b = o[i]
                    if inString {
                        if b == 0x5C { i += 1 } else if b == 0x22 { inString = false }
                    } else if b == 0x22 { inString = true }
                    else if b == 0x7B || b == 0x5B { depth += 1 }
                    else if b == 0x7D || b == 0x5D { depth -= 1; if depth == 0 { i += 1; break } }
                    i += 1
                }
                guard depth == 0 else { return "malformed JSON: unterminated value" }
                members.append(Member(key: key, value: start..<i, isString: false))
            } else {
                let start = i
                while i < n, o[i] != 0x2C, o[i] != 0x7D, o[i] != 0x20, o[i] != 0x0A, o[i] != 0x0D, o[i] != 0x09 { i += 1 }
                guard i > start else { return "malformed JSON: missing value" }
                members.append(Member(key: key, value: start..<i, isString: false))
            }
            skipSpace()
            guard i < n else { return "malformed JSON: unterminated object" }
            if o[i] == 0x2C { i += 1; continue }
            if o[i] == 0x7D {
                i += 1
                skipSpace()
                return i == n ? nil : "text after the JSON object"
            }
            return "malformed JSON: expected ',' or '}'"
        }
    }
}
