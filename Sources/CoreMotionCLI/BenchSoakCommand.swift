import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionSources
import OpenCoreMotion

/// `coremotion bench soak`: one sensor stream from any source through a `CMMotionManager` for a long
/// time; lost samples, and CPU and memory per window, whose flatness is the goal.
struct BenchSoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Stream one sensor from a source through a CMMotionManager for a long time; report lost samples, and CPU and memory per window.",
        discussion: """
            The default is device motion from the simulator (real-time clock); --source takes any source (iio, \
            evdev, a phone, mqtt://…), whose own samples are counted as they leave it and thinned to --rate as the \
            manager thins them (a phone runs at its own rate; device motion is fused at 100 Hz or more), so \
            lost = expected − delivered. \
            Memory is the resident set size from /proc/self/statm, sampled every second; growth is the last sample \
            minus the sample at the end of the warm-up (a quarter of the run, at most 60 s). CPU is this process's \
            user and system time (getrusage) per window. Goal: 0 lost, under 1 MB (1024 kB) growth, and the CPU \
            of the last full window at most twice that of the first after the warm-up (+0.5 % of a core); exit \
            status 1 when one is missed, and when the source fails (one line on stderr; the report is printed first).
            """
    )

    @OptionGroup var source: SourceOptions

    enum Sensor: String, ExpressibleByArgument, CaseIterable {
        case deviceMotion = "device-motion", accelerometer, gyro, magnetometer
        var stream: SoakBenchmark.Stream { SoakBenchmark.Stream(rawValue: rawValue) ?? .deviceMotion }
    }

    @Option(help: "What to stream: device-motion (default), accelerometer, gyro or magnetometer.")
    var sensor: Sensor = .deviceMotion

    @Option(parsing: .unconditional, help: "Update rate in Hz (at most 1000).", transform: OptionValue.hertz(maximum: 1000))
    var rate: Double = 1000

    @Option(parsing: .unconditional, help: "How long to run, in seconds (4…86400).", transform: OptionValue.seconds(4...86400))
    var seconds: Double = 3600

    @Option(parsing: .unconditional, help: "Length of a reporting window, in seconds (1…3600; default 60).", transform: OptionValue.seconds(1...3600))
    var window: Double = 60

    @Flag(help: "Print JSON: source, sensor, rate_hz, seconds, warmup_seconds, expected, delivered, lost, out_of_order, rss_kb {start, after_warmup, end, max}, growth_kb, windows [{end_s, delivered, cpu_s, rss_kb}], cpu_ratio, error.")
    var json = false

    func run() async throws {
        let spec = source.spec(default: "sim:handheld") ?? "sim:handheld"
        let result: SoakBenchmark.Result
        do {
            result = try await SoakBenchmark.run(source: try source.resolve(defaultSpec: "sim:handheld"), spec: spec, stream: sensor.stream,
                                                 rate: rate, seconds: seconds, window: window)
        } catch let failure as BenchmarkFailure {
            throw CLIError(failure.description)
        }
        let rss = result.rss_kb
        if json {
            try printJSON(result)
        } else {
            var text = """
                soak: \(sensor.rawValue) from \(spec) at \(OptionValue.format(rate)) Hz for \(OptionValue.format(seconds)) s (warm-up \(OptionValue.format(result.warmup_seconds)) s)
                  expected      \(result.expected)
                  delivered     \(result.delivered)
                  lost          \(result.lost)
                  out of order  \(result.out_of_order)
                  RSS kB        start \(rss.start)  after warm-up \(rss.after_warmup)  end \(rss.end)  max \(rss.max)
                  growth        \(result.growth_kb) kB after warm-up
                """
            if !result.windows.isEmpty {
                text += "\n  window (s)    delivered   CPU (s)   RSS (kB)"
                for w in result.windows {
                    text += "\n  " + [OptionValue.format(w.end_s), String(w.delivered), String(format: "%.3f", w.cpu_s), String(w.rss_kb)]
                        .map { $0.padding(toLength: 12, withPad: " ", startingAt: 0) }.joined()
                }
                if let r = result.cpu_ratio { text += "\n  CPU, last full window over first after warm-up: \(r)" }
            }
            print(text)
        }
        if let error = result.error { throw CLIError(error) }
        if !result.meetsGoal { throw ExitCode(1) }
    }
}
