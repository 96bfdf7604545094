/// Fast, locale-independent decimal formatting of `Double`s for the recording writers.
///
/// A value is written with at most ``defaultDecimals`` (9) decimals, rounded to nearest, with trailing
/// zeros removed and `.` as the separator (`0.5`, `-1`, `123.000000001`): nanoseconds for timestamps,
/// far below the noise of every motion quantity. Values of magnitude 9·10⁹ or more, and NaN and
/// infinities, fall back to Swift's shortest round-trip form (`1e+20`, `nan`, `inf`). No allocation
/// beyond the output buffer's growth; about ten times faster than string interpolation.
package enum NumberFormatting {
    /// Decimals written by default: 9.
    package static let defaultDecimals = 9

    @usableFromInline static let powers: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    /// Appends `value` to `bytes` as UTF-8 text.
    /// - Parameters:
    ///   - value: the number.
    ///   - maximumDecimals: 0…9, default 9.
    @inlinable
    package static func append(_ value: Double, to bytes: inout [UInt8], maximumDecimals: Int = defaultDecimals) {
        let decimals = min(max(maximumDecimals, 0), 9)
        let scale = powers[decimals]
        let scaled = (value * scale).rounded()
        // |scaled| < 9.2e18 fits Int64; keep a margin and require the integer part to be exact.
        guard value.isFinite, abs(value) < 9e9, abs(scaled) < 9e18 else {
            bytes.append(contentsOf: value.description.utf8)
            return
        }
        var n = Int64(scaled)
        if n == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        let negative = n < 0
        if negative { n = -n }
        let divisor = Int64(scale)
        var integer = n / divisor
        var fraction = n % divisor
        // Digits are written backwards into 32 bytes on the stack (at most 21 are needed: sign, 10
        // integer digits, point, 9 decimals), then appended at once.
        var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &storage) { buffer in
            var end = buffer.count
            if fraction > 0 {
                var width = decimals
                while fraction % 10 == 0 {
                    fraction /= 10
                    width -= 1
                }
                for _ in 0..<width {
                    end -= 1
                    buffer[end] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction % 10)
                    fraction /= 10
                }
                end -= 1
                buffer[end] = UInt8(ascii: ".")
            }
            repeat {
                end -= 1
                buffer[end] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: integer % 10)
                integer /= 10
            } while integer > 0
            if negative {
                end -= 1
                buffer[end] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[end...]))
        }
    }

    /// Appends `value` to `text` (see ``append(_:to:maximumDecimals:)-([UInt8])``).
    package static func append(_ value: Double, to text: inout String, maximumDecimals: Int = defaultDecimals) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(value, to: &bytes, maximumDecimals: maximumDecimals)
        text += String(decoding: bytes, as: UTF8.self)
    }

    /// `value` as text (see ``append(_:to:maximumDecimals:)-([UInt8])``).
    package static func string(_ value: Double, maximumDecimals: Int = defaultDecimals) -> String {
        var text = ""
        append(value, to: &text, maximumDecimals: maximumDecimals)
        return text
    }
}
