import Foundation
import NIOPosix
import NIOCore
import MotionTestSupport

/// A private Mosquitto broker for one test: its own config in a temp dir, on free loopback ports, one
/// listener without authentication and one with a password file (`mosquitto_passwd -b`), persistence on;
/// with `webSocket`, a third listener speaking MQTT over WebSocket (`protocol websockets`: Debian's
/// Mosquitto 2.0.11 is built with libwebsockets).
final class Mosquitto: @unchecked Sendable {
    static let binary: String? = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/local/bin/mosquitto"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool { binary != nil && passwd != nil }
    static let passwd: String? = ["/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd", "/usr/sbin/mosquitto_passwd"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static let skipMessage = "mosquitto is not installed (apt-get install mosquitto; CI installs it from .ci/apt-packages)"

    let dir: URL
    let port: Int
    let authPort: Int
    /// The `protocol websockets` listener's port, when asked for.
    let wsPort: Int?
    let user = "robot"
    let password = "s3cret"
    private var pid: pid_t = 0

    init(webSocket: Bool = false) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("ocm-mosquitto-\(UUID().uuidString)")
        // Mosquitto started as root drops to its own user, which must still write its log and database here.
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        port = try Self.freePort()
        authPort = try Self.freePort()
        wsPort = webSocket ? try Self.freePort() : nil
        let pw = dir.appendingPathComponent("passwd").path
        _ = FileManager.default.createFile(atPath: pw, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.passwd ?? "/usr/bin/mosquitto_passwd")
        p.arguments = ["-b", pw, user, password]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        let conf = """
            per_listener_settings true
            persistence true
            persistence_location \(dir.path)/
            autosave_interval 3600
            log_dest file \(dir.path)/mosquitto.log
            listener \(port) 127.0.0.1
            allow_anonymous true
            listener \(authPort) 127.0.0.1
            allow_anonymous false
            password_file \(pw)

            """ + (wsPort.map { "listener \($0) 127.0.0.1\nprotocol websockets\nallow_anonymous true\n" } ?? "")
        try conf.write(to: dir.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    /// ``init(webSocket:)`` on a thread of its own: it waits for `mosquitto_passwd` and polls until the
    /// broker accepts connections, which an async test must not do on one of the pool's few threads.
    static func started(webSocket: Bool = false) async throws -> Mosquitto {
        try await offThePool { try Mosquitto(webSocket: webSocket) }
    }

    /// Starts (or restarts) the broker and waits until it accepts connections.
    ///
    /// Spawned with an empty signal mask: a test process blocks SIGTERM in its threads, and a child
    /// started by `Process` would inherit that and never stop (nor save its sessions) on SIGTERM.
    func start() throws {
        let args = [Self.binary ?? "/usr/sbin/mosquitto", "-c", dir.appendingPathComponent("mosquitto.conf").path]
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cargs = args.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, args[0], &actions, &attr, &cargs, environ)
        guard rc == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot start mosquitto: error \(rc)"]) }
        pid = child
        // Up to 60 s: a loaded machine can take seconds to start it; the loop ends once it accepts.
        for _ in 0..<6000 {
            if Self.accepts(port: port), wsPort.map(Self.accepts(port:)) ?? true { return }
            usleep(10_000)
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "mosquitto did not start on port \(port)"])
    }

    /// Stops the broker gracefully (SIGTERM: it saves its persistent sessions) and waits for it
    /// (SIGKILL after `patience` seconds, which would lose the sessions: ``stopAsync()`` waits 60 s).
    func stop(patience: Double = 5) {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<Int(patience * 100) {
            if waitpid(pid, &status, WNOHANG) == pid { pid = 0; return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        pid = 0
    }

    /// ``stop()`` on a thread of its own, so an async test does not hold a cooperative thread while
    /// the broker saves its sessions and exits.
    func stopAsync() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { self.stop(patience: 60); done.resume() }
        }
    }

    /// ``start()`` on a thread of its own (it waits until the broker accepts connections).
    func startAsync() async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread { done.resume(with: Result { try self.start() }) }
        }
    }

    /// A broker still running is told to stop (SIGTERM) and reaped on a thread of its own, which then
    /// removes its directory: the last reference may drop on a cooperative thread, which must not wait
    /// for the broker to save its sessions and exit.
    deinit {
        let child = pid, dir = dir
        guard child > 0 else {
            try? FileManager.default.removeItem(at: dir)
            return
        }
        kill(child, SIGTERM)
        Thread.detachNewThread {
            var status: Int32 = 0, reaped = false
            for _ in 0..<6000 where !reaped {
                reaped = waitpid(child, &status, WNOHANG) == child
                if !reaped { usleep(10_000) }
            }
            if !reaped { kill(child, SIGKILL); waitpid(child, &status, 0) }
            try? FileManager.default.removeItem(at: dir)
        }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { ptr in
            ptr.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw CocoaError(.fileReadUnknown) }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) { ptr in
            ptr.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// Runs a command and captures its output.
struct Run {
    var status: Int32
    var stdout: String
    var stderr: String

    static func command(_ executable: String, _ arguments: [String], timeout: Double = 30) throws -> Run {
        let started = try Started(executable, arguments)
        let deadline = Date().addingTimeInterval(timeout)
        while started.process.isRunning && Date() < deadline { usleep(10_000) }
        if started.process.isRunning { started.process.terminate() }
        return started.finish()
    }

    /// ``command(_:_:timeout:)`` for async tests (the timeout, a give-up, 120 s by default): waits with `Task.sleep`, so the test does not hold one
    /// of the few cooperative threads (two on a 2-core machine) while the command runs.
    static func commandAsync(_ executable: String, _ arguments: [String], timeout: Double = 120) async throws -> Run {
        let started = try Started(executable, arguments)
        let deadline = Date().addingTimeInterval(timeout)
        while started.process.isRunning && Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
        if started.process.isRunning { started.process.terminate() }
        while started.process.isRunning { try? await Task.sleep(nanoseconds: 10_000_000) }
        return started.finish()
    }

    /// A command launched with its output going to two temporary files; ``finish()`` collects them.
    private struct Started {
        let process = Process()
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("ocm-run-\(UUID().uuidString).out")
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("ocm-run-\(UUID().uuidString).err")

        init(_ executable: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            var env = ProcessInfo.processInfo.environment
            env.removeValue(forKey: "COREMOTION_SOURCE")
            process.environment = env
            _ = FileManager.default.createFile(atPath: out.path, contents: nil)
            _ = FileManager.default.createFile(atPath: err.path, contents: nil)
            do {
                process.standardOutput = try FileHandle(forWritingTo: out)
                process.standardError = try FileHandle(forWritingTo: err)
                try process.run()
            } catch {
                removeFiles()
                throw error
            }
        }

        /// Waits for the exit (the caller has waited or terminated it), reads the output, removes the files.
        func finish() -> Run {
            process.waitUntilExit()
            defer { removeFiles() }
            return Run(status: process.terminationStatus,
                       stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
        }

        private func removeFiles() {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
    }

    /// The `coremotion` binary of this build.
    static var coremotion: String {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("coremotion")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("coremotion").path
    }

    /// `python3` as the shell would find it (PATH first: CI's `python3 -m pip` installs paho-mqtt there).
    static let python: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map { "\($0)/python3" } + ["/usr/bin/python3"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
}
