import ArgumentParser
import Foundation
import MotionBenchmarks

/// `coremotion bench phone`: a phone played in this process over loopback, through a phone source and
/// `CMMotionManager` to three raw-sensor handlers (MotionBenchmarks' ``PhoneBenchmark``), or the clock
/// mapping on simulated links (``ClockSimulation``).
struct BenchPhoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "Measure a phone source from receipt to handler: losses, order, latency and clock mapping.",
        discussion: """
            A peer in this process plays the app over 127.0.0.1 at --rate Hz per sensor (accelerometer, gyroscope, \
            magnetometer), each sample numbered. Handlers run on an OperationQueue through CMMotionManager. Latency runs \
            from just before the peer's send call to the start of the handler, so it includes the loopback socket: an \
            upper bound on what this project adds. Clock error is the mapped timestamp minus the time the sample was taken (the \
            phone's own timestamp is the scheduled sample time; HyperIMU's is whole milliseconds). Build with -c release.
            """
    )

    @Option(help: "The app to play: hyperimu (UDP), sensorlog (TCP, JSON), sensorlogger (HTTP POST per sample).")
    var app: String = "hyperimu"

    @Option(parsing: .unconditional, help: "Samples per second per sensor, at most 500.", transform: OptionValue.hertz(maximum: 500))
    var rate: Double = 200

    @Option(parsing: .unconditional, help: "How long to send, in seconds (at most 600).", transform: OptionValue.seconds(0...600))
    var seconds: Double = 5

    @Flag(help: "Print JSON: app, rate_hz, seconds, sent, delivered, lost, out_of_order, latency_us {p50, p99, max}, clock_error_us {p50, p99, max}.")
    var json = false

    func validate() throws {
        guard PhoneBenchmark.App(rawValue: app) != nil else { throw ValidationError("--app must be hyperimu, sensorlog or sensorlogger") }
    }

    @Flag(help: "Instead, measure the clock mapping on simulated links (drift, jitter, batching) and print its error.")
    var simulateClock = false

    func run() async throws {
        if simulateClock {
            let rows = ClockSimulation.standardCases.map { $0.run() }
            if json {
                try printJSON(rows)
            } else {
                for r in rows {
                    print("\(r.name): error after the first 30 s beyond the minimum delay: p50 \(Int(r.p50_us)) µs, p99 \(Int(r.p99_us)) µs, max \(Int(r.max_us)) µs; spacing error max \(Int(r.spacing_max_us)) µs")
                }
            }
            return
        }
        let result: PhoneBenchmark.Result
        do {
            // safe: validate() has checked the name
            result = try await PhoneBenchmark.run(app: PhoneBenchmark.App(rawValue: app) ?? .hyperimu, rate: rate, seconds: seconds)
        } catch {
            throw CLIError(String(describing: error))
        }
        if json {
            try printJSON(result)
        } else {
            print("""
                \(app) at \(Int(rate)) Hz per sensor for \(seconds) s (3 sensors)
                  sent          \(result.sent)
                  delivered     \(result.delivered)
                  lost          \(result.lost)
                  out of order  \(result.out_of_order)
                  latency µs    p50 \(Int(result.latency_us.p50))  p99 \(Int(result.latency_us.p99))  max \(Int(result.latency_us.max))  (send → handler)
                  clock error µs p50 \(Int(result.clock_error_us.p50))  p99 \(Int(result.clock_error_us.p99))  max \(Int(result.clock_error_us.max))
                """)
        }
    }
}

