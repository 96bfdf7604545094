import ArgumentParser
import Foundation
import MotionSources
#if canImport(Glibc)
import Glibc
#endif

/// `coremotion bench fuse`: time and peak memory of `coremotion fuse` on a generated raw recording.
///
/// Generates a raw CSV (`timestamp,sensor,x,y,z`) of the simulated handheld device (seed 1, virtual
/// clock, accelerometer, gyroscope and magnetometer at 100 Hz) written the way `coremotion stream
/// --sensor raw` writes it: blocks of 0.1 s per sensor, so the merge's reordering is part of the cost.
/// Then runs this executable's `fuse` on it as a child process, output to a file, and reports its wall
/// time and peak resident memory (`getrusage(RUSAGE_CHILDREN)`, the figure `/usr/bin/time -v` prints).
package struct BenchFuseCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "fuse",
        abstract: "Measure `coremotion fuse` on a generated raw CSV (wall time, peak memory).",
        discussion: "Build with -c release for meaningful numbers."
    )

    @Flag(help: "Print JSON (keys input_bytes, samples, rows, seconds, peak_rss_mb, samples_per_second).")
    var json = false

    @Option(parsing: .unconditional, help: "Size of the generated recording in MB (1…2000).", transform: OptionValue.number(1...2000, unit: "MB"))
    var megabytes = 50.0

    @Option(help: "Keep the generated recording at this path (default: a temporary file, deleted).")
    var keep: String?

    @Flag(help: "Also fuse with --offline.")
    var offline = false

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    /// Runs the command.
    package func run() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-fuse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = keep ?? dir.appendingPathComponent("raw.csv").path
        let samples = try Self.generate(path: input, bytes: Int(megabytes * 1_000_000))  // safe: --megabytes is validated (1…2000)
        let size = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0
        let output = dir.appendingPathComponent("fused.csv").path

        var args = ["fuse", input, "-o", output]
        if offline { args.append("--offline") }
        let (seconds, peak, status) = try Self.measureChild(args)
        guard status == 0 else { throw CLIError("coremotion \(args.joined(separator: " ")) exited with status \(status)") }
        let rows = try Self.countLines(output) - 1
        let result: [(String, Any)] = [
            ("input_bytes", size), ("samples", samples), ("rows", rows), ("seconds", seconds),
            ("peak_rss_mb", Double(peak) / 1024), ("samples_per_second", Double(samples) / seconds),
            ("offline", offline),
        ]
        if json {
            let body = result.map { (k: String, v: Any) -> String in
                let value: String
                switch v {
                case let d as Double: value = String(format: "%.4f", d)
                case let b as Bool: value = b ? "true" : "false"
                default: value = "\(v)"
                }
                return "  \"\(k)\": \(value)"
            }.joined(separator: ",\n")
            print("{\n\(body)\n}")
        } else {
            print(String(format: "fuse%@ of %.1f MB (%d samples, %d rows): %.2f s, peak RSS %.1f MB, %.2f M samples/s",
                         offline ? " --offline" : "", Double(size) / 1e6, samples, rows, seconds, Double(peak) / 1024,
                         Double(samples) / seconds / 1e6))
        }
    }

    /// Writes the raw recording; returns the number of samples.
    static func generate(path: String, bytes: Int) throws -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else { throw CLIError("\(path): cannot be written") }
        defer { try? handle.close() }
        final class Sink: @unchecked Sendable {
            // Sendable: handed from this thread to the device's thread, which alone touches it until `done`
            // is signalled; the semaphore orders the hand-back, which the compiler cannot see.
            var text = "timestamp,sensor,x,y,z\n"
            var blocks: [SensorKind: String] = [:]
            var blockEnd = -Double.infinity
            var written = 0
            var samples = 0
            var failure: Error?
            let limit: Int
            let handle: FileHandle
            let done = DispatchSemaphore(value: 0)
            var finished = false
            init(limit: Int, handle: FileHandle) { self.limit = limit; self.handle = handle }

            func take(_ s: RawSample) {
                guard !finished else { return }
                if s.timestamp >= blockEnd {
                    // Close the 0.1 s block: each sensor's lines together, as `stream --sensor raw` writes.
                    for k in SensorKind.allCases { text += blocks[k] ?? ""; blocks[k] = "" }
                    blockEnd = (blockEnd.isFinite ? blockEnd : s.timestamp) + 0.1
                    if text.utf8.count > 1 << 20 || written + text.utf8.count >= limit {
                        handle.write(Data(text.utf8))
                        written += text.utf8.count
                        text = ""
                        if written >= limit { finished = true; done.signal(); return }
                    }
                }
                blocks[s.sensor, default: ""] += "\(s.timestamp),\(s.sensor.rawValue),\(s.value.x),\(s.value.y),\(s.value.z)\n"
                samples += 1
            }
        }
        let sink = Sink(limit: bytes, handle: handle)
        let device = SimulatedDevice(scenario: .handheld, seed: 1, clock: .virtual(startTime: 1000))
        try device.apply(SensorDemand(rates: [.accelerometer: 100, .gyro: 100, .magnetometer: 100])) { event in
            if case .sample(let s) = event { sink.take(s) }
        }
        sink.done.wait()
        try device.apply(.none) { _ in }
        // Samples of the unfinished block are not written; count only those in the file.
        return sink.samples - sink.blocks.values.reduce(0) { $0 + $1.split(separator: "\n").count }
    }

    /// Runs this executable with `arguments`; returns wall seconds, the child's peak RSS in KiB and its status.
    static func measureChild(_ arguments: [String]) throws -> (Double, Int, Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let start = ProcessInfo.processInfo.systemUptime
        try process.run()
        process.waitUntilExit()
        let seconds = ProcessInfo.processInfo.systemUptime - start
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return (seconds, usage.ru_maxrss, process.terminationStatus)
    }

    static func countLines(_ path: String) throws -> Int {
        guard let h = FileHandle(forReadingAtPath: path) else { throw CLIError("\(path): cannot be read") }
        defer { try? h.close() }
        var n = 0
        while true {
            let d = h.readData(ofLength: 1 << 20)
            if d.isEmpty { break }
            n += d.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        }
        return n
    }
}
