import MotionFusion
import MotionSources

extension ByteReader {
    /// An error naming this reader's file and current line.
    func error(_ message: String) -> RecordingError {
        RecordingError(message, path: path, line: lineNumber)
    }

    /// The number in `field`, or an error naming the line and the text: `'abc' is not a number`.
    @inline(__always)
    func number(_ field: UnsafeBufferPointer<UInt8>, decimalComma: Bool = false) throws(RecordingError) -> Double {
        switch NumberParser.parse(field, decimalComma: decimalComma) {
        case .value(let v): return v
        case .nonFinite: throw error("'\(ByteReader.preview(field))' is not a finite number")
        case .invalid:
            if field.isEmpty { throw error("empty field where a number is expected") }
            throw error("'\(ByteReader.preview(field))' is not a number")
        }
    }

    /// The next line that is neither blank nor a `#` comment; `nil` at the end.
    func nextDataLine() throws(RecordingError) -> UnsafeBufferPointer<UInt8>? {
        while let line = try nextLine() {
            if line.isBlank || line.isComment { continue }
            return line
        }
        return nil
    }
}

/// A stream of samples already produced (the buffered samples of a row that holds several sensors).
struct PendingSamples {
    private var items: [RecordedSample] = []
    private var index = 0

    var isEmpty: Bool { index >= items.count }

    mutating func pop() -> RecordedSample? {
        guard index < items.count else { return nil }
        defer { index += 1 }
        return items[index]
    }

    /// Replaces the pending samples, sorted by timestamp (stable).
    mutating func refill(_ samples: inout [RecordedSample]) {
        items.removeAll(keepingCapacity: true)
        index = 0
        if samples.count > 1 {
            samples.sort { $0.sample.timestamp < $1.sample.timestamp }
        }
        items.append(contentsOf: samples)
        samples.removeAll(keepingCapacity: true)
    }
}

/// A sample stream made of a closure (to wrap readers built from parts).
struct ClosureStream: SampleStream {
    let body: () throws(RecordingError) -> RecordedSample?
    mutating func next() throws(RecordingError) -> RecordedSample? { try body() }
}

/// A header cell's name without quotes and spaces, lowercased.
func headerName(_ cell: UnsafeBufferPointer<UInt8>) -> String {
    cell.text.trimming(" \t\"").lowercased()
}

extension StringProtocol {
    /// The string without leading and trailing characters of `set`.
    func trimming(_ set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
