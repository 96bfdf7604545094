import ArgumentParser
import Foundation
import MotionRecordingFormats

/// `coremotion bench read FILE`: how fast ``RecordingInput`` parses a recording (every stream read to
/// the end, nothing else), and the process's peak memory.
package struct BenchReadCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Measure recording parsing throughput (MB/s, samples/s) and peak memory.",
        discussion: "Reads every stream of the recording to the end, in file order (no merge, no fusion). Build with -c release for meaningful numbers."
    )

    @Argument(help: "A recording: file, export folder or zip archive, in any format coremotion reads.")
    var path: String

    @OptionGroup var inputFormatOption: InputFormatOption

    @Option(parsing: .unconditional, help: "Times to read the recording (1–100); the best run is reported.", transform: OptionValue.count(1...100))
    var runs = 3

    @Flag(help: "Print JSON (keys bytes, samples, seconds, megabytes_per_second, samples_per_second, peak_rss_megabytes).")
    var json = false

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    struct Result: Encodable {
        var format: String
        var bytes: Int64
        var samples: Int
        var seconds: Double
        var megabytesPerSecond: Double
        var samplesPerSecond: Double
        var peakRSSMegabytes: Double

        enum CodingKeys: String, CodingKey {
            case format, bytes, samples, seconds
            case megabytesPerSecond = "megabytes_per_second"
            case samplesPerSecond = "samples_per_second"
            case peakRSSMegabytes = "peak_rss_megabytes"
        }
    }

    /// Runs the command: one line on stderr and exit status 1 on a recording error.
    package func run() throws {
        let format = inputFormatOption.inputFormat
        var best = Double.infinity
        var count = 0
        var detected = RecordingFormat.csv
        do {
            for _ in 0..<runs {
                let start = DispatchTime.now().uptimeNanoseconds
                var input = try RecordingInput.open(path: path, format: format)
                detected = input.format
                count = 0
                for i in input.streams.indices {
                    while try input.streams[i].next() != nil { count += 1 }
                }
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
        } catch {
            // Reported like every other error: one line starting "Error: ", status 1.
            throw CLIError("\(error)")
        }
        let bytes = Self.size(path)
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let r = Result(format: detected.rawValue, bytes: bytes, samples: count, seconds: best,
                       megabytesPerSecond: Double(bytes) / 1e6 / best, samplesPerSecond: Double(count) / best,
                       peakRSSMegabytes: Double(usage.ru_maxrss) / 1024)
        if json {
            try printJSON(r, pretty: true)
        } else {
            print(String(format: "%@: %lld bytes, %d samples in %.3f s: %.1f MB/s, %.2f M samples/s; peak RSS %.1f MB",
                         r.format, r.bytes, r.samples, r.seconds, r.megabytesPerSecond, r.samplesPerSecond / 1e6, r.peakRSSMegabytes))
        }
    }

    /// Bytes of a file, or of every file under a folder.
    static func size(_ path: String) -> Int64 {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
        if !isDirectory.boolValue {
            return ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? 0
        }
        var total: Int64 = 0
        for case let file as String in FileManager.default.enumerator(atPath: path) ?? FileManager.DirectoryEnumerator() {
            total += ((try? FileManager.default.attributesOfItem(atPath: path + "/" + file)[.size]) as? NSNumber)?.int64Value ?? 0
        }
        return total
    }
}
