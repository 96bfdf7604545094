import CRecordingSupport

/// The entries of a zip archive, read from its central directory (PKWARE APPNOTE 6.3, including the
/// Zip64 extensions). Entries are stored or deflated; each one is read as a stream (stored: a range of
/// the archive; deflated: inflated with zlib in 64 KiB steps), with its CRC-32 and size checked at the end.
struct ZipArchive {
    struct Entry {
        var name: String
        var method: UInt16
        var flags: UInt16
        var crc: UInt32
        var compressedSize: Int64
        var size: Int64
        var localHeaderOffset: Int64
    }

    let bytes: RandomAccessBytes
    let path: String
    private(set) var entries: [Entry] = []

    /// True when `prefix` starts like a zip archive (a local file header, or an empty archive).
    static func looksLikeZip(_ prefix: [UInt8]) -> Bool {
        prefix.count >= 4 && prefix[0] == 0x50 && prefix[1] == 0x4B
            && ((prefix[2] == 3 && prefix[3] == 4) || (prefix[2] == 5 && prefix[3] == 6))
    }

    init(bytes: RandomAccessBytes, path: String) throws(RecordingError) {
        self.bytes = bytes
        self.path = path
        let size = bytes.size
        func fail(_ m: String) -> RecordingError { RecordingError(m, path: path) }
        // End of central directory: 22 bytes plus a comment of up to 65535.
        let tailLength = Int(min(size, 22 + 65_535))
        guard tailLength >= 22 else { throw fail("truncated zip archive (no end of central directory)") }
        let tail = try read(at: size - Int64(tailLength), count: tailLength)
        var eocd: Int? = nil
        var i = tailLength - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 5, tail[i + 3] == 6 { eocd = i; break }
            i -= 1
        }
        guard let e = eocd else { throw fail("truncated zip archive (no end of central directory)") }
        var count = Int64(Self.u16(tail, e + 10))
        var directorySize = Int64(Self.u32(tail, e + 12))
        var directoryOffset = Int64(Self.u32(tail, e + 16))
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            // Zip64: the locator sits right before the end record.
            let locatorOffset = size - Int64(tailLength) + Int64(e) - 20
            guard locatorOffset >= 0 else { throw fail("truncated zip archive (no Zip64 locator)") }
            let locator = try read(at: locatorOffset, count: 20)
            guard Self.u32(locator, 0) == 0x0706_4B50 else { throw fail("malformed zip archive (no Zip64 locator)") }
            let recordOffset = Int64(bitPattern: Self.u64(locator, 8))
            guard recordOffset >= 0, recordOffset <= size - 56 else { throw fail("malformed zip archive (bad Zip64 record offset)") }
            let record = try read(at: recordOffset, count: 56)
            guard Self.u32(record, 0) == 0x0606_4B50 else { throw fail("malformed zip archive (no Zip64 end record)") }
            count = Int64(bitPattern: Self.u64(record, 32))
            directorySize = Int64(bitPattern: Self.u64(record, 40))
            directoryOffset = Int64(bitPattern: Self.u64(record, 48))
        }
        guard directoryOffset >= 0, directorySize >= 0, directorySize <= size, directoryOffset <= size - directorySize,
              count >= 0, count <= directorySize / 46 + 1
        else { throw fail("truncated zip archive (central directory out of bounds)") }
        guard directorySize <= 64 << 20 else { throw fail("zip central directory larger than 64 MiB") }
        let directory = try read(at: directoryOffset, count: Int(directorySize))
        var p = 0
        for _ in 0..<count {
            guard p + 46 <= directory.count, Self.u32(directory, p) == 0x0201_4B50 else {
                throw fail("malformed zip archive (bad central directory entry)")
            }
            let flags = Self.u16(directory, p + 8)
            let method = Self.u16(directory, p + 10)
            let crc = Self.u32(directory, p + 16)
            var compressed = Int64(Self.u32(directory, p + 20))
            var uncompressed = Int64(Self.u32(directory, p + 24))
            let nameLength = Int(Self.u16(directory, p + 28))
            let extraLength = Int(Self.u16(directory, p + 30))
            let commentLength = Int(Self.u16(directory, p + 32))
            var offset = Int64(Self.u32(directory, p + 42))
            let end = p + 46 + nameLength + extraLength + commentLength
            guard end <= directory.count else { throw fail("malformed zip archive (bad central directory entry)") }
            let name = String(decoding: directory[(p + 46)..<(p + 46 + nameLength)], as: UTF8.self)
            // Zip64 extra field: the 64-bit values, in order, of those whose 32-bit field is saturated.
            var x = p + 46 + nameLength
            let extraEnd = x + extraLength
            while x + 4 <= extraEnd {
                let id = Self.u16(directory, x)
                let length = Int(Self.u16(directory, x + 2))
                guard x + 4 + length <= extraEnd else { break }
                if id == 1 {
                    var v = x + 4
                    if uncompressed == 0xFFFF_FFFF, v + 8 <= x + 4 + length { uncompressed = Int64(bitPattern: Self.u64(directory, v)); v += 8 }
                    if compressed == 0xFFFF_FFFF, v + 8 <= x + 4 + length { compressed = Int64(bitPattern: Self.u64(directory, v)); v += 8 }
                    if offset == 0xFFFF_FFFF, v + 8 <= x + 4 + length { offset = Int64(bitPattern: Self.u64(directory, v)); v += 8 }
                }
                x += 4 + length
            }
            entries.append(Entry(name: name, method: method, flags: flags, crc: crc,
                                 compressedSize: compressed, size: uncompressed, localHeaderOffset: offset))
            p = end
        }
    }

    private func read(at offset: Int64, count: Int) throws(RecordingError) -> [UInt8] {
        let out = try bytes.bytes(at: offset, count: count)
        guard out.count == count else { throw RecordingError("truncated zip archive", path: path) }
        return out
    }

    /// A stream of the entry's uncompressed bytes.
    func open(_ entry: Entry) throws(RecordingError) -> any ByteSource {
        let shown = path + "/" + entry.name
        func fail(_ m: String) -> RecordingError { RecordingError(m, path: shown) }
        guard entry.flags & 1 == 0 else { throw fail("encrypted zip entries are not supported") }
        guard entry.localHeaderOffset >= 0, entry.compressedSize >= 0, entry.size >= 0,
              entry.localHeaderOffset <= bytes.size - 30
        else { throw fail("truncated zip archive (entry out of bounds)") }
        let header = try read(at: entry.localHeaderOffset, count: 30)
        guard Self.u32(header, 0) == 0x0403_4B50 else { throw fail("malformed zip archive (no local header)") }
        let dataOffset = entry.localHeaderOffset + 30 + Int64(Self.u16(header, 26)) + Int64(Self.u16(header, 28))
        guard dataOffset <= bytes.size, entry.compressedSize <= bytes.size - dataOffset else {
            throw fail("truncated zip archive (entry data cut short)")
        }
        let raw = RangeSource(bytes, offset: dataOffset, length: entry.compressedSize,
                              truncated: fail("truncated zip archive (entry data cut short)"))
        switch entry.method {
        case 0: return CheckedSource(inner: raw, expectedCRC: entry.crc, expectedSize: entry.size, path: shown)
        case 8: return CheckedSource(inner: try InflateSource(raw, path: shown), expectedCRC: entry.crc, expectedSize: entry.size, path: shown)
        default: throw fail("zip compression method \(entry.method) is not supported (only stored and deflated)")
        }
    }

    static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    static func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16 }
    static func u64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(u32(b, i)) | UInt64(u32(b, i + 4)) << 32 }
    static func u16(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt16 { UInt16(b[b.startIndex + i]) | UInt16(b[b.startIndex + i + 1]) << 8 }
}

