import ArgumentParser
import Foundation
import HummingbirdWSClient
import Logging
import MotionDashboard
import MotionSources

/// `coremotion bench dashboard`: the dashboard server's cost with many pages at the fastest rate.
///
/// It starts `coremotion dashboard` as a child process on a free loopback port, connects
/// `--clients` WebSocket clients, sets the interval (10 ms: 100 Hz on all four streams), and reads
/// the child's CPU time from `/proc/PID/stat` over `--seconds`. The clients run in this process, so
/// their cost is not counted. It also measures the idle server (no page connected) first.
package struct BenchDashboardCommand: AsyncParsableCommand {
    /// The command's name, help and subcommands.
    package static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Measure the dashboard server's CPU with many WebSocket clients at 100 Hz on every sensor."
    )

    @Option(parsing: .unconditional, help: "How many WebSocket clients to connect (1…200).", transform: OptionValue.count(1...200))
    var clients: Int = 10

    @Option(parsing: .unconditional, help: "How long to measure, in seconds (after a 2 s warm-up; 1…600).", transform: OptionValue.seconds(1...600))
    var seconds: Double = 10

    @Option(name: .customLong("interval-ms"), parsing: .unconditional, help: "The update interval to set, in ms (10…100, steps of 5).", transform: OptionValue.count(10...100))
    var intervalMilliseconds: Int = 10

    @Option(help: "The motion source for the server.")
    var source: String = "sim:handheld"

    @Flag(name: .customLong("motion-only"), help: "Stop the pedometer and altitude streams: only the four motion streams run (as before they existed).")
    var motionOnly = false

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    /// Creates the command with its defaults; ArgumentParser fills the options.
    package init() {}

    /// Refuses out-of-range options with one clear line.
    package func validate() throws {
        guard intervalMilliseconds % 5 == 0 else {
            throw ValidationError("--interval-ms must be 10…100 in steps of 5")
        }
    }

    /// Counts what one client receives.
    final class Tally: Sendable {
        struct Counts: Sendable {
            var messages = 0
            var samples: [String: Int] = [:]
            var closeReason: String?
        }
        let counts = Locked(Counts())
    }

    /// Runs the command until it is done (the dashboard: until interrupted).
    package func run() async throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = ["dashboard", "--source", source, "--port", "0"]
        let stdout = Pipe()
        child.standardOutput = stdout
        child.standardError = FileHandle.standardError
        try child.run()
        defer {
            if child.isRunning { child.terminate() }
            child.waitUntilExit()
        }
        guard let url = Self.readURL(from: stdout.fileHandleForReading) else {
            throw CLIError("the dashboard did not print its URL")
        }
        let pid = child.processIdentifier
        let ws = url.replacingOccurrences(of: "http://", with: "ws://") + "ws"

        try await Task.sleep(for: .seconds(1))
        let idle = try await Self.cpu(pid: pid, over: 2)

        let tallies = (0..<clients).map { _ in Tally() }
        let logger = {
            var l = Logger(label: "bench")
            l.logLevel = .critical
            return l
        }()
        let interval = intervalMilliseconds
        let seconds = self.seconds
        let motionOnly = self.motionOnly
        let stop = Task<Void, Never> { try? await Task.sleep(for: .seconds(3600)) }
        typealias Measurement = (loaded: Double, before: [Tally.Counts], after: [Tally.Counts])
        let measured = try await withThrowingTaskGroup(of: Measurement?.self) { group in
            for (index, tally) in tallies.enumerated() {
                group.addTask {
                    // A frame may carry a backlog of samples (a page's own limit is the browser's, far larger).
                    let close = try await WebSocketClient.connect(
                        url: ws, configuration: .init(maxFrameSize: 1 << 20), logger: logger
                    ) { inbound, outbound, _ in
                        if index == 0 {
                            try await outbound.write(.text(#"{"type":"interval","ms":\#(interval)}"#))
                            if motionOnly {
                                for extra in [DashboardSensor.pedometer, .altitude] {
                                    try await outbound.write(.text(#"{"type":"stop","sensor":"\#(extra.rawValue)"}"#))
                                }
                            }
                        }
                        try await withThrowingTaskGroup(of: Void.self) { inner in
                            inner.addTask {
                                for try await message in inbound.messages(maxSize: 1 << 20) {
                                    guard case .text(let text) = message else { continue }
                                    Self.count(text, into: tally)
                                }
                            }
                            inner.addTask {
                                await stop.value
                                try await outbound.close(.normalClosure, reason: nil)
                            }
                            try await inner.next()
                            inner.cancelAll()
                        }
                    }
                    if let close, close.closeCode != .normalClosure {
                        tally.counts.withLock { $0.closeReason = close.reason ?? "closed with code \(close.closeCode)" }
                    }
                    return nil
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(2))  // warm-up: all connected, interval applied
                let before = tallies.map { $0.counts.withLock { $0 } }
                let loaded = try await Self.cpu(pid: pid, over: seconds)
                let after = tallies.map { $0.counts.withLock { $0 } }
                stop.cancel()
                return (loaded, before, after)
            }
            var result: Measurement?
            for try await m in group { if let m { result = m } }
            return result!
        }
        report(idle: idle, loaded: measured.loaded, before: measured.before, after: measured.after)
    }

    private func report(idle: Double, loaded: Double, before: [Tally.Counts], after: [Tally.Counts]) {
        let n = Double(clients)
        let messages = zip(before, after).map { Double($1.messages - $0.messages) }.reduce(0, +) / n / seconds
        var samples: [String: Double] = [:]
        for name in Self.streamNames {
            let total = zip(before, after).map { Double(($1.samples[name] ?? 0) - ($0.samples[name] ?? 0)) }.reduce(0, +)
            samples[name] = total / n / seconds
        }
        let dropped = after.compactMap(\.closeReason)
        let r = { (v: Double) in (v * 10).rounded() / 10 }
        if json {
            var fields = [
                "\"clients\": \(clients)", "\"interval_ms\": \(intervalMilliseconds)", "\"seconds\": \(seconds)",
                "\"source\": \"\(source)\"", "\"motion_only\": \(motionOnly)",
                "\"server_cpu_percent\": \(r(loaded))", "\"idle_cpu_percent\": \(r(idle))",
                "\"messages_per_s_per_client\": \(r(messages))",
            ]
            fields.append(
                "\"samples_per_s_per_client\": {"
                    + samples.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \(r($0.value))" }.joined(separator: ", ") + "}")
            fields.append("\"dropped_clients\": \(dropped.count)")
            print("{" + fields.joined(separator: ", ") + "}")
        } else {
            print("dashboard bench: \(clients) clients, \(intervalMilliseconds) ms interval, \(seconds) s, source \(source)")
            print("  server CPU: \(r(loaded)) % of one core (idle, no client: \(r(idle)) %)")
            print("  per client: \(r(messages)) messages/s; samples/s " + samples.sorted { $0.key < $1.key }.map { "\($0.key) \(r($0.value))" }.joined(separator: ", "))
            print("  clients dropped: \(dropped.count)" + (dropped.first.map { " (\($0))" } ?? ""))
        }
    }

    /// The streams whose rows are counted.
    static let streamNames = DashboardSensor.allCases.map(\.rawValue)

    /// Counts one message's samples without decoding it all: rows are the arrays inside each stream.
    static func count(_ text: String, into tally: Tally) {
        // The server writes "type" first (DashboardJSONEncoder writes keys in declaration order).
        guard text.hasPrefix(#"{"type":"samples""#) else {
            tally.counts.withLock { $0.messages += 1 }
            return
        }
        var counts: [String: Int] = [:]
        for name in streamNames {
            guard let start = text.range(of: "\"\(name)\":[") else { continue }
            var depth = 1, rows = 0
            var i = start.upperBound
            while i < text.utf8.endIndex, depth > 0 {
                switch text.utf8[i] {
                case UInt8(ascii: "["): depth += 1; if depth == 2 { rows += 1 }
                case UInt8(ascii: "]"): depth -= 1
                default: break
                }
                i = text.utf8.index(after: i)
            }
            counts[name] = rows
        }
        tally.counts.withLock { c in
            c.messages += 1
            for (k, v) in counts { c.samples[k, default: 0] += v }
        }
    }

    /// CPU used by `pid` over the next `seconds`, in percent of one core.
    static func cpu(pid: Int32, over seconds: Double) async throws -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let t0 = ProcessInfo.processInfo.systemUptime, c0 = cpuTicks(pid: pid)
        try await Task.sleep(for: .seconds(seconds))
        let t1 = ProcessInfo.processInfo.systemUptime, c1 = cpuTicks(pid: pid)
        return (c1 - c0) / ticks / (t1 - t0) * 100
    }

    /// utime + stime of `pid`, in clock ticks, from `/proc/PID/stat`.
    static func cpuTicks(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return .nan }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return .nan }
        return u + s
    }

    /// Reads the child's stdout until the `dashboard: URL` line (10 s at most).
    static func readURL(from handle: FileHandle) -> String? {
        final class Found: Sendable { let url = Locked<String?>(nil) }
        let found = Found()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var buffer = ""
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                buffer += String(decoding: data, as: UTF8.self)
                if let line = buffer.split(separator: "\n").first(where: { $0.hasPrefix("dashboard: ") }),
                    let url = line.dropFirst("dashboard: ".count).split(separator: " ").first
                {
                    found.url.withLock { $0 = String(url) }
                    break
                }
            }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
        return found.url.withLock { $0 }
    }
}
