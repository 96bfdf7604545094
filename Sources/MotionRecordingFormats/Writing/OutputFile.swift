#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file (or standard output) written with `write(2)`, for the recording writers.
///
/// Opening a path refuses to touch the file when it is the same file as any of `inputs` (compared by
/// device and inode after resolving links, so `./rec.csv`, a symbolic link and a hard link are all
/// caught), before anything is truncated.
///
/// Not thread-safe; closed on deinit.
package final class OutputFile {
    /// The path shown in errors (`-` for standard output).
    package let path: String
    private let fd: Int32
    private let ownsDescriptor: Bool

    /// Standard output.
    package init() {
        path = "-"
        fd = 1
        ownsDescriptor = false
    }

    /// Creates or truncates `path` for writing (mode 0644 before the umask).
    /// - Parameters:
    ///   - path: the file; `-` means standard output.
    ///   - inputs: files that must not be overwritten (the recording being read).
    /// - Throws: ``RecordingError`` when `path` is one of `inputs`, a directory, or cannot be opened.
    package init(path: String, protecting inputs: [String] = []) throws(RecordingError) {
        if path == "-" {
            self.path = "-"
            fd = 1
            ownsDescriptor = false
            return
        }
        self.path = path
        var target = stat()
        if stat(path, &target) == 0 {
            if (target.st_mode & S_IFMT) == S_IFDIR {
                throw RecordingError("is a directory; the output must be a file", path: path)
            }
            for input in inputs {
                var s = stat()
                if stat(input, &s) == 0, s.st_dev == target.st_dev, s.st_ino == target.st_ino {
                    throw RecordingError("is the recording being read (\(input)): refusing to write over it; choose another output", path: path)
                }
            }
        }
        let d = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard d >= 0 else {
            throw RecordingError("cannot be written: \(String(cString: strerror(errno)))", path: path)
        }
        fd = d
        ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// Writes every byte of `bytes` and empties it (keeping its capacity).
    /// - Throws: ``RecordingError`` on a write error (disk full, closed pipe).
    package func write(_ bytes: inout [UInt8]) throws(RecordingError) {
        let failed: Int32? = bytes.withUnsafeBytes { raw -> Int32? in
            var offset = 0
            while offset < raw.count {
                let n = posixWrite(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        bytes.removeAll(keepingCapacity: true)
        if let failed {
            throw RecordingError("cannot be written: \(String(cString: strerror(failed)))", path: path == "-" ? "standard output" : path)
        }
    }
}

/// `write(2)`, under a name that the method ``OutputFile/write(_:)`` does not shadow.
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}
