import ArgumentParser
import Foundation

/// The validated parsers of every numeric command-line option (seconds, rates, ports, counts).
///
/// Each is a `transform:` for `@Option`, so a bad value is refused while the command line is parsed,
/// before any code converts it, with ArgumentParser's one line naming the option and this type's
/// reason: `The value '1e308' is invalid for '--duration <duration>': at most 100000000 seconds`.
/// NaN, infinities, negative numbers, huge numbers and text that is not a number are all refused,
/// so a value that passes can be multiplied into nanoseconds or converted to an integer without
/// trapping. Declare numeric options with `parsing: .unconditional` so that `--duration -1` is read
/// as the value `-1` (and refused as negative) rather than as a missing value:
///
/// ```swift
/// @Option(parsing: .unconditional, help: "…", transform: OptionValue.seconds())
/// var duration: Double?
/// ```
///
/// The `coremotion` entry point reports every such error with exit status 1 (see the README's
/// table of exit statuses).
package enum OptionValue {
    /// The largest number of seconds any option takes: about 3 years, far beyond any real run, and
    /// small enough that seconds × 10⁹ fits a `UInt64` count of nanoseconds.
    package static let maximumSeconds: Double = 1e8

    /// The smallest non-zero number of seconds any option takes: 1 ns. Smaller positive values
    /// (subnormals such as 1e-320 included) are refused, so that a period's reciprocal is finite.
    package static let minimumSeconds: Double = 1e-9

    /// The largest count any option takes.
    package static let maximumCount = 1_000_000_000

    /// Why a value was refused; its description follows ArgumentParser's "is invalid for …:".
    package struct Refusal: Error, CustomStringConvertible, Sendable {
        /// The reason, one line.
        package var description: String
        init(_ description: String) { self.description = description }
    }

    /// A finite number parsed from `text`, or a ``Refusal`` saying what is wrong with it.
    static func finite(_ text: String, unit: String) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let x = Double(trimmed) else { throw Refusal("not a number of \(unit)") }
        guard !x.isNaN else { throw Refusal("NaN is not a number of \(unit)") }
        guard x.isFinite else { throw Refusal("must be a finite number of \(unit)") }
        return x
    }

    /// A duration in seconds within `range` (default: more than 0, at most ``maximumSeconds``);
    /// a non-zero value below ``minimumSeconds`` is refused.
    /// - Parameters:
    ///   - range: the accepted values, in seconds; its bounds are clamped to 0…``maximumSeconds``.
    ///   - allowZero: whether 0 is accepted (a lower bound of 0 alone does not accept it).
    package static func seconds(
        _ range: ClosedRange<Double> = 0...maximumSeconds, allowZero: Bool = false
    ) -> @Sendable (String) throws -> Double {
        let low = max(range.lowerBound, 0), high = min(range.upperBound, maximumSeconds)
        return { text in
            let x = try finite(text, unit: "seconds")
            if x < 0 { throw Refusal("must not be negative (seconds)") }
            if x == 0 && !allowZero { throw Refusal("must be more than 0 seconds") }
            // A subnormal such as 1e-320 is more than 0 yet its reciprocal is infinite.
            if x > 0 && x < minimumSeconds { throw Refusal("at least \(format(minimumSeconds)) seconds (1 ns)") }
            if x < low { throw Refusal("at least \(format(low)) seconds") }
            if x > high { throw Refusal("at most \(format(high)) seconds") }
            return x
        }
    }

    /// A rate in hertz, at least 1/``maximumSeconds`` (10⁻⁸ Hz) and at most `maximum`.
    package static func hertz(maximum: Double = 1000) -> @Sendable (String) throws -> Double {
        { text in
            let x = try finite(text, unit: "hertz")
            if x <= 0 { throw Refusal("must be more than 0 Hz") }
            // Its period must be a duration an option could take (1e-320 Hz has an infinite one).
            if x < 1 / maximumSeconds { throw Refusal("at least \(format(1 / maximumSeconds)) Hz") }
            if x > maximum { throw Refusal("at most \(format(maximum)) Hz") }
            return x
        }
    }

    /// A finite number within `range`, in `unit` (metres, megabytes, …), for options that are neither
    /// durations nor rates.
    package static func number(_ range: ClosedRange<Double>, unit: String) -> @Sendable (String) throws -> Double {
        { text in
            let x = try finite(text, unit: unit)
            guard range.contains(x) else {
                throw Refusal("must be from \(format(range.lowerBound)) to \(format(range.upperBound)) \(unit)")
            }
            return x
        }
    }

    /// A whole number within `range` (clamped to at most ``maximumCount``).
    package static func count(_ range: ClosedRange<Int> = 1...maximumCount) -> @Sendable (String) throws -> Int {
        let high = min(range.upperBound, maximumCount)
        return { text in
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard let n = Int(trimmed), (range.lowerBound...high).contains(n) else {
                throw Refusal("must be a whole number from \(range.lowerBound) to \(high)")
            }
            return n
        }
    }

    /// A TCP port, 0…65535 (0 lets the system pick a free one).
    package static func port(_ text: String) throws -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let n = Int(trimmed), (0...65535).contains(n) else {
            throw Refusal("a TCP port is a whole number from 0 to 65535")
        }
        return n
    }

    /// `x` without a needless `.0` or exponent for whole numbers.
    static func format(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(x)
    }
}
