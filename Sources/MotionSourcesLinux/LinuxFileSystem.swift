#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// A failed file operation on sysfs or `/dev`, with the `errno` the kernel returned.
package struct LinuxIOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C `errno` value (`ENOENT`, `EACCES`, `ENODEV`, …).
    package var code: Int32
    /// The file involved.
    package var path: String
    /// What was attempted: `open`, `read`, `write`, `list`, `poll`.
    package var operation: String

    /// Creates an error.
    package init(code: Int32, path: String, operation: String) {
        self.code = code
        self.path = path
        self.operation = operation
    }

    /// `true` for `EACCES` and `EPERM`.
    package var isPermissionDenied: Bool { code == EACCES || code == EPERM }
    /// `true` when the device went away: `ENODEV`, `ENXIO` or `ESHUTDOWN`.
    package var isDeviceGone: Bool { code == ENODEV || code == ENXIO || code == ESHUTDOWN }

    /// The C library's text for ``code``.
    package var reason: String { String(cString: strerror(code)) }

    /// `operation path: reason`.
    package var description: String { "\(operation) \(path): \(reason)" }
}

extension LinuxIOError {
    /// `true` when the node itself vanished (`ENOENT`) or the device went away (``isDeviceGone``).
    package var isNodeGone: Bool { code == ENOENT || isDeviceGone }

    /// The one mapping of a Linux I/O error to a source error:
    /// - the node vanished (``isNodeGone``): ``SourceError/Kind/deviceRemoved`` with `gone`, or else
    ///   "`context`: reason";
    /// - `EACCES`/`EPERM`: ``SourceError/Kind/permissionDenied``, "`context` (reason); `permissionFix`";
    /// - anything else: ``SourceError/Kind/io``, "`context`: reason".
    ///
    /// The error keeps ``path``.
    package func sourceError(_ context: String, gone: String? = nil, permissionFix: String? = nil) -> SourceError {
        if isNodeGone { return SourceError(.deviceRemoved, gone ?? "\(context): \(reason)", path: path) }
        if isPermissionDenied {
            return SourceError(.permissionDenied, "\(context) (\(reason))" + (permissionFix.map { "; \($0)" } ?? ""), path: path)
        }
        return SourceError(.io, "\(context): \(reason)", path: path)
    }

    /// What to do when a sysfs attribute cannot be read.
    package static let sysfsPermissionFix = "add a udev rule giving your group read access to the IIO sysfs attributes, or run as root"
    /// What to do when an input node cannot be opened.
    package static let inputPermissionFix = "add yourself to the 'input' group (sudo usermod -aG input $USER) or install a udev rule with TAG+=\"uaccess\" for the controller"
}

/// An open device node (`/dev/iio:deviceN`, `/dev/input/eventN`) delivering bytes.
///
/// Threading: one reader thread at a time; ``close()`` may be called from any thread and wakes a
/// blocked ``read(maxBytes:timeout:)``.
package protocol LinuxDeviceHandle: AnyObject, Sendable {
    /// Waits up to `timeout` seconds for data and returns at most `maxBytes` bytes; an empty array
    /// means the timeout passed. Throws with `ENODEV` when the device was removed.
    func read(maxBytes: Int, timeout: Double) throws(LinuxIOError) -> [UInt8]
    /// Closes the node. Further reads throw `EBADF`.
    ///
    /// This wakes a reader blocked in ``read(maxBytes:timeout:)``; the descriptor itself stays open
    /// until ``release()`` or the handle's end, so a reader still inside `poll(2)` never sees its
    /// descriptor number reused by another open.
    func close()
    /// Closes the node and gives the descriptor back to the kernel now.
    ///
    /// Call it only when no thread can be inside ``read(maxBytes:timeout:)`` (after joining the
    /// readers). Devices that allow one open at a time (an IIO buffer's `/dev/iio:deviceN` answers a
    /// second open with `EBUSY`) can then be opened again at once, as a rate change does.
    func release()
}

/// The part of the file system the Linux sources touch: sysfs text attributes and device nodes.
///
/// ``POSIXFileSystem`` is the real one; `InMemoryLinuxFileSystem` (MotionSourcesLinuxTesting) is a twin for tests, built
/// from fixtures. Paths are absolute. All methods may be called from any thread.
package protocol LinuxFileSystem: Sendable {
    /// Reads a whole (small) text file such as a sysfs attribute.
    func readText(_ path: String) throws(LinuxIOError) -> String
    /// Writes a sysfs attribute (the whole value, as one `write`).
    func writeText(_ path: String, _ text: String) throws(LinuxIOError)
    /// The names in a directory, unsorted, without `.` and `..`.
    func contents(ofDirectory path: String) throws(LinuxIOError) -> [String]
    /// `true` when something exists at `path` (following symbolic links).
    func fileExists(_ path: String) -> Bool
    /// `true` when this process may write `path`.
    func isWritable(_ path: String) -> Bool
    /// `true` when this process may read `path`.
    func isReadable(_ path: String) -> Bool
    /// The path with symbolic links resolved, or `nil` when it does not resolve.
    func canonicalPath(_ path: String) -> String?
    /// Creates a directory (configfs: an hrtimer trigger).
    func makeDirectory(_ path: String) throws(LinuxIOError)
    /// Opens a device node for non-blocking reading.
    func openDevice(_ path: String) throws(LinuxIOError) -> any LinuxDeviceHandle
}

extension LinuxFileSystem {
    /// Reads an attribute and trims surrounding white space; `nil` when it cannot be read.
    package func attribute(_ path: String) -> String? {
        guard let text = try? readText(path) else { return nil }
        return SysfsValue.trimmed(text)
    }
}

/// Joins path components with single slashes.
@inline(__always)
func joinPath(_ base: String, _ name: String) -> String {
    if base.hasSuffix("/") { return base + name }
    return base + "/" + name
}