/// Checks the CRC-32 and the size of what passes through, at the end.
struct CheckedSource<Inner: ByteSource>: ByteSource {
    var inner: Inner
    let expectedCRC: UInt32
    let expectedSize: Int64
    let path: String
    private var crc: uLong = 0
    private var size: Int64 = 0

    init(inner: Inner, expectedCRC: UInt32, expectedSize: Int64, path: String) {
        self.inner = inner
        self.expectedCRC = expectedCRC
        self.expectedSize = expectedSize
        self.path = path
    }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordingError) -> Int {
        let n = try inner.read(into: buffer)
        if n > 0 {
            crc = crc32(crc, buffer.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(n))
            size += Int64(n)
            if size > expectedSize { throw RecordingError("corrupt zip entry (longer than its stated size)", path: path) }
        } else if size != expectedSize || UInt32(truncatingIfNeeded: crc) != expectedCRC {
            throw RecordingError("corrupt zip entry (size or CRC-32 does not match)", path: path)
        }
        return n
    }
}

/// Raw deflate (RFC 1951) decompressed with zlib, one input chunk at a time.
final class InflateSource: ByteSource {
    private var input: RangeSource
    private let stream: UnsafeMutablePointer<z_stream>
    private let inputBuffer: UnsafeMutableRawBufferPointer
    private var finished = false
    private let path: String

    init(_ input: RangeSource, path: String) throws(RecordingError) {
        self.input = input
        self.path = path
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        inputBuffer = .allocate(byteCount: 1 << 16, alignment: 16)
        guard crs_inflate_init_raw(stream) == Z_OK else {
            stream.deallocate()
            inputBuffer.deallocate()
            throw RecordingError("cannot start zlib", path: path)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        inputBuffer.deallocate()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordingError) -> Int {
        guard !finished, buffer.count > 0 else { return 0 }
        stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(min(buffer.count, Int(UInt32.max)))
        while stream.pointee.avail_out > 0 {
            if stream.pointee.avail_in == 0 {
                let n = try input.read(into: inputBuffer)
                if n == 0 { throw RecordingError("truncated zip entry (deflate data ends early)", path: path) }
                stream.pointee.next_in = inputBuffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(n)
            }
            let availableBefore = stream.pointee.avail_in
            let status = inflate(stream, Z_NO_FLUSH)
            if status == Z_STREAM_END { finished = true; break }
            if status != Z_OK && !(status == Z_BUF_ERROR && stream.pointee.avail_in != availableBefore) {
                throw RecordingError("corrupt zip entry (deflate error \(status))", path: path)
            }
            let produced = buffer.count - Int(stream.pointee.avail_out)
            if produced > 0 { break }
        }
        return buffer.count - Int(stream.pointee.avail_out)
    }
}
