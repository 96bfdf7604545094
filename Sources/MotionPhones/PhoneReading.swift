import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources

/// One reading decoded from a phone's message, already in Core Motion's units and signs, still on
/// the phone's clock.
package struct PhoneReading: Sendable, Hashable {
    /// Which sensor.
    package var sensor: SensorKind
    /// The phone's timestamp in seconds on the phone's own clock, or `nil` when the message has none
    /// (the arrival time is then used).
    package var phoneTime: Double?
    /// The value: g with gravity pointing down (face up reads z ≈ −1), rad/s or µT.
    package var value: Vector3

    /// Creates a reading.
    package init(sensor: SensorKind, phoneTime: Double?, value: Vector3) {
        self.sensor = sensor
        self.phoneTime = phoneTime
        self.value = value
    }
}

/// The result of decoding one message: readings, or why it was rejected.
package struct PhoneDecoded: Sendable {
    /// The readings the message carries, in message order.
    package var readings: [PhoneReading] = []
    /// Which clock the timestamps are on (readings of different clocks are mapped separately), such as
    /// a Sensor Logger session.
    package var clock: String = ""
    /// Parts of the message that could not be used (counted as malformed).
    package var rejected: [String] = []
    /// Pressure, attitude and gravity readings, in message order.
    package var extras: [PhoneExtraReading] = []
    /// Entries the app sent without a value yet (phyphox's `null` in a buffer that has not filled,
    /// or a NaN it measured): normal traffic, counted apart from ``rejected`` and not reported.
    package var empty = 0

    /// Creates an empty result.
    package init() {}
}

/// Splits a byte stream into flat JSON objects written back to back with no delimiter (SensorLog's
/// TCP stream), by brace depth outside strings, with a cap on the size of one object.
///
/// ## Threading
/// A value type: use it from one thread at a time.
package struct JSONObjectSplitter: Sendable {
    /// The largest object accepted, in bytes; a longer one is dropped and counted (default 64 KiB).
    package var maximumObjectSize: Int
    /// Objects dropped because they exceeded ``maximumObjectSize``.
    package private(set) var oversized = 0
    /// Bytes outside any object that are not white space (skipped).
    package private(set) var strayBytes = 0

    private var buffer: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var discarding = false

    /// Creates a splitter.
    package init(maximumObjectSize: Int = 64 * 1024) {
        self.maximumObjectSize = maximumObjectSize
    }

    /// Feeds bytes; returns every object completed by them, each as its bytes.
    package mutating func feed<C: Collection>(_ bytes: C) -> [[UInt8]] where C.Element == UInt8 {
        var out: [[UInt8]] = []
        for byte in bytes {
            if depth == 0 {
                if byte == UInt8(ascii: "{") {
                    depth = 1
                    inString = false
                    escaped = false
                    discarding = false
                    buffer.removeAll(keepingCapacity: true)
                    buffer.append(byte)
                } else if !(byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09) {
                    strayBytes += 1
                }
                continue
            }
            if !discarding {
                if buffer.count >= maximumObjectSize {
                    discarding = true
                    oversized += 1
                    buffer.removeAll()
                } else {
                    buffer.append(byte)
                }
            }
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 {
                    if !discarding { out.append(buffer) }
                    buffer.removeAll(keepingCapacity: true)
                    discarding = false
                }
            default: break
            }
        }
        return out
    }
}

/// Splits a byte stream into lines ended by LF (an optional CR before it is dropped) or, when
/// `hashEnds` is set, by `#` (HyperIMU's option), with a cap on the length of one line.
///
/// ## Threading
/// A value type: use it from one thread at a time.
package struct LineSplitter: Sendable {
    /// The longest line accepted, in bytes; a longer one is dropped and counted (default 16 KiB).
    package var maximumLineLength: Int
    /// Whether `#` ends a line as well as LF.
    package var hashEnds: Bool
    /// Lines dropped because they exceeded ``maximumLineLength``.
    package private(set) var oversized = 0
    private var buffer: [UInt8] = []
    private var discarding = false

    /// Creates a splitter.
    package init(maximumLineLength: Int = 16 * 1024, hashEnds: Bool = true) {
        self.maximumLineLength = maximumLineLength
        self.hashEnds = hashEnds
    }

    /// Feeds bytes; returns the non-empty lines they complete, without their terminators.
    package mutating func feed<C: Collection>(_ bytes: C) -> [String] where C.Element == UInt8 {
        var out: [String] = []
        for byte in bytes {
            if byte == 0x0A || (hashEnds && byte == UInt8(ascii: "#")) {
                if !discarding {
                    if buffer.last == 0x0D { buffer.removeLast() }
                    if !buffer.isEmpty { out.append(String(decoding: buffer, as: UTF8.self)) }
                }
                buffer.removeAll(keepingCapacity: true)
                discarding = false
            } else if !discarding {
                if buffer.count >= maximumLineLength {
                    discarding = true
                    oversized += 1
                    buffer.removeAll()
                } else {
                    buffer.append(byte)
                }
            }
        }
        return out
    }

    /// The bytes of an unfinished line (for a datagram, which ends its last line).
    package mutating func flush() -> String? {
        defer { buffer.removeAll(keepingCapacity: true); discarding = false }
        if discarding { return nil }
        if buffer.last == 0x0D { buffer.removeLast() }
        return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self)
    }
}

/// Parses a JSON document with the phones' one parser (`MotionRecordingFormats`' ``PhoneJSON``), `nil` when
/// it is not valid JSON.
func parseJSON(_ bytes: [UInt8]) -> Any? {
    PhoneJSON.parse(bytes)
}

/// A number from JSON: a number, or a string holding one (SensorLog writes `"0.002167"`).
func jsonNumber(_ any: Any?) -> Double? {
    switch any {
    case let d as Double:
        return d.isFinite ? d : nil
    case let s as String:
        guard let d = Double(s.trimmingCharacters(in: .whitespaces)), d.isFinite else { return nil }
        return d
    default:
        return nil
    }
}
