import Foundation

/// What a child process printed and how it ended.
public struct ChildProcessResult: Sendable {
    /// The exit status, or the signal number when `terminatedBySignal`.
    public var status: Int32
    /// Whether a signal ended it (`status` is then the signal).
    public var terminatedBySignal: Bool
    /// Everything it wrote to standard output, as UTF-8.
    public var stdout: String
    /// Everything it wrote to standard error, as UTF-8.
    public var stderr: String
    /// Whether the harness had to kill it after `timeout`.
    public var timedOut: Bool
}

/// Runs a child process without holding a Swift-concurrency thread while it runs.
///
/// Tests run as tasks on a pool of a few threads (about twice the cores, four on the two-core CI
/// machine). A test that waits for a process with `waitUntilExit` holds one of them for the whole
/// run; four such tests stop every other test in the process. Here the pipes are read on threads of
/// their own and the end of the process resumes the awaiting task.
public enum ChildProcess {
    /// Starts `executable` and waits for it to end, reading both pipes to their end.
    ///
    /// - Parameters:
    ///   - timeout: seconds after which the process gets SIGTERM, then SIGKILL 5 s later.
    ///   - stdin: bytes written to its standard input, which is then closed; nil gives /dev/null.
    ///   - limited: whether it waits for one of `ChildProcess.slots` first (the default). A test that
    ///     starts several processes at once on purpose passes false.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           currentDirectory: URL? = nil, stdin: Data? = nil, timeout: Double = 120,
                           limited: Bool = true) async throws -> ChildProcessResult {
        guard limited else {
            return try await launch(executable, arguments, environment: environment, currentDirectory: currentDirectory,
                                    stdin: stdin, timeout: timeout)
        }
        return try await slots.run {
            try await launch(executable, arguments, environment: environment, currentDirectory: currentDirectory,
                             stdin: stdin, timeout: timeout)
        }
    }

    /// How many child processes the tests run at once: three.
    ///
    /// Awaiting a process holds no thread, so without a bound every test that runs one would start it
    /// at once: seventy processes on two cores, each slowed until the real-time ones time out. The
    /// timeout of `run` counts from the start of the process, not from the wait for a slot.
    public static let slots = Semaphore(width: 3)

    private static func launch(_ executable: URL, _ arguments: [String], environment: [String: String]?,
                               currentDirectory: URL?, stdin: Data?, timeout: Double) async throws -> ChildProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        let ended = ProcessEnd()
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let outText = PipeDrain(out.fileHandleForReading), errText = PipeDrain(err.fileHandleForReading)
        if let input, let stdin {
            let handle = input.fileHandleForWriting
            Thread.detachNewThread {
                try? handle.write(contentsOf: stdin)
                try? handle.close()
            }
        }
        let killed = await ended.wait(timeout: timeout) {
            process.terminate()
        } escalate: {
            kill(process.processIdentifier, SIGKILL)
        }
        let stdout = await outText.text(), stderr = await errText.text()
        return ChildProcessResult(status: process.terminationStatus,
                                  terminatedBySignal: process.terminationReason == .uncaughtSignal,
                                  stdout: stdout, stderr: stderr, timedOut: killed)
    }
}

/// The end of a process as something a task can await, with a deadline.
final class ProcessEnd: @unchecked Sendable {
    private let lock = NSLock()
    private var ended = false
    private var waiter: CheckedContinuation<Void, Never>?

    func signal() {
        lock.lock()
        ended = true
        let w = waiter
        waiter = nil
        lock.unlock()
        w?.resume()
    }

    /// Waits for the end; past `timeout` calls `terminate`, 5 s later `escalate`. Returns whether it
    /// had to.
    func wait(timeout: Double, terminate: @escaping @Sendable () -> Void, escalate: @escaping @Sendable () -> Void) async -> Bool {
        let watchdog = Task { () -> Bool in
            do { try await Task.sleep(for: .seconds(timeout)) } catch { return false }
            terminate()
            if (try? await Task.sleep(for: .seconds(5))) != nil { escalate() }
            return true
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if ended { lock.unlock(); c.resume(); return }
            waiter = c
            lock.unlock()
        }
        watchdog.cancel()
        return await watchdog.value
    }
}

/// Reads a pipe to its end on a thread of its own.
///
/// `read(2)` itself: FileHandle's reads trap on EINTR, which signals to the test process cause.
public final class PipeDrain: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var finished = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Starts reading `handle` until end of file.
    public init(_ handle: FileHandle) {
        let fd = handle.fileDescriptor
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                lock.lock(); data.append(contentsOf: buffer[0..<n]); lock.unlock()
            }
            lock.lock()
            finished = true
            let w = waiters
            waiters = []
            lock.unlock()
            for c in w { c.resume() }
        }
    }

    /// What was read so far, without waiting.
    public var snapshot: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    /// Everything, once the writer closed the pipe.
    public func text() async -> String {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if finished { lock.unlock(); c.resume(); return }
            waiters.append(c)
            lock.unlock()
        }
        return snapshot
    }
}

/// Runs blocking work on a thread of its own, so the awaiting task holds no pool thread meanwhile.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// Runs `body(0)` … `body(count − 1)` as tasks, at most `width` at a time, and waits for all.
///
/// The async counterpart of `DispatchQueue.concurrentPerform` for tests, which would hold the test's
/// thread and more for the whole loop.
public func concurrently(_ count: Int, width: Int = 4, _ body: @escaping @Sendable (Int) async -> Void) async {
    await withTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(max(width, 1), count) {
            let i = next
            group.addTask { await body(i) }
            next += 1
        }
        while await group.next() != nil, next < count {
            let i = next
            group.addTask { await body(i) }
            next += 1
        }
    }
}
