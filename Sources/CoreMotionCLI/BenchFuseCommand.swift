import ArgumentParser
import Foundation
import MotionBenchmarks

/// `coremotion bench fuse`: time and peak memory of `coremotion fuse` on a generated raw recording
/// (``FuseBenchmark``: the recording, the child process and its measurement).
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

    /// Runs the command: MotionBenchmarks' ``FuseBenchmark`` on this executable, then its figures.
    package func run() throws {
        let result: FuseBenchmark.Result
        do {
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            result = try FuseBenchmark.run(executable: executable, bytes: Int(megabytes * 1_000_000), keep: keep, offline: offline)  // safe: --megabytes is validated (1…2000)
        } catch {
            throw CLIError(String(describing: error))
        }
        if json {
            try printJSON(result, pretty: true)
        } else {
            print(String(format: "fuse%@ of %.1f MB (%d samples, %d rows): %.2f s, peak RSS %.1f MB, %.2f M samples/s",
                         offline ? " --offline" : "", Double(result.inputBytes) / 1e6, result.samples, result.rows, result.seconds,
                         result.peakRSSMegabytes, result.samplesPerSecond / 1e6))
        }
    }
}
