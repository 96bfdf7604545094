import Foundation

// NSSecureCoding support shared by the sample classes: Core Motion's value structs are written as
// their components, under the property's key with a `.x`-style suffix.

extension NSCoder {
    func encodeVector(_ x: Double, _ y: Double, _ z: Double, forKey key: String) {
        encode(x, forKey: key + ".x")
        encode(y, forKey: key + ".y")
        encode(z, forKey: key + ".z")
    }

    func decodeVector(forKey key: String) -> (x: Double, y: Double, z: Double) {
        (decodeDouble(forKey: key + ".x"), decodeDouble(forKey: key + ".y"), decodeDouble(forKey: key + ".z"))
    }

    /// Writes a date as seconds since the reference date (2001-01-01 UTC).
    func encodeDate(_ date: Date, forKey key: String) {
        encode(date.timeIntervalSinceReferenceDate, forKey: key)
    }

    func decodeDate(forKey key: String) -> Date {
        Date(timeIntervalSinceReferenceDate: decodeDouble(forKey: key))
    }

    /// Writes an optional number as a double; `nil` writes nothing.
    func encodeNumber(_ number: NSNumber?, forKey key: String) {
        if let number { encode(number.doubleValue, forKey: key) }
    }

    /// An integer number written by ``encodeNumber(_:forKey:)``; `nil` when absent.
    func decodeNumber(forKey key: String) -> NSNumber? {
        containsValue(forKey: key) ? NSNumber(value: decodeDouble(forKey: key)) : nil
    }
}

/// The date a sample created with `init()` carries: the reference date, 2001-01-01 00:00:00 UTC.
let zeroDate = Date(timeIntervalSinceReferenceDate: 0)
