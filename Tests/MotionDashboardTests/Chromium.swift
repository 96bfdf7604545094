import Foundation
import HummingbirdWSClient
import Logging
import MotionSources
import MotionTestSupport

/// Headless Chromium driven over the DevTools protocol (CDP), for the dashboard's browser test.
///
/// Chromium is Debian's `chromium` package (CI installs it from `.ci/apt-packages`); `CHROMIUM`
/// names another binary. Missing Chromium is a test failure, not a skip.
struct Chromium {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "chromium not found: install Debian's package `chromium` (CI does, from .ci/apt-packages) or set CHROMIUM=/path/to/chrome"
        }
    }
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The browser binary: `$CHROMIUM`, else the first of chromium, chromium-browser, google-chrome on `PATH`.
    static func executable() throws -> String {
        let env = ProcessInfo.processInfo.environment
        if let path = env["CHROMIUM"], FileManager.default.isExecutableFile(atPath: path) { return path }
        let dirs = (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
                return dir + "/" + name
            }
        }
        throw Missing()
    }

    /// Starts a headless browser, opens one page at `url`, runs `body` with a CDP session attached to
    /// that page, then closes the browser.
    ///
    /// One browser at a time, never beside a VM or a soak (`Exclusive`): the rates the tests measure
    /// need the core the browser renders on.
    static func withPage<T: Sendable>(
        url: String, width: Int = 1280, height: Int = 1100,
        _ body: @escaping @Sendable (CDPSession) async throws -> T
    ) async throws -> T {
        try await Exclusive.run("browser \(url)") { try await openPage(url: url, width: width, height: height, body) }
    }

    private static func openPage<T: Sendable>(
        url: String, width: Int, height: Int,
        _ body: @escaping @Sendable (CDPSession) async throws -> T
    ) async throws -> T {
        let binary = try executable()
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("coremotion-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: profile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
            // The CDP client sends an Origin header; DevTools refuses unknown origins otherwise.
            "--remote-allow-origins=*",
            "--user-data-dir=\(profile.path)", "--window-size=\(width),\(height)", "about:blank",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Whatever happens, the browser is ended and awaited (not waited for with `waitUntilExit`, which
        // would hold a thread of the pool the tests' tasks share) before its profile is removed.
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await drive(process, profile: profile, url: url, body))
        } catch {
            outcome = .failure(error)
        }
        if process.isRunning { process.terminate() }
        await exited(process)
        return try outcome.get()
    }

    /// Attaches to the browser `process` started with `profile` and runs `body` on a page at `url`.
    private static func drive<T: Sendable>(
        _ process: Process, profile: URL, url: String,
        _ body: @escaping @Sendable (CDPSession) async throws -> T
    ) async throws -> T {
        // Chromium writes its DevTools port and browser path here once it listens.
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        var lines: [Substring] = []
        // Up to 60 s (a give-up: a loaded machine can take long to start it); usually well under one.
        for _ in 0..<600 {
            if let text = try? String(contentsOf: portFile, encoding: .utf8) {
                lines = text.split(separator: "\n")
                if lines.count >= 2 { break }
            }
            guard process.isRunning else { throw Failure(description: "chromium exited with status \(process.terminationStatus)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard lines.count >= 2 else { throw Failure(description: "chromium did not open its DevTools port within 60 s") }
        let ws = "ws://127.0.0.1:\(lines[0])\(lines[1])"

        let result = Box<Result<T, any Error>?>(nil)
        var logger = Logger(label: "cdp")
        logger.logLevel = .critical
        try await WebSocketClient.connect(
            url: ws, configuration: .init(maxFrameSize: 1 << 26), logger: logger
        ) { inbound, outbound, _ in
            let session = CDPSession(outbound: outbound)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await message in inbound.messages(maxSize: 1 << 27) {
                            if case .text(let text) = message { session.deliver(text) }
                        }
                    } catch {}
                    session.closeAll()
                }
                group.addTask {
                    do {
                        let target = try await session.send("Target.createTarget", ["url": url])
                        guard let targetId = target["targetId"] as? String else { throw Failure(description: "no targetId") }
                        let attached = try await session.send("Target.attachToTarget", ["targetId": targetId, "flatten": true])
                        guard let sid = attached["sessionId"] as? String else { throw Failure(description: "no sessionId") }
                        let page = session.attached(to: sid)
                        _ = try await page.send("Page.enable")
                        _ = try await page.send("Runtime.enable")
                        let value = try await body(page)
                        result.set(.success(value))
                    } catch {
                        result.set(.failure(error))
                    }
                    _ = try? await session.send("Browser.close")
                    try? await outbound.close(.normalClosure, reason: nil)
                }
                await group.next()
                group.cancelAll()
            }
        }
        guard let r = result.get() else { throw Failure(description: "DevTools connection ended early") }
        return try r.get()
    }
}

