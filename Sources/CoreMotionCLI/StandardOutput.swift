#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Unbuffered writes to standard output that end the process as a closed pipe would.
///
/// `FileHandle.standardOutput.write` traps on an error, and once a networking library has set `SIGPIPE`
/// to be ignored, a reader that went away (`coremotion demo | head`) turns every write into `EPIPE`.
/// Here a closed pipe ends the process the way the default `SIGPIPE` action does (status 141 in a
/// shell), and any other error is left for the next write. Safe from any thread: each call is one
/// sequence of `write(2)` calls on file descriptor 1.
enum StandardOutput {
    /// Writes all of `text`, retrying short writes and interruptions.
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { raw in
            guard var p = raw.baseAddress else { return }
            var left = raw.count
            while left > 0 {
                let n = systemWrite(1, p, left)
                if n > 0 {
                    p += n
                    left -= n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    if n < 0 && errno == EPIPE {
                        signal(SIGPIPE, SIG_DFL)
                        raise(SIGPIPE)
                    }
                    return
                }
            }
        }
    }

    private static func systemWrite(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
        Darwin.write(fd, p, count)
        #elseif canImport(Musl)
        Musl.write(fd, p, count)
        #else
        Glibc.write(fd, p, count)
        #endif
    }
}
