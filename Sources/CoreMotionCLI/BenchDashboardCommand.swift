import ArgumentParser
import Foundation
import MotionBenchmarks

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

    /// Runs the benchmark and prints its report.
    package func run() async throws {
        let r: DashboardBenchmark.Result
        do {
            r = try await DashboardBenchmark.run(executable: "/proc/self/exe", source: source, clients: clients, seconds: seconds,
                                                 intervalMilliseconds: intervalMilliseconds, motionOnly: motionOnly)
        } catch let failure as BenchmarkFailure {
            throw CLIError(failure.description)
        }
        if json {
            try printJSON(r)
        } else {
            let samples = r.samples_per_s_per_client.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("""
                dashboard bench: \(clients) clients, \(intervalMilliseconds) ms interval, \(OptionValue.format(seconds)) s, source \(source)
                  server CPU: \(r.server_cpu_percent) % of one core (idle, no client: \(r.idle_cpu_percent) %)
                  per client: \(r.messages_per_s_per_client) messages/s; samples/s \(samples)
                  clients dropped: \(r.dropped_clients)\(r.firstDropReason.map { " (\($0))" } ?? "")
                """)
        }
    }
}
