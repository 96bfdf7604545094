/// The JSON parser of the phone apps' live messages (SensorLog, SensorServer, phyphox): one parser,
/// whose numbers are read by Swift's correctly rounded `Double(_:)`, as the export readers read the same
/// numbers in files, so a value gives the same double on both paths (Foundation's
/// `JSONSerialization` on Linux may round a 17-digit number to a neighbouring double).
///
/// Values: `[String: Any]` objects (a repeated key keeps its last value), `[Any]` arrays, `String`,
/// `Double` numbers, `Bool`, and ``null`` for `null`. At most ``maximumDepth`` nested containers; any
/// text that is not one JSON value (trailing bytes other than white space included) gives `nil`.
package enum PhoneJSON {
    /// JSON's `null`.
    package struct Null: Sendable, Hashable {}
    /// The value of `null`.
    package static let null = Null()
    /// Containers nested deeper than this are refused (64).
    package static let maximumDepth = 64

    /// Parses one JSON document, `nil` when it is not valid JSON.
    package static func parse(_ bytes: [UInt8]) -> Any? {
        var p = Parser(bytes: bytes)
        guard let v = p.value(depth: 0) else { return nil }
        p.skipSpace()
        return p.index == bytes.count ? v : nil
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
        }

        mutating func literal(_ word: String) -> Bool {
            let w = Array(word.utf8)
            guard index + w.count <= bytes.count, bytes[index..<index + w.count].elementsEqual(w) else { return false }
            index += w.count
            return true
        }

        mutating func value(depth: Int) -> Any? {
            skipSpace()
            guard index < bytes.count, depth <= PhoneJSON.maximumDepth else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var object: [String: Any] = [:]
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return object }
                while true {
                    skipSpace()
                    guard let key = string() else { return nil }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    guard let v = value(depth: depth + 1) else { return nil }
                    object[key] = v
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return object }
                    return nil
                }
            case UInt8(ascii: "["):
                index += 1
                var array: [Any] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return array }
                while true {
                    guard let v = value(depth: depth + 1) else { return nil }
                    array.append(v)
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return array }
                    return nil
                }
            case UInt8(ascii: "\""):
                return string()
            case UInt8(ascii: "t"):
                return literal("true") ? true : nil
            case UInt8(ascii: "f"):
                return literal("false") ? false : nil
            case UInt8(ascii: "n"):
                return literal("null") ? PhoneJSON.null : nil
            default:
                return number()
            }
        }

        mutating func number() -> Double? {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { return nil }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                let fraction = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                guard index > fraction else { return nil }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                let exponent = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                guard index > exponent else { return nil }
            }
            return Double(String(decoding: bytes[start..<index], as: UTF8.self))
        }

        mutating func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let b = bytes[index]
                index += 1
                switch b {
                case UInt8(ascii: "\""):
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let e = bytes[index]
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        guard var scalar = hex4() else { return nil }
                        if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count,
                           bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        out.append(contentsOf: String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8)
                    default: return nil
                    }
                default:
                    guard b >= 0x20 else { return nil }
                    out.append(b)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[index]
                index += 1
                let d: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: return nil
                }
                v = v << 4 | UInt32(d)
            }
            return v
        }
    }
}
