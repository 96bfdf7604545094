@testable import MotionRecordingFormats
import Testing

@Suite struct NumberParsingTests {
    func parse(_ s: String, comma: Bool = false) -> NumberParser.Result {
        Array(s.utf8).withUnsafeBufferPointer { NumberParser.parse($0, decimalComma: comma) }
    }

    @Test func agreesWithSwiftBitForBit() {
        var rng = SplitMix(seed: 42)
        for _ in 0..<60_000 {
            let digits = Int.random(in: 1...22, using: &rng)
            var s = Bool.random(using: &rng) ? "-" : ""
            var body = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &rng)) }.joined()
            if Bool.random(using: &rng) { body.insert(".", at: body.index(body.startIndex, offsetBy: Int.random(in: 0...digits, using: &rng))) }
            s += body
            if Int.random(in: 0..<3, using: &rng) == 0 { s += "e\(Int.random(in: -40...40, using: &rng))" }
            guard let expected = Double(s) else { continue }
            #expect(parse(s) == .value(expected), "\(s)")
            if parse(s) != .value(expected) { return }
        }
        // Shortest round-trip text of random doubles, as the writer produces.
        for _ in 0..<60_000 {
            let d = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng) & 0x7FEF_FFFF_FFFF_FFFF)
            let s = "\(d)"
            guard case .value(let v) = parse(s), v.bitPattern == d.bitPattern else {
                Issue.record("\(s) did not round-trip")
                return
            }
        }
    }

    @Test func edgeCases() {
        #expect(parse("9007199254740993") == .value(9007199254740992))  // tie, to even
        #expect(parse("9007199254740995") == .value(9007199254740996))
        #expect(parse("18446744073709551615") == .value(18446744073709551615.0))
        #expect(parse("0.1") == .value(0.1))
        #expect(parse("-0") == .value(-0.0) && parse("-0.0e5") == .value(-0.0))
        #expect(parse("1,5", comma: true) == .value(1.5))
        #expect(parse("1,5") == .invalid)
        #expect(parse("1e400") == .nonFinite && parse("NaN") == .nonFinite && parse("-Infinity") == .nonFinite)
        for bad in ["", "-", ".", "e5", "1e", "1e+", "0x1p3", "1.2.3", " 1", "1 ", "1_000", "١"] {
            #expect(parse(bad) == .invalid, "\(bad)")
        }
        #expect(parse("." + String(repeating: "0", count: 400) + "1") == .value(0), "1e-401 underflows to 0, as strtod does")
        #expect(parse("1" + String(repeating: "0", count: 300)) == .value(1e300))
    }
}
