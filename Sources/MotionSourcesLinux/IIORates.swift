/// The sampling rates an IIO sensor offers, from `sampling_frequency_available`.
///
/// The attribute is either a list (`12.5 25 50 100 200`) or a range in brackets, `[min step max]`
/// (`[1 1 400]`); with neither, any positive rate may be asked for.
package enum IIOAvailableRates: Sendable, Hashable, CustomStringConvertible {
    /// Discrete rates in Hz, ascending.
    case list([Double])
    /// Every `min + k × step` up to `max`, in Hz.
    case range(min: Double, step: Double, max: Double)
    /// Unknown: the driver does not say.
    case unknown

    /// Parses the attribute; `nil` when malformed.
    package init?(parsing text: String) {
        let t = SysfsValue.trimmed(text)
        if t.hasPrefix("[") {
            guard t.hasSuffix("]"), let v = SysfsValue.doubles(String(t.dropFirst().dropLast())), v.count == 3,
                  v[0] >= 0, v[1] >= 0, v[2] >= v[0] else { return nil }
            self = .range(min: v[0], step: v[1], max: v[2])
        } else {
            guard let v = SysfsValue.doubles(t), !v.isEmpty, v.allSatisfy({ $0 > 0 }) else { return nil }
            self = .list(Array(Set(v)).sorted())
        }
    }

    /// The lowest rate at or above `wanted` Hz; the highest when none is that fast. `nil` for ``unknown``.
    package func choose(atLeast wanted: Double) -> Double? {
        switch self {
        case .list(let rates):
            return rates.first(where: { $0 >= wanted - 1e-9 }) ?? rates.last
        case .range(let lo, let step, let hi):
            if wanted <= lo { return lo }
            if wanted >= hi { return hi }
            guard step > 0 else { return wanted }
            let k = ((wanted - lo) / step - 1e-9).rounded(.up)
            return min(hi, lo + k * step)
        case .unknown:
            return nil
        }
    }

    /// The slowest and fastest rates, or `nil` for ``unknown``.
    package var bounds: (min: Double, max: Double)? {
        switch self {
        case .list(let r): return r.isEmpty ? nil : (r.first!, r.last!)
        case .range(let lo, _, let hi): return (lo == 0 ? min(1, hi) : lo, hi)
        case .unknown: return nil
        }
    }

    /// `12.5 25 50` or `[1 1 400]` or `unknown`.
    package var description: String {
        switch self {
        case .list(let r): return r.map(formatHz).joined(separator: " ")
        case .range(let a, let s, let b): return "[\(formatHz(a)) \(formatHz(s)) \(formatHz(b))]"
        case .unknown: return "unknown"
        }
    }
}

/// `12.5`, `100` — a rate without trailing zeros.
package func formatHz(_ v: Double) -> String {
    if v == v.rounded() && abs(v) < 1e12 { return String(Int64(v)) }
    return String(v)
}
