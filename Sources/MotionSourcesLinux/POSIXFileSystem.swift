#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// The real file system, through the C library (`open`, `read`, `write`, `poll`).
///
/// Stateless and safe to use from any thread.
package struct POSIXFileSystem: LinuxFileSystem {
    /// Creates the real file system.
    package init() {}

    package func readText(_ path: String) throws(LinuxIOError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LinuxIOError(code: errno, path: path, operation: "open") }
        defer { _ = Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LinuxIOError(code: errno, path: path, operation: "read")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > 1 << 20 { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    package func writeText(_ path: String, _ text: String) throws(LinuxIOError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LinuxIOError(code: errno, path: path, operation: "open") }
        defer { _ = Glibc.close(fd) }
        let bytes = Array(text.utf8)
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if n < 0 { throw LinuxIOError(code: errno, path: path, operation: "write") }
    }

    package func contents(ofDirectory path: String) throws(LinuxIOError) -> [String] {
        guard let dir = opendir(path) else { throw LinuxIOError(code: errno, path: path, operation: "list") }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package func makeDirectory(_ path: String) throws(LinuxIOError) {
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw LinuxIOError(code: errno, path: path, operation: "mkdir") }
    }

    package func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
    package func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }
    package func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    package func canonicalPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    package func openDevice(_ path: String) throws(LinuxIOError) -> any LinuxDeviceHandle {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw LinuxIOError(code: errno, path: path, operation: "open") }
        return POSIXDeviceHandle(fd: fd, path: path)
    }
}

/// A device node opened with `O_NONBLOCK`, read through `poll(2)` + `read(2)`.
///
/// ``close()`` wakes a blocked reader through a self-pipe; the descriptors are released when the
/// handle is deallocated.
final class POSIXDeviceHandle: LinuxDeviceHandle, Sendable {
    let fd: Int32
    let path: String
    private let wake: (Int32, Int32)
    private let closed = Locked(false)
    /// `false` once ``release()`` gave the descriptors back.
    private let descriptorsOpen = Locked(true)

    /// Device file descriptor, exposed for ioctls (evdev).
    var fileDescriptor: Int32 { fd }

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for f in fds where f >= 0 {
            _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK)
            _ = fcntl(f, F_SETFD, FD_CLOEXEC)
        }
        self.wake = (fds[0], fds[1])
    }

    deinit {
        releaseDescriptors()
    }

    func release() {
        close()
        releaseDescriptors()
    }

    private func releaseDescriptors() {
        let wasOpen = descriptorsOpen.withLock { open -> Bool in
            defer { open = false }
            return open
        }
        guard wasOpen else { return }
        _ = Glibc.close(fd)
        _ = Glibc.close(wake.0)
        _ = Glibc.close(wake.1)
    }

    func read(maxBytes: Int, timeout: Double) throws(LinuxIOError) -> [UInt8] {
        if closed.withLock({ $0 }) { throw LinuxIOError(code: EBADF, path: path, operation: "read") }
        var buffer = [UInt8](repeating: 0, count: maxBytes)
        // Try first without waiting: under load the data is usually there already.
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { buffer.removeSubrange(n...); return buffer }
            if n == 0 {
                // End of file: a FIFO whose writer is gone, or a removed device on some drivers.
                throw LinuxIOError(code: ENODEV, path: path, operation: "read")
            }
            let e = errno
            if e == EINTR { continue }
            if e != EAGAIN && e != EWOULDBLOCK { throw LinuxIOError(code: e, path: path, operation: "read") }
            var pfds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.0, events: Int16(POLLIN), revents: 0)]
            let ms = timeout.isFinite ? Int32(max(0, min(timeout * 1000, 60_000)).rounded(.up)) : -1  // safe: clamped to 0…60 000
            let r = poll(&pfds, 2, ms)
            if r < 0 {
                if errno == EINTR { continue }
                throw LinuxIOError(code: errno, path: path, operation: "poll")
            }
            if r == 0 { return [] }
            if pfds[1].revents != 0 { throw LinuxIOError(code: EBADF, path: path, operation: "read") }
            let rev = Int32(pfds[0].revents)
            if rev & (POLLERR | POLLNVAL) != 0 && rev & POLLIN == 0 {
                throw LinuxIOError(code: ENODEV, path: path, operation: "poll")
            }
            if rev & POLLHUP != 0 && rev & POLLIN == 0 {
                throw LinuxIOError(code: ENODEV, path: path, operation: "poll")
            }
        }
    }

    func close() {
        let wasOpen = closed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        guard wasOpen else { return }
        // Only wake the reader here; the descriptors close in `release()` or deinit, so a reader
        // in poll(2) never sees its descriptor number reused by another open.
        var one: UInt8 = 1
        _ = Glibc.write(wake.1, &one, 1)
    }
}