/// One CDP connection (or a page session on it, with ``sessionId``): commands by id, answers by id.
final class CDPSession: Sendable {
    private struct State {
        var nextID = 1
        var waiting: [Int: CheckedContinuation<[String: Any], any Error>] = [:]
        var closed = false
    }
    private let outbound: WebSocketOutboundWriter
    private let state: Locked<State>
    private let root: CDPSession?
    let sessionId: String?

    init(outbound: WebSocketOutboundWriter) {
        self.outbound = outbound
        self.state = Locked(State())
        self.root = nil
        self.sessionId = nil
    }

    private init(root: CDPSession, sessionId: String) {
        self.outbound = root.outbound
        self.state = Locked(State())
        self.root = root
        self.sessionId = sessionId
    }

    /// A session on the same connection talking to one attached target.
    func attached(to sessionId: String) -> CDPSession { CDPSession(root: self, sessionId: sessionId) }

    /// Sends a command and waits for its result (the `result` object).
    @discardableResult
    func send(_ method: String, _ params: [String: any Sendable] = [:]) async throws -> [String: Any] {
        let owner = root ?? self
        let id = owner.state.withLock { s -> Int in s.nextID += 1; return s.nextID }
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let sessionId { message["sessionId"] = sessionId }
        let data = try JSONSerialization.data(withJSONObject: message)
        let text = String(decoding: data, as: UTF8.self)
        return try await withCheckedThrowingContinuation { c in
            let closed = owner.state.withLock { s -> Bool in
                if s.closed { return true }
                s.waiting[id] = c
                return false
            }
            if closed {
                c.resume(throwing: Chromium.Failure(description: "DevTools connection closed"))
                return
            }
            Task {
                do { try await outbound.write(.text(text)) } catch { owner.fail(id, error) }
            }
        }
    }

    private func fail(_ id: Int, _ error: any Error) {
        state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(throwing: error)
    }

    /// Routes one incoming message to the command waiting for it; events are ignored.
    func deliver(_ text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let id = object["id"] as? Int
        else { return }
        guard let c = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        if let error = object["error"] as? [String: Any] {
            c.resume(throwing: Chromium.Failure(description: "CDP error: \(error["message"] ?? error)"))
        } else {
            c.resume(returning: object["result"] as? [String: Any] ?? [:])
        }
    }

    /// Fails every waiting command: the connection is gone.
    func closeAll() {
        let waiting = state.withLock { s -> [CheckedContinuation<[String: Any], any Error>] in
            s.closed = true
            defer { s.waiting.removeAll() }
            return Array(s.waiting.values)
        }
        for c in waiting { c.resume(throwing: Chromium.Failure(description: "DevTools connection closed")) }
    }

    /// Evaluates a JavaScript expression in the page and returns its JSON value (promises awaited).
    @discardableResult
    func evaluate(_ expression: String) async throws -> Any? {
        let r = try await send(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = r["exceptionDetails"] as? [String: Any] {
            let detail = (exception["exception"] as? [String: Any])?["description"] ?? exception["text"] ?? ""
            throw Chromium.Failure(description: "page threw: \(detail)")
        }
        return (r["result"] as? [String: Any])?["value"]
    }

    /// A left click at page coordinates (CSS pixels), as a user's mouse would.
    func click(x: Double, y: Double) async throws {
        for type in ["mouseMoved", "mousePressed", "mouseReleased"] {
            var p: [String: any Sendable] = ["type": type, "x": x, "y": y]
            if type != "mouseMoved" {
                p["button"] = "left"
                p["clickCount"] = 1
            }
            try await send("Input.dispatchMouseEvent", p)
        }
    }
}

/// A value shared between tasks under a lock.
final class Box<Value: Sendable>: Sendable {
    private let value: Locked<Value>
    init(_ value: Value) { self.value = Locked(value) }
    func get() -> Value { value.withLock { $0 } }
    func set(_ v: Value) { value.withLock { $0 = v } }
}
