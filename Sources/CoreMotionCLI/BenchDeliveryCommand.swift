import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionSources
import OpenCoreMotion

struct BenchDeliveryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delivery",
        abstract: "Measure push delivery from the simulated device to an OperationQueue handler.",
        discussion: "Latency runs from a sample's timestamp to the start of its handler call. Build with -c release for real figures."
    )

    @Option(parsing: .unconditional, help: "Accelerometer rate in Hz (at most 1000).", transform: OptionValue.hertz(maximum: 1000))
    var rate: Double = 1000

    @Option(parsing: .unconditional, help: "How long to measure, in seconds (at most 3600).", transform: OptionValue.seconds(0...3600))
    var seconds: Double = 10

    @Flag(help: "Make the handler sleep 50 ms once a second, to show that a slow handler loses nothing.")
    var slowHandler = false

    @Flag(help: "Print JSON: rate_hz, seconds, expected, delivered, lost, out_of_order, latency_us {p50, p99, max}.")
    var json = false

    func run() async throws {
        let result = try await DeliveryBenchmark.run(rate: rate, seconds: seconds, slowHandler: slowHandler)
        if json {
            try printJSON(result)
        } else {
            print("""
                delivery at \(Int(rate)) Hz for \(seconds) s\(slowHandler ? " (handler sleeps 50 ms once a second)" : "")
                  expected      \(result.expected)
                  delivered     \(result.delivered)
                  lost          \(result.lost)
                  out of order  \(result.out_of_order)
                  latency µs    p50 \(Int(result.latency_us.p50))  p99 \(Int(result.latency_us.p99))  max \(Int(result.latency_us.max))
                """)
        }
    }
}
