import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing

/// Reads every sample of an in-memory recording, stream after stream, in file order.
func readAll(_ text: String, name: String = "rec.csv", format: RecordingFormat? = nil) throws(RecordingError) -> [RecordedSample] {
    var input = try RecordingInput.open(bytes: Array(text.utf8), name: name, format: format)
    return try input.readAllInFileOrder()
}

/// Reads every sample of in-memory named entries (a folder), stream after stream.
func readAll(entries: [String: String], name: String = "export", format: RecordingFormat? = nil) throws(RecordingError) -> (RecordingInput, [RecordedSample]) {
    var input = try RecordingInput.open(entries: entries.mapValues { Array($0.utf8) }, name: name, format: format)
    let all = try input.readAllInFileOrder()
    return (input, all)
}

/// The error `body` throws, as its description (`path:line: message`), or nil.
func errorText(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as RecordingError {
        return error.description
    } catch {
        return "not a RecordingError: \(error)"
    }
}

/// Samples with values compared to a tolerance.
func expectClose(_ a: Vector3, _ b: Vector3, _ tolerance: Double = 1e-12, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(abs(a.x - b.x) <= tolerance && abs(a.y - b.y) <= tolerance && abs(a.z - b.z) <= tolerance,
            "\(a) != \(b)", sourceLocation: sourceLocation)
}

/// A minimal zip archive writer for fixtures: entries stored, or "deflated" as stored deflate blocks
/// (RFC 1951 BTYPE 00), so the inflate path is exercised without a compressor.
enum ZipFixture {
    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in data {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }

    static func deflateStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        repeat {
            let n = min(65_535, data.count - i)
            let final: UInt8 = i + n >= data.count ? 1 : 0
            out.append(final)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[i..<(i + n)]
            i += n
        } while i < data.count
        return out
    }

    static func archive(_ entries: [(String, String)], deflate: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        func u16(_ v: Int, _ a: inout [UInt8]) { a += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func u32(_ v: UInt32, _ a: inout [UInt8]) { for k in 0..<4 { a.append(UInt8((v >> (8 * UInt32(k))) & 0xFF)) } }
        for (name, text) in entries {
            let data = Array(text.utf8)
            let stored = deflate ? deflateStored(data) : data
            let crc = crc32(data)
            let offset = out.count
            let nameBytes = Array(name.utf8)
            u32(0x0403_4B50, &out); u16(20, &out); u16(0, &out); u16(deflate ? 8 : 0, &out); u16(0, &out); u16(0, &out)
            u32(crc, &out); u32(UInt32(stored.count), &out); u32(UInt32(data.count), &out)
            u16(nameBytes.count, &out); u16(0, &out); out += nameBytes; out += stored
            u32(0x0201_4B50, &central); u16(20, &central); u16(20, &central); u16(0, &central); u16(deflate ? 8 : 0, &central)
            u16(0, &central); u16(0, &central); u32(crc, &central); u32(UInt32(stored.count), &central); u32(UInt32(data.count), &central)
            u16(nameBytes.count, &central); u16(0, &central); u16(0, &central); u16(0, &central); u16(0, &central); u32(0, &central)
            u32(UInt32(offset), &central); central += nameBytes
        }
        let centralOffset = out.count
        out += central
        u32(0x0605_4B50, &out); u16(0, &out); u16(0, &out); u16(entries.count, &out); u16(entries.count, &out)
        u32(UInt32(central.count), &out); u32(UInt32(centralOffset), &out); u16(0, &out)
        return out
    }
}
