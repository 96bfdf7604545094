import ArgumentParser
import Foundation
import MotionSources
import MotionBenchmarks
import MotionSourcesLinux
import OpenCoreMotion

/// `coremotion bench iio`: the buffered IIO path's speed on an emulated device.
package struct BenchIIOCommand: ParsableCommand {
    /// Name, abstract and help text.
    package static let configuration = CommandConfiguration(
        commandName: "iio",
        abstract: "Benchmark buffered IIO capture: an emulated device writes scans through a FIFO.",
        discussion: """
            A sysfs tree in a temporary directory and a FIFO as /dev/iio:device0; a writer thread \
            sends one scan per period stamped with CLOCK_MONOTONIC. Reports lost scans and the latency \
            from each scan's timestamp to the handler. Target: 0 lost, p99 < 2 ms at 1 kHz for 10 s.
            """
    )

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(parsing: .unconditional, help: "Scans per second (at most 4000).", transform: OptionValue.hertz(maximum: 4000))
    var rate: Double = 1000

    @Option(parsing: .unconditional, help: "Seconds to run (at most 3600).", transform: OptionValue.seconds(0...3600))
    var seconds: Double = 10

    @Flag(help: "Measure at a CMMotionManager handler on an OperationQueue instead of at the source.")
    var throughManager = false

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    /// Runs the command.
    package func run() throws {
        let manager = throughManager
        let rate = self.rate
        let result = try IIOBenchmark.run(rate: rate, seconds: seconds, consumer: manager ? { source, deliver in
            let m = CMMotionManager(source: source)
            // Half the period: the manager thins by timestamp, and writer jitter would otherwise
            // make it skip scans that arrive a little early; the source still runs at `rate`.
            m.accelerometerUpdateInterval = 0.5 / rate
            let q = OperationQueue.serial()
            m.startAccelerometerUpdates(to: q) { data, _ in
                if let data { deliver(data.timestamp, data.acceleration.x) }
            }
            // Like Apple's, CMMotionManager is not `Sendable`, but it is callable from any thread.
            nonisolated(unsafe) let stopping = m
            return { stopping.stopAccelerometerUpdates() }
        } : nil)
        if json {
            try printJSON(result)
        } else {
            print("""
                bench iio: \(Int(result.rate)) Hz for \(result.seconds) s, measured at \(manager ? "a CMMotionManager handler" : "the source's sink")
                  mode      \(result.mode)
                  sent      \(result.sent)
                  received  \(result.received) (\(String(format: "%.1f", result.achievedRate)) Hz)
                  lost      \(result.lost)
                  latency   p50 \(String(format: "%.3f", result.p50Milliseconds)) ms, p99 \(String(format: "%.3f", result.p99Milliseconds)) ms, p99.9 \(String(format: "%.3f", result.p999Milliseconds)) ms, max \(String(format: "%.3f", result.maxMilliseconds)) ms
                  verdict   \(result.lost == 0 && result.p99Milliseconds < 2 ? "PASS" : "FAIL") (0 lost, p99 < 2 ms)
                """)
        }
        if result.lost != 0 || !(result.p99Milliseconds < 2) { throw ExitCode(1) }
    }
}
