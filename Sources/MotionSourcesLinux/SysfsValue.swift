/// Locale-independent parsing of sysfs numbers.
///
/// sysfs always prints numbers in the C locale (`0.098066500`, `-9`, `12.500000`); Swift's
/// `Double(_:)` parses with the C locale too, so a German or French user locale never turns the
/// decimal point into a comma here.
package enum SysfsValue {
    /// The text without leading and trailing spaces, tabs, newlines and NULs.
    package static func trimmed(_ text: String) -> String {
        var s = Substring(text)
        while let c = s.first, c == " " || c == "\n" || c == "\t" || c == "\r" || c == "\0" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\n" || c == "\t" || c == "\r" || c == "\0" { s.removeLast() }
        return String(s)
    }

    /// A decimal number such as `0.098066500`, `-0`, `+1.5` or `1e-3`; `nil` when the text is not one
    /// finite number.
    package static func double(_ text: String) -> Double? {
        var t = trimmed(text)
        if t.hasPrefix("+") { t.removeFirst() }
        guard !t.isEmpty, t.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 46 || $0 == 45 || $0 == 101 || $0 == 69 || $0 == 43 }),
              let v = Double(t), v.isFinite else { return nil }
        return v
    }

    /// A decimal integer such as `-919`; `nil` when the text is not one.
    package static func integer(_ text: String) -> Int64? {
        var t = trimmed(text)
        if t.hasPrefix("+") { t.removeFirst() }
        return Int64(t)
    }

    /// Numbers separated by spaces, commas or tabs, e.g. `12.5 25 50 100`. `nil` if any part fails.
    package static func doubles(_ text: String) -> [Double]? {
        let parts = trimmed(text).split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" })
        var out: [Double] = []
        for p in parts {
            guard let v = double(String(p)) else { return nil }
            out.append(v)
        }
        return out
    }
}
