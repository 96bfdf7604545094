#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// An in-memory twin of sysfs and `/dev` for tests, benchmarks and debugging, in the spirit of
/// swift-nio's `EmbeddedChannel`: the IIO and evdev code runs unchanged against it.
///
/// Files hold text; directories exist implicitly as prefixes of file paths; symbolic links are
/// resolved component by component; device nodes are byte queues that a test fills with
/// ``InMemoryDeviceNode/push(_:)`` and can unplug with ``InMemoryDeviceNode/unplug()``.
///
/// Threading: every method is safe from any thread (one internal lock).
public final class InMemoryLinuxFileSystem: LinuxFileSystem, @unchecked Sendable {
    private struct File {
        var text: String
        var writable: Bool
        var readError: Int32?
        var writeError: Int32?
        var onWrite: (@Sendable (String) -> String?)?
    }

    private let lock = ConditionLock()
    private var files: [String: File] = [:]
    private var links: [String: String] = [:]
    private var devices: [String: InMemoryDeviceNode] = [:]
    private var deviceOpenErrors: [String: Int32] = [:]
    private var writeLog: [(String, String)] = []
    private var mkdirHandlers: [String: @Sendable (String) -> Void] = [:]

    /// Creates an empty tree.
    public init() {}

    /// Every successful write so far, in order: (path, text).
    public var writes: [(path: String, text: String)] { lock.withLock { writeLog.map { (path: $0.0, text: $0.1) } } }

    /// Creates or replaces a text file. `writable` files accept ``writeText(_:_:)``. Symbolic links
    /// on the way are followed, as in a real tree.
    public func setFile(_ path: String, _ text: String, writable: Bool = false) {
        lock.withLock { files[resolve(path) ?? normalize(path)] = File(text: text, writable: writable) }
    }

    /// Makes reading `path` fail with `code` (e.g. `EINVAL`, as some sysfs attributes do).
    public func setReadError(_ path: String, _ code: Int32) {
        lock.withLock {
            let p = resolve(path) ?? normalize(path)
            var f = files[p] ?? File(text: "", writable: false)
            f.readError = code
            files[p] = f
        }
    }

    /// Makes writing `path` fail with `code` (e.g. `EACCES`, `EBUSY`).
    public func setWriteError(_ path: String, _ code: Int32) {
        lock.withLock {
            let p = resolve(path) ?? normalize(path)
            var f = files[p] ?? File(text: "", writable: true)
            f.writeError = code
            files[p] = f
        }
    }

    /// Installs a handler that turns a written value into the stored one, as a driver would
    /// (rounding a rate to a supported one, say). Returning `nil` rejects the write with `EINVAL`.
    public func setWriteHandler(_ path: String, _ handler: @escaping @Sendable (String) -> String?) {
        lock.withLock {
            let p = resolve(path) ?? normalize(path)
            var f = files[p] ?? File(text: "", writable: true)
            f.writable = true
            f.onWrite = handler
            files[p] = f
        }
    }

    /// Creates a symbolic link at `path` pointing to `target` (absolute, or relative to the link's directory).
    public func setLink(_ path: String, to target: String) {
        lock.withLock { links[normalize(path)] = target }
    }

    /// Creates a device node; the returned node is the test's end of it.
    @discardableResult
    public func addDevice(_ path: String) -> InMemoryDeviceNode {
        let node = InMemoryDeviceNode(path: path)
        lock.withLock { devices[normalize(path)] = node }
        return node
    }

    /// Makes opening the device at `path` fail with `code` (e.g. `EACCES`).
    public func setDeviceOpenError(_ path: String, _ code: Int32) {
        lock.withLock { deviceOpenErrors[normalize(path)] = code }
    }

    /// Removes `path` and everything under it (files, links, devices), as an unplug does in sysfs.
    public func removeTree(_ path: String) {
        lock.withLock {
            let p = normalize(path)
            let prefix = p + "/"
            files = files.filter { $0.key != p && !$0.key.hasPrefix(prefix) }
            links = links.filter { $0.key != p && !$0.key.hasPrefix(prefix) }
            for (k, d) in devices where k == p || k.hasPrefix(prefix) { d.unplug() }
            devices = devices.filter { $0.key != p && !$0.key.hasPrefix(prefix) }
        }
    }

    /// Runs `handler(name)` when a directory is created inside `parent`, as configfs makes the
    /// kernel create an object (an hrtimer trigger). Without a handler, creating fails with `EACCES`.
    public func setDirectoryCreationHandler(_ parent: String, _ handler: @escaping @Sendable (String) -> Void) {
        lock.withLock {
            let p = resolve(parent) ?? normalize(parent)
            mkdirHandlers[p] = handler
            files[p + "/.keep"] = File(text: "", writable: false)
        }
    }

    // MARK: LinuxFileSystem

    public func makeDirectory(_ path: String) throws(LinuxIOError) {
        let handler: (@Sendable (String) -> Void)? = lock.withLock {
            let p = resolve(path) ?? normalize(path)
            let parent = String(p[..<p.lastIndex(of: "/")!])
            guard let h = mkdirHandlers[parent] else { return nil }
            files[p + "/.keep"] = File(text: "", writable: false)
            return h
        }
        guard let handler else { throw LinuxIOError(code: EACCES, path: path, operation: "mkdir") }
        handler(String(path.split(separator: "/").last ?? ""))
    }

    public func readText(_ path: String) throws(LinuxIOError) -> String {
        let r: Result<String, LinuxIOError> = lock.withLock {
            guard let p = resolve(path), let f = files[p] else {
                return .failure(LinuxIOError(code: ENOENT, path: path, operation: "open"))
            }
            if let e = f.readError { return .failure(LinuxIOError(code: e, path: path, operation: "read")) }
            return .success(f.text)
        }
        return try r.get()
    }

