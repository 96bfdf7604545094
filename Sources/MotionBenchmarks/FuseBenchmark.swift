import Foundation
import MotionRecordingFormats
import MotionSources
#if canImport(Glibc)
import Glibc
#endif

/// Measures `coremotion fuse` on a generated raw recording: wall time and peak resident memory of the
/// command run as a child process (`coremotion bench fuse`).
///
/// The recording is a raw CSV (`timestamp,sensor,x,y,z`) of the simulated handheld device (seed 1,
/// starting at 1000 s, accelerometer, gyroscope and magnetometer at 100 Hz), written the way
/// `coremotion stream --sensor raw` writes it: blocks of 0.1 s per sensor, so the merge's reordering is
/// part of the cost. It is the same file, byte for byte, for the same size.
package enum FuseBenchmark {
    /// What one run measured; the keys of `bench fuse --json`.
    package struct Result: Sendable, Codable, Hashable {
        /// Size of the generated recording, bytes.
        package var inputBytes: Int
        /// Samples in the recording.
        package var samples: Int
        /// Rows `fuse` wrote (its header excluded).
        package var rows: Int
        /// Wall time of the child process, seconds (rounded to 0.1 ms).
        package var seconds: Double
        /// The child's peak resident memory, MB of 1024 KiB (rounded to 0.1 kB).
        package var peakRSSMegabytes: Double
        /// Samples fused per second of wall time (rounded to 4 decimals).
        package var samplesPerSecond: Double
        /// Whether `fuse` ran with `--offline`.
        package var offline: Bool

        enum CodingKeys: String, CodingKey {
            case inputBytes = "input_bytes"
            case samples, rows, seconds
            case peakRSSMegabytes = "peak_rss_mb"
            case samplesPerSecond = "samples_per_second"
            case offline
        }
    }

    /// Why a run failed, one line.
    package typealias Failure = BenchmarkFailure

    /// Generates a recording of about `bytes` bytes (at `keep`, else in a temporary folder, deleted),
    /// runs `executable fuse RECORDING -o OUTPUT [--offline]` and measures it.
    ///
    /// Blocks the calling thread until the child exits: call it from a command's synchronous `run()`,
    /// not from a Swift-concurrency task.
    /// - Parameters:
    ///   - executable: the `coremotion` binary.
    ///   - bytes: the recording's size; it stops at the first 0.1 s block boundary at or past it.
    ///   - keep: where to keep the recording, or `nil` for a temporary file.
    ///   - offline: run `fuse --offline`.
    /// - Throws: ``Failure`` when a file cannot be written or read, or `fuse` exits with a non-zero status.
    package static func run(executable: URL, bytes: Int, keep: String?, offline: Bool) throws -> Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-fuse-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw Failure("\(dir.path): cannot be created")
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = keep ?? dir.appendingPathComponent("raw.csv").path
        let samples = try writeRecording(path: input, bytes: bytes)
        let size = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0
        let output = dir.appendingPathComponent("fused.csv").path

        var arguments = ["fuse", input, "-o", output]
        if offline { arguments.append("--offline") }
        let (seconds, peak, status) = try measureChild(executable, arguments)
        guard status == 0 else { throw Failure("coremotion \(arguments.joined(separator: " ")) exited with status \(status)") }
        let rows = try countLines(output) - 1
        func rounded(_ x: Double) -> Double { (x * 1e4).rounded() / 1e4 }
        return Result(inputBytes: size, samples: samples, rows: rows, seconds: rounded(seconds),
                      peakRSSMegabytes: rounded(Double(peak) / 1024), samplesPerSecond: rounded(Double(samples) / seconds),
                      offline: offline)
    }

    /// Writes the raw recording at `path`, stopping at the first block boundary where the file reaches
    /// `bytes`; returns the number of samples in it. Synchronous: the simulator runs on this thread.
    package static func writeRecording(path: String, bytes limit: Int) throws -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else { throw Failure("\(path): cannot be written") }
        defer { try? handle.close() }
        var options = SimulationOptions(scenario: .handheld, seed: 1)
        options.rates = [:]
        var simulator = MotionSimulator(options: options, startTime: 1000)
        // 100 Hz is within every simulated sensor's range, so no clamping applies.
        simulator.setRates([.accelerometer: 100, .gyro: 100, .magnetometer: 100], from: 1000)
        let writer = RawRecordingWriter(encoding: .csv)
        var text = writer.header
        var blocks: [SensorKind: String] = [:]
        var blockEnd = -Double.infinity
        var written = 0
        var samples = 0
        while true {
            let sample = simulator.next()
            if sample.timestamp >= blockEnd {
                // Close the 0.1 s block: each sensor's lines together, as `stream --sensor raw` writes.
                for kind in SensorKind.allCases { text += blocks[kind] ?? ""; blocks[kind] = "" }
                blockEnd = (blockEnd.isFinite ? blockEnd : sample.timestamp) + 0.1
                if text.utf8.count > 1 << 20 || written + text.utf8.count >= limit {
                    handle.write(Data(text.utf8))
                    written += text.utf8.count
                    text = ""
                    if written >= limit { break }
                }
            }
            do {
                try writer.append(sample, to: &blocks[sample.sensor, default: ""])
            } catch {
                throw Failure(error.description)
            }
            samples += 1
        }
        return samples
    }

    /// Runs `executable` with `arguments` and waits for it; returns wall seconds, the child's peak RSS
    /// in KiB (`getrusage(RUSAGE_CHILDREN)`, the figure `/usr/bin/time -v` prints) and its exit status.
    package static func measureChild(_ executable: URL, _ arguments: [String]) throws -> (Double, Int, Int32) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let start = ProcessInfo.processInfo.systemUptime
        do {
            try process.run()
        } catch {
            throw Failure("\(executable.path): cannot be run (\(error))")
        }
        process.waitUntilExit()
        let seconds = ProcessInfo.processInfo.systemUptime - start
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return (seconds, usage.ru_maxrss, process.terminationStatus)
    }

    /// The number of newlines in the file at `path`.
    package static func countLines(_ path: String) throws -> Int {
        guard let h = FileHandle(forReadingAtPath: path) else { throw Failure("\(path): cannot be read") }
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
