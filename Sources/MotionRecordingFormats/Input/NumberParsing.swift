import CRecordingSupport

/// Decimal numbers parsed straight from bytes: no allocation, independent of the process locale.
///
/// Accepted syntax: optional `+`/`-`, digits with an optional fraction (`.`; also `,` where the format
/// uses a decimal comma), an optional exponent (`e`/`E`, optional sign, digits). Surrounding spaces
/// must already be trimmed. Results are correctly rounded (the same `Double` as Swift's
/// `Double(String)`), so text written with Swift's shortest round-trip form reads back bit for bit.
/// Numbers with at most 15 significant digits and a small exponent take an exact fast path; the others
/// go to glibc's `strtod_l` in the C locale on a stack copy.
enum NumberParser {
    /// The outcome of parsing one field.
    enum Result: Equatable {
        /// A finite value.
        case value(Double)
        /// `nan`, `inf`, `infinity` (any case, any sign), or a number too large for a `Double`.
        case nonFinite
        /// Anything else.
        case invalid
    }

    private static let exactPowers: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    nonisolated(unsafe) private static let cLocale = crs_numeric_c_locale()

    /// Parses `bytes` as a decimal number. Complexity: O(length).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, decimalComma: Bool = false) -> Result {
        let n = bytes.count
        guard n > 0 else { return .invalid }
        var i = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            i = 1
        }
        var mantissa: UInt64 = 0
        var significant = 0  // significant digits accumulated (leading zeros excluded)
        var dropped = 0  // digits after the 19th, before the point
        var fractionDigits = 0
        var digits = 0
        var sawPoint = false
        while i < n {
            let c = bytes[i]
            if c &- 0x30 < 10 {
                digits += 1
                if significant < 19 {
                    if mantissa != 0 || c != 0x30 { significant += 1 }
                    mantissa = mantissa &* 10 &+ UInt64(c &- 0x30)
                    if sawPoint { fractionDigits += 1 }
                } else {
                    significant += 1
                    if !sawPoint { dropped += 1 }
                }
            } else if !sawPoint && (c == UInt8(ascii: ".") || (decimalComma && c == UInt8(ascii: ","))) {
                sawPoint = true
            } else {
                break
            }
            i += 1
        }
        if digits == 0 {
            return isNonFiniteWord(bytes, from: i) ? .nonFinite : .invalid
        }
        var exponent = 0
        if i < n {
            guard bytes[i] | 0x20 == UInt8(ascii: "e") else { return .invalid }
            i += 1
            var expNegative = false
            if i < n, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
                expNegative = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            guard i < n else { return .invalid }
            while i < n {
                let d = bytes[i] &- 0x30
                guard d < 10 else { return .invalid }
                if exponent < 100_000 { exponent = exponent * 10 + Int(d) }
                i += 1
            }
            if expNegative { exponent = -exponent }
        }
        if mantissa == 0 && significant <= 19 { return .value(negative ? -0.0 : 0.0) }
        // Exact when the mantissa and the power of ten are both exact doubles (Clinger's fast path).
        let scale = exponent - fractionDigits + dropped
        if significant <= 15, scale >= -22, scale <= 22 {
            var v = Double(mantissa)
            v = scale < 0 ? v / exactPowers[-scale] : v * exactPowers[scale]
            return .value(negative ? -v : v)
        }
        if significant <= 19, scale >= -19, scale <= 19 {
            let v = exactScaled(mantissa, scale)
            return .value(negative ? -v : v)
        }
        return slowPath(bytes, decimalComma: decimalComma)
    }

    private static let powersOfTen: [UInt64] = (0...19).map { k in (0..<k).reduce(UInt64(1)) { p, _ in p * 10 } }

    /// `m × 10^scale`, correctly rounded, for `m < 2^64` and `|scale| ≤ 19`, with 128-bit integer
    /// arithmetic: the exact product (or a 64-bit quotient of `m·2^s / 10^k` and its remainder) is
    /// reduced to 64 bits with a sticky bit for everything dropped, so the one rounding of the
    /// conversion to `Double` (to nearest, ties to even) is the rounding of the exact value.
    @inline(__always)
    private static func exactScaled(_ m: UInt64, _ scale: Int) -> Double {
        if scale >= 0 {
            let (high, low) = m.multipliedFullWidth(by: powersOfTen[scale])
            if high == 0 { return Double(low) }
            let shift = 64 - high.leadingZeroBitCount  // 1...64
            let top = (high << UInt64(64 - shift)) | (low >> UInt64(shift))
            let sticky: UInt64 = (low << UInt64(64 - shift)) != 0 ? 1 : 0
            return Double(sign: .plus, exponent: shift, significand: Double(top | sticky))
        }
        let d = powersOfTen[-scale]
        let dBits = 64 - d.leadingZeroBitCount
        let mBits = 64 - m.leadingZeroBitCount
        let s = 63 + dBits - mBits  // 0...126: m·2^s has 63 + dBits bits, so the quotient fits 64 bits
        let high: UInt64 = s >= 64 ? m << UInt64(s - 64) : (s == 0 ? 0 : m >> UInt64(64 - s))
        let low: UInt64 = s >= 64 ? 0 : m << UInt64(s)
        let (q, r) = d.dividingFullWidth((high: high, low: low))
        return Double(sign: .plus, exponent: -s, significand: Double(q | (r != 0 ? 1 : 0)))
    }

    private static func isNonFiniteWord(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var word: [UInt8] = []
        for i in start..<bytes.count where word.count < 9 { word.append(bytes[i] | 0x20) }
        let text = String(decoding: word, as: UTF8.self)
        return (start + word.count == bytes.count) && (text == "nan" || text == "inf" || text == "infinity")
    }

    private static func slowPath(_ bytes: UnsafeBufferPointer<UInt8>, decimalComma: Bool) -> Result {
        func run(_ buffer: UnsafeMutableBufferPointer<CChar>) -> Result {
            for i in 0..<bytes.count {
                let b = bytes[i]
                buffer[i] = CChar(bitPattern: decimalComma && b == UInt8(ascii: ",") ? UInt8(ascii: ".") : b)
            }
            buffer[bytes.count] = 0
            var end: UnsafeMutablePointer<CChar>? = nil
            let v = strtod_l(buffer.baseAddress!, &end, cLocale)
            guard let end, end == buffer.baseAddress! + bytes.count else { return .invalid }
            return v.isFinite ? .value(v) : .nonFinite
        }
        if bytes.count < 256 {
            return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { run($0) }
        }
        let heap = UnsafeMutableBufferPointer<CChar>.allocate(capacity: bytes.count + 1)
        defer { heap.deallocate() }
        return run(heap)
    }

    /// Parses an integer (optional sign, digits only) without overflow; `nil` if it is not one or does
    /// not fit an `Int64`.
    static func parseInt64(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        var i = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            i = 1
        }
        guard i < bytes.count else { return nil }
        var v: Int64 = 0
        while i < bytes.count {
            let d = bytes[i] &- 0x30
            guard d < 10 else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = negative ? m.subtractingReportingOverflow(Int64(d)) : m.addingReportingOverflow(Int64(d))
            if o1 || o2 { return nil }
            v = s
            i += 1
        }
        return v
    }
}