    public func writeText(_ path: String, _ text: String) throws(LinuxIOError) {
        let r: Result<Void, LinuxIOError> = lock.withLock {
            guard let p = resolve(path), var f = files[p] else {
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
            files[p] = f
            writeLog.append((path, text))
            return .success(())
        }
        try r.get()
    }

    public func contents(ofDirectory path: String) throws(LinuxIOError) -> [String] {
        let r: Result<[String], LinuxIOError> = lock.withLock {
            guard let p = resolve(path) else { return .failure(LinuxIOError(code: ENOENT, path: path, operation: "list")) }
            let prefix = p == "/" ? "/" : p + "/"
            var names = Set<String>()
            for key in Array(files.keys) + Array(links.keys) + Array(devices.keys) where key.hasPrefix(prefix) {
                let rest = key.dropFirst(prefix.count)
                if let first = rest.split(separator: "/").first, first != ".keep" { names.insert(String(first)) }
            }
            if names.isEmpty && files[p] == nil { return .failure(LinuxIOError(code: ENOENT, path: path, operation: "list")) }
            return .success(Array(names))
        }
        return try r.get()
    }

    public func fileExists(_ path: String) -> Bool {
        lock.withLock {
            guard let p = resolve(path) else { return false }
            if files[p] != nil || devices[p] != nil { return true }
            let prefix = p + "/"
            return files.keys.contains { $0.hasPrefix(prefix) } || links.keys.contains { $0.hasPrefix(prefix) }
                || devices.keys.contains { $0.hasPrefix(prefix) }
        }
    }

    public func isWritable(_ path: String) -> Bool {
        lock.withLock {
            guard let p = resolve(path), let f = files[p] else { return false }
            return f.writable && f.writeError == nil
        }
    }

    public func isReadable(_ path: String) -> Bool {
        lock.withLock {
            guard let p = resolve(path) else { return false }
            if let f = files[p] { return f.readError == nil }
            if devices[p] != nil { return deviceOpenErrors[p] == nil }
            return false
        }
    }

    public func canonicalPath(_ path: String) -> String? {
        lock.withLock { resolve(path) }
    }

    public func openDevice(_ path: String) throws(LinuxIOError) -> any LinuxDeviceHandle {
        let r: Result<InMemoryDeviceNode, LinuxIOError> = lock.withLock {
            guard let p = resolve(path), let d = devices[p] else {
                return .failure(LinuxIOError(code: ENOENT, path: path, operation: "open"))
            }
            if let e = deviceOpenErrors[p] { return .failure(LinuxIOError(code: e, path: path, operation: "open")) }
            return .success(d)
        }
        return try r.get().open()
    }

    // MARK: paths (called with the lock held)

    private func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for c in path.split(separator: "/") {
            if c == "." || c.isEmpty { continue }
            if c == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(c)
        }
        return "/" + parts.joined(separator: "/")
    }

    private func resolve(_ path: String) -> String? {
        var current: [Substring] = []
        var pending = Array(normalize(path).split(separator: "/").reversed())
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
public final class InMemoryDeviceNode: @unchecked Sendable {
    /// The node's path.
    public let path: String
    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var queue: [UInt8] = []
    private var gone = false
    private var openCount = 0

    init(path: String) {
        self.path = path
    }

    /// Queues bytes for the reader.
    public func push(_ bytes: [UInt8]) {
        lock.withLock {
            queue.append(contentsOf: bytes)
            lock.broadcast()
        }
    }

    /// Unplugs the device: blocked and later reads throw `ENODEV` at once, queued bytes are lost,
    /// as when the kernel unregisters an IIO device.
    public func unplug() {
        lock.withLock {
            gone = true
            lock.broadcast()
        }
    }

    /// How many times the node has been opened.
    public var opens: Int { lock.withLock { openCount } }

    /// Bytes queued and not read yet.
    public var pendingBytes: Int { lock.withLock { queue.count } }

    func open() throws(LinuxIOError) -> InMemoryDeviceHandle {
        lock.lock()
        defer { lock.unlock() }
        if gone { throw LinuxIOError(code: ENODEV, path: path, operation: "open") }
        openCount += 1
        return InMemoryDeviceHandle(node: self)
    }

    fileprivate func read(maxBytes: Int, timeout: Double, isClosed: () -> Bool) throws(LinuxIOError) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        let deadline = MonotonicClock.now() + max(0, min(timeout, 3600))
        while true {
            if isClosed() { throw LinuxIOError(code: EBADF, path: path, operation: "read") }
            if gone { throw LinuxIOError(code: ENODEV, path: path, operation: "read") }
            if !queue.isEmpty {
                let n = min(maxBytes, queue.count)
                let out = Array(queue[0..<n])
                queue.removeFirst(n)
                return out
            }
            if MonotonicClock.now() >= deadline { return [] }
            lock.wait(until: deadline)
        }
    }

    fileprivate func wakeAll() {
        lock.withLock { lock.broadcast() }
    }
}

final class InMemoryDeviceHandle: LinuxDeviceHandle, @unchecked Sendable {
    let node: InMemoryDeviceNode
    private let lock = ConditionLock()
    private var closed = false

    init(node: InMemoryDeviceNode) { self.node = node }

    func read(maxBytes: Int, timeout: Double) throws(LinuxIOError) -> [UInt8] {
        try node.read(maxBytes: maxBytes, timeout: timeout, isClosed: { lock.withLock { closed } })
    }

    func close() {
        lock.withLock { closed = true }
        node.wakeAll()
    }
}
