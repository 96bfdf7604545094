import ArgumentParser
import Foundation
import MotionBenchmarks

/// `coremotion bench fusion`: single-thread throughput of the fusion filter.
package struct BenchFusionCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "fusion",
        abstract: "Measure the fusion filter's throughput (samples per second, 6D and 9D, one thread).",
        discussion: "Build with -c release for meaningful numbers."
    )

    @Flag(help: "Print JSON (keys samples_per_second_9d, samples_per_second_6d).")
    var json = false

    @Option(parsing: .unconditional, help: "Samples per run.", transform: OptionValue.count())
    var samples = 1_000_000

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    /// Runs the command. Errors are reported by ArgumentParser.
    package func run() throws {
        let r = FusionThroughput.measure(count: samples)
        if json {
            try printJSON(r, pretty: true)
        } else {
            print(String(format: "9D: %.2f M samples/s\n6D: %.2f M samples/s",
                         r.samplesPerSecond9D / 1e6, r.samplesPerSecond6D / 1e6))
        }
    }
}
