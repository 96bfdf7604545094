#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A sequential source of bytes: a file, a range of one, an inflated zip entry, or memory.
protocol ByteSource {
    /// Reads up to `buffer.count` bytes into `buffer`; returns how many, 0 only at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordingError) -> Int
}

/// Bytes that can be read at any offset: an open file or an array in memory.
protocol RandomAccessBytes: AnyObject {
    /// The number of bytes.
    var size: Int64 { get }
    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(RecordingError) -> Int
}

/// An open file, read with `pread` (so several sources may share it). Closed when released.
final class FileBytes: RandomAccessBytes {
    let path: String
    let size: Int64
    private let fd: Int32

    init(path: String) throws(RecordingError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RecordingError("cannot open: \(systemMessage(errno))", path: path) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw RecordingError("cannot read: \(systemMessage(e))", path: path)
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw RecordingError("is a folder", path: path)
        }
        self.fd = fd
        self.size = Int64(st.st_size)
    }

    deinit { close(fd) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(RecordingError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                throw RecordingError("cannot read: \(systemMessage(errno))", path: path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}

/// Bytes held in memory (tests, fuzzing, small entries).
final class MemoryBytes: RandomAccessBytes {
    let bytes: [UInt8]
    var size: Int64 { Int64(bytes.count) }

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(RecordingError) -> Int {
        guard offset >= 0, offset < Int64(bytes.count), buffer.count > 0 else { return 0 }
        let start = Int(offset)
        let n = min(buffer.count, bytes.count - start)
        bytes.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + start, byteCount: n)
        }
        return n
    }
}

/// A range of random-access bytes read in order.
struct RangeSource: ByteSource {
    let bytes: RandomAccessBytes
    private var offset: Int64
    private let end: Int64
    /// What to call the data in an error when the range runs past the end of the bytes.
    let truncatedMessage: RecordingError?

    init(_ bytes: RandomAccessBytes, offset: Int64 = 0, length: Int64? = nil, truncated: RecordingError? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = length.map { offset + $0 } ?? bytes.size
        self.truncatedMessage = truncated
    }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordingError) -> Int {
        let wanted = Int(min(Int64(buffer.count), max(0, end - offset)))
        guard wanted > 0 else { return 0 }
        let n = try bytes.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
        if n == 0, let truncatedMessage { throw truncatedMessage }
        offset += Int64(n)
        return n
    }
}

/// The text of an `errno` value.
func systemMessage(_ code: Int32) -> String {
    guard let s = strerror(code) else { return "error \(code)" }
    return String(cString: s)
}

extension RandomAccessBytes {
    /// Up to `count` bytes at `offset` (fewer at the end), as an array.
    func bytes(at offset: Int64, count: Int) throws(RecordingError) -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        defer { buffer.deallocate() }
        let n = try read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        return Array(buffer[0..<n])
    }
}
