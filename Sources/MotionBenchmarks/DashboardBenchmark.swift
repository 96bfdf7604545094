#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import HummingbirdWSClient
import Logging
import MotionDashboard
import MotionSources

/// The dashboard server's cost with many pages at the fastest rate (`coremotion bench dashboard`).
///
/// It starts `coremotion dashboard` as a child process on a free loopback port, connects the clients
/// (WebSocket, in this process, so their cost is not counted), sets the interval, and reads the
/// child's CPU time from `/proc/PID/stat`: first idle (no page connected, 2 s), then after a 2 s
/// warm-up with every client connected.
package enum DashboardBenchmark {
    /// What one run measured (the JSON of `bench dashboard --json`).
    package struct Result: Codable, Sendable {
        package var clients: Int
        package var interval_ms: Int
        package var seconds: Double
        package var source: String
        package var motion_only: Bool
        /// The server's CPU with the clients connected, % of one core.
        package var server_cpu_percent: Double
        /// The server's CPU with no client, % of one core.
        package var idle_cpu_percent: Double
        /// Messages each client received per second (mean over clients).
        package var messages_per_s_per_client: Double
        /// Samples (rows) each client received per second, per stream.
        package var samples_per_s_per_client: [String: Double]
        /// Clients the server closed (other than the normal close at the end).
        package var dropped_clients: Int
        /// Why the first dropped client was closed (not encoded).
        package var firstDropReason: String?

        enum CodingKeys: String, CodingKey {
            case clients, interval_ms, seconds, source, motion_only, server_cpu_percent, idle_cpu_percent,
                 messages_per_s_per_client, samples_per_s_per_client, dropped_clients
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

    /// The streams whose rows are counted.
    package static let streamNames = DashboardSensor.allCases.map(\.rawValue)

    /// Runs `executable dashboard --source SOURCE --port 0`, connects `clients` clients, sets
    /// `intervalMilliseconds` (10…100) and measures for `seconds`; with `motionOnly` the pedometer and
    /// altitude streams are stopped.
    /// - Throws: ``BenchmarkFailure`` when the dashboard does not start.
    package static func run(executable: String, source: String, clients: Int, seconds: Double, intervalMilliseconds: Int,
                            motionOnly: Bool) async throws -> Result {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = ["dashboard", "--source", source, "--port", "0"]
        let stdout = Pipe()
        child.standardOutput = stdout
        child.standardError = FileHandle.standardError
        try child.run()
        defer {
            if child.isRunning { child.terminate() }
            child.waitUntilExit()
        }
        guard let url = readURL(from: stdout.fileHandleForReading) else {
            throw BenchmarkFailure("the dashboard did not print its URL")
        }
        let pid = child.processIdentifier
        let ws = url.replacingOccurrences(of: "http://", with: "ws://") + "ws"

        try await Task.sleep(for: .seconds(1))
        let idle = try await cpu(pid: pid, over: 2)

        let tallies = (0..<clients).map { _ in Tally() }
        let logger = {
            var l = Logger(label: "bench")
            l.logLevel = .critical
            return l
        }()
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
                            try await outbound.write(.text(#"{"type":"interval","ms":\#(intervalMilliseconds)}"#))
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
                                    count(text, into: tally)
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
                let loaded = try await cpu(pid: pid, over: seconds)
                let after = tallies.map { $0.counts.withLock { $0 } }
                stop.cancel()
                return (loaded, before, after)
            }
            var result: Measurement?
            for try await m in group { if let m { result = m } }
            guard let result else { throw BenchmarkFailure("the measurement did not finish") }
            return result
        }
        let n = Double(clients)
        let messages = zip(measured.before, measured.after).map { Double($1.messages - $0.messages) }.reduce(0, +) / n / seconds
        var samples: [String: Double] = [:]
        for name in streamNames {
            let total = zip(measured.before, measured.after).map { Double(($1.samples[name] ?? 0) - ($0.samples[name] ?? 0)) }.reduce(0, +)
            samples[name] = tenths(total / n / seconds)
        }
        let dropped = measured.after.compactMap(\.closeReason)
        return Result(clients: clients, interval_ms: intervalMilliseconds, seconds: seconds, source: source, motion_only: motionOnly,
                      server_cpu_percent: tenths(measured.loaded), idle_cpu_percent: tenths(idle),
                      messages_per_s_per_client: tenths(messages), samples_per_s_per_client: samples,
                      dropped_clients: dropped.count, firstDropReason: dropped.first)
    }

    private static func tenths(_ v: Double) -> Double { (v * 10).rounded() / 10 }

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
