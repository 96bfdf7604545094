#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionSourcesLinux

/// An in-memory twin of sysfs and `/dev` for tests, benchmarks and debugging, in the spirit of
/// swift-nio's `EmbeddedChannel`: the IIO and evdev code runs unchanged against it.
///
/// Files hold text; directories exist implicitly as prefixes of file paths; symbolic links are
/// resolved component by component; device nodes are byte queues that a test fills with
/// ``InMemoryDeviceNode/push(_:)`` and can unplug with ``InMemoryDeviceNode/unplug()``.
///
/// Threading: every method is safe from any thread (one internal lock).
package final class InMemoryLinuxFileSystem: LinuxFileSystem, Sendable {
    fileprivate struct File {
        var text: String
        var writable: Bool
        var readError: Int32?
        var writeError: Int32?
        var onWrite: (@Sendable (String) -> String?)?
    }

    fileprivate struct Tree {
        var files: [String: File] = [:]
        var links: [String: String] = [:]
        var devices: [String: InMemoryDeviceNode] = [:]
        var deviceOpenErrors: [String: Int32] = [:]
        var writeLog: [(String, String)] = []
        var mkdirHandlers: [String: @Sendable (String) -> Void] = [:]
    }

    private let tree = Locked(Tree())

    /// Creates an empty tree.
    package init() {}

    /// Every successful write so far, in order: (path, text).
    package var writes: [(path: String, text: String)] { tree.withLock { t in t.writeLog.map { (path: $0.0, text: $0.1) } } }

    /// Creates or replaces a text file. `writable` t.files accept ``writeText(_:_:)``. Symbolic t.links
    /// on the way are followed, as in a real tree.
    package func setFile(_ path: String, _ text: String, writable: Bool = false) {
        tree.withLock { t in t.files[t.resolve(path) ?? Tree.normalize(path)] = File(text: text, writable: writable) }
    }

    /// Makes reading `path` fail with `code` (e.g. `EINVAL`, as some sysfs attributes do).
    package func setReadError(_ path: String, _ code: Int32) {
        tree.withLock { t in
            let p = t.resolve(path) ?? Tree.normalize(path)
            var f = t.files[p] ?? File(text: "", writable: false)
            f.readError = code
            t.files[p] = f
        }
    }

    /// Makes writing `path` fail with `code` (e.g. `EACCES`, `EBUSY`).
    package func setWriteError(_ path: String, _ code: Int32) {
        tree.withLock { t in
            let p = t.resolve(path) ?? Tree.normalize(path)
            var f = t.files[p] ?? File(text: "", writable: true)
            f.writeError = code
            t.files[p] = f
        }
    }

    /// Installs a handler that turns a written value into the stored one, as a driver would
    /// (rounding a rate to a supported one, say). Returning `nil` rejects the write with `EINVAL`.
    package func setWriteHandler(_ path: String, _ handler: @escaping @Sendable (String) -> String?) {
        tree.withLock { t in
            let p = t.resolve(path) ?? Tree.normalize(path)
            var f = t.files[p] ?? File(text: "", writable: true)
            f.writable = true
            f.onWrite = handler
            t.files[p] = f
        }
    }

    /// Creates a symbolic link at `path` pointing to `target` (absolute, or relative to the link's directory).
    package func setLink(_ path: String, to target: String) {
        tree.withLock { t in t.links[Tree.normalize(path)] = target }
    }

    /// Creates a device node; the returned node is the test's end of it.
    ///
    /// - Parameter exclusive: `true` for a node the kernel lets one holder open at a time, as an IIO
    ///   buffer's `/dev/iio:deviceN`: a second open fails with `EBUSY` until the first handle is
    ///   released (``LinuxDeviceHandle/release()``, or the handle's end). Evdev nodes are not.
    @discardableResult
    package func addDevice(_ path: String, exclusive: Bool = false) -> InMemoryDeviceNode {
        let node = InMemoryDeviceNode(path: path, exclusive: exclusive)
        tree.withLock { t in t.devices[Tree.normalize(path)] = node }
        return node
    }

    /// Makes opening the device at `path` fail with `code` (e.g. `EACCES`).
    package func setDeviceOpenError(_ path: String, _ code: Int32) {
        tree.withLock { t in t.deviceOpenErrors[Tree.normalize(path)] = code }
    }

    /// Removes `path` and everything under it (t.files, t.links, t.devices), as an unplug does in sysfs.
    package func removeTree(_ path: String) {
        tree.withLock { t in
            let p = Tree.normalize(path)
            let prefix = p + "/"
            t.files = t.files.filter { $0.key != p && !$0.key.hasPrefix(prefix) }
            t.links = t.links.filter { $0.key != p && !$0.key.hasPrefix(prefix) }
            for (k, d) in t.devices where k == p || k.hasPrefix(prefix) { d.unplug() }
            t.devices = t.devices.filter { $0.key != p && !$0.key.hasPrefix(prefix) }
        }
    }

    /// Runs `handler(name)` when a directory is created inside `parent`, as configfs makes the
    /// kernel create an object (an hrtimer trigger). Without a handler, creating fails with `EACCES`.
    package func setDirectoryCreationHandler(_ parent: String, _ handler: @escaping @Sendable (String) -> Void) {
        tree.withLock { t in
            let p = t.resolve(parent) ?? Tree.normalize(parent)
            t.mkdirHandlers[p] = handler
            t.files[p + "/.keep"] = File(text: "", writable: false)
        }
    }

    // MARK: LinuxFileSystem

    package func makeDirectory(_ path: String) throws(LinuxIOError) {
        let handler: (@Sendable (String) -> Void)? = tree.withLock { t in
            let p = t.resolve(path) ?? Tree.normalize(path)
            let parent = String(p[..<p.lastIndex(of: "/")!])
            guard let h = t.mkdirHandlers[parent] else { return nil }
            t.files[p + "/.keep"] = File(text: "", writable: false)
            return h
        }
        guard let handler else { throw LinuxIOError(code: EACCES, path: path, operation: "mkdir") }
        handler(String(path.split(separator: "/").last ?? ""))
    }

    package func readText(_ path: String) throws(LinuxIOError) -> String {
        let r: Result<String, LinuxIOError> = tree.withLock { t in
            guard let p = t.resolve(path), let f = t.files[p] else {
                return .failure(LinuxIOError(code: ENOENT, path: path, operation: "open"))
            }
            if let e = f.readError { return .failure(LinuxIOError(code: e, path: path, operation: "read")) }
            return .success(f.text)
        }
        return try r.get()
    }

    package func writeText(_ path: String, _ text: String) throws(LinuxIOError) {
        let r: Result<Void, LinuxIOError> = tree.withLock { t in
            guard let p = t.resolve(path), var f = t.files[p] else {
                return .failure(LinuxIOError(code: ENOENT, path: path, operation: "open"))
            }
            if let e = f.writeError { return .failure(LinuxIOError(code: e, path: path, operation: "write")) }
            guard f.writable else { return .failure(LinuxIOError(code: EACCES, path: path, operation: "open")) }
            if let h = f.onWrite {
                guard let stored = h(text) else { return .failure(LinuxIOError(code: EINVAL, path: path, operation: "write")) }
                f.text = stored
            } else {
                f.text = SysfsValue.trimmed(text) + "\n"
            }
            t.files[p] = f
            t.writeLog.append((path, text))
            return .success(())
        }
        try r.get()
    }

    package func contents(ofDirectory path: String) throws(LinuxIOError) -> [String] {
        let r: Result<[String], LinuxIOError> = tree.withLock { t in
            guard let p = t.resolve(path) else { return .failure(LinuxIOError(code: ENOENT, path: path, operation: "list")) }
            let prefix = p == "/" ? "/" : p + "/"
            var names = Set<String>()
            for key in Array(t.files.keys) + Array(t.links.keys) + Array(t.devices.keys) where key.hasPrefix(prefix) {
                let rest = key.dropFirst(prefix.count)
                if let first = rest.split(separator: "/").first, first != ".keep" { names.insert(String(first)) }
            }
            if names.isEmpty && t.files[p] == nil { return .failure(LinuxIOError(code: ENOENT, path: path, operation: "list")) }
            return .success(Array(names))
        }
        return try r.get()
    }

    package func fileExists(_ path: String) -> Bool {
        tree.withLock { t in
            guard let p = t.resolve(path) else { return false }
            if t.files[p] != nil || t.devices[p] != nil { return true }
            let prefix = p + "/"
            return t.files.keys.contains { $0.hasPrefix(prefix) } || t.links.keys.contains { $0.hasPrefix(prefix) }
                || t.devices.keys.contains { $0.hasPrefix(prefix) }
        }
    }

    package func isWritable(_ path: String) -> Bool {
        tree.withLock { t in
            guard let p = t.resolve(path), let f = t.files[p] else { return false }
            return f.writable && f.writeError == nil
        }
    }

    package func isReadable(_ path: String) -> Bool {
        tree.withLock { t in
            guard let p = t.resolve(path) else { return false }
            if let f = t.files[p] { return f.readError == nil }
            // As access(2): only a permission error makes a node unreadable (an EBUSY open is readable).
            if t.devices[p] != nil { return ![EACCES, EPERM].contains(t.deviceOpenErrors[p] ?? 0) }
            return false
        }
    }

    package func canonicalPath(_ path: String) -> String? {
        tree.withLock { t in t.resolve(path) }
    }

    package func openDevice(_ path: String) throws(LinuxIOError) -> any LinuxDeviceHandle {
        let r: Result<InMemoryDeviceNode, LinuxIOError> = tree.withLock { t in
            guard let p = t.resolve(path), let d = t.devices[p] else {
                return .failure(LinuxIOError(code: ENOENT, path: path, operation: "open"))
            }
            if let e = t.deviceOpenErrors[p] { return .failure(LinuxIOError(code: e, path: path, operation: "open")) }
            return .success(d)
        }
        return try r.get().open()
    }
}

