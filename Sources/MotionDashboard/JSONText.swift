/// A small append-only JSON writer: the sample path encodes one batch per frame for every client,
/// so it avoids `JSONEncoder`'s reflection and allocations.
struct JSONText {
    private(set) var text: String = ""

    init(capacity: Int = 256) {
        text.reserveCapacity(capacity)
    }

    mutating func raw(_ s: String) { text += s }

    /// A JSON string literal with the required escapes.
    mutating func string(_ s: String) {
        text.append("\"")
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text.append("\"")
    }

    /// A number; NaN and ±∞, which JSON cannot carry, become `null`.
    mutating func number(_ d: Double) {
        guard d.isFinite else { text += "null"; return }
        if d == d.rounded(), abs(d) < 1e15 {
            text += String(Int64(d))
        } else {
            text += d.description
        }
    }

    /// A number rounded to `digits` decimals, to keep sample batches small.
    mutating func number(_ d: Double, decimals digits: Int) {
        guard d.isFinite else { text += "null"; return }
        let scale = Self.powersOf10[digits]
        let r = (d * scale).rounded() / scale
        number(r)
    }

    mutating func number(_ i: Int) { text += String(i) }

    mutating func bool(_ b: Bool) { text += b ? "true" : "false" }

    mutating func null() { text += "null" }

    private static let powersOf10: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]
}