extension InMemoryLinuxFileSystem.Tree {

    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for c in path.split(separator: "/") {
            if c == "." || c.isEmpty { continue }
            if c == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(c)
        }
        return "/" + parts.joined(separator: "/")
    }

    func resolve(_ path: String) -> String? {
        var current: [Substring] = []
        var pending = Array(Self.normalize(path).split(separator: "/").reversed())
        var hops = 0
        while let c = pending.popLast() {
            if c == ".." { if !current.isEmpty { current.removeLast() }; continue }
            if c == "." { continue }
            current.append(c)
            let here = "/" + current.joined(separator: "/")
            if let target = links[here] {
                hops += 1
                if hops > 40 { return nil }
                current.removeLast()
                if target.hasPrefix("/") { current = [] }
                pending.append(contentsOf: target.split(separator: "/").reversed())
            }
        }
        return "/" + current.joined(separator: "/")
    }
}

/// The test's end of an in-memory device node: bytes pushed here come out of the handle's reads.
///
/// Threading: safe from any thread; readers block on a condition until data, unplug or close.
package final class InMemoryDeviceNode: Sendable {
    /// The node's path.
    package let path: String
    /// Whether one holder at a time may open it (see ``InMemoryLinuxFileSystem/addDevice(_:exclusive:)``).
    package let exclusive: Bool
    private struct State {
        var queue: [UInt8] = []
        var gone = false
        var openCount = 0
        var held = 0
        var busyOpens = 0
    }
    private let state = ConditionLocked(State())

    init(path: String, exclusive: Bool = false) {
        self.path = path
        self.exclusive = exclusive
    }

    /// Queues bytes for the reader.
    package func push(_ bytes: [UInt8]) {
        state.withLock(broadcasting: true) { $0.queue.append(contentsOf: bytes) }
    }

    /// Unplugs the device: blocked and later reads throw `ENODEV` at once, queued bytes are lost,
    /// as when the kernel unregisters an IIO device.
    package func unplug() {
        state.withLock(broadcasting: true) { $0.gone = true }
    }

    /// How many times the node has been opened.
    package var opens: Int { state.withLock { $0.openCount } }

    /// How many opens failed with `EBUSY` because an earlier handle still held an exclusive node.
    package var busyOpens: Int { state.withLock { $0.busyOpens } }

    /// Handles opened and not yet released.
    package var holders: Int { state.withLock { $0.held } }

    /// Bytes queued and not read yet.
    package var pendingBytes: Int { state.withLock { $0.queue.count } }

    func open() throws(LinuxIOError) -> InMemoryDeviceHandle {
        let exclusive = exclusive
        let refusal = state.withLock { s -> Int32? in
            if s.gone { return ENODEV }
            if exclusive && s.held > 0 {
                s.busyOpens += 1
                return EBUSY
            }
            s.openCount += 1
            s.held += 1
            return nil
        }
        if let refusal { throw LinuxIOError(code: refusal, path: path, operation: "open") }
        return InMemoryDeviceHandle(node: self)
    }

    fileprivate func handleReleased() {
        state.withLock(broadcasting: true) { $0.held -= 1 }
    }

    fileprivate func read(maxBytes: Int, timeout: Double, isClosed: () -> Bool) throws(LinuxIOError) -> [UInt8] {
        let deadline = MonotonicClock.now() + max(0, min(timeout, 3600))
        let path = path
        let outcome = state.withLock(waiting: { s -> LockStep<Result<[UInt8], LinuxIOError>> in
            if isClosed() { return .done(.failure(LinuxIOError(code: EBADF, path: path, operation: "read"))) }
            if s.gone { return .done(.failure(LinuxIOError(code: ENODEV, path: path, operation: "read"))) }
            if !s.queue.isEmpty {
                let n = min(maxBytes, s.queue.count)
                let out = Array(s.queue[0..<n])
                s.queue.removeFirst(n)
                return .done(.success(out))
            }
            if MonotonicClock.now() >= deadline { return .done(.success([])) }
            return .waitUntil(deadline)
        })
        return try outcome.get()
    }

    fileprivate func wakeAll() {
        state.withLock(broadcasting: true) { _ in }
    }
}

final class InMemoryDeviceHandle: LinuxDeviceHandle, Sendable {
    let node: InMemoryDeviceNode
    private let closed = Locked(false)
    private let released = Locked(false)

    init(node: InMemoryDeviceNode) { self.node = node }

    deinit { giveBack() }

    /// As the kernel's file release: the node may be opened again (exclusive nodes).
    func release() {
        close()
        giveBack()
    }

    private func giveBack() {
        let first = released.withLock { r -> Bool in
            defer { r = true }
            return !r
        }
        if first { node.handleReleased() }
    }

    func read(maxBytes: Int, timeout: Double) throws(LinuxIOError) -> [UInt8] {
        try node.read(maxBytes: maxBytes, timeout: timeout, isClosed: { closed.withLock { $0 } })
    }

    func close() {
        closed.withLock { $0 = true }
        node.wakeAll()
    }
}
