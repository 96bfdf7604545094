import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionSources
import OpenCoreMotion

/// Passes a source through, counting what it emits up to a cut-off time: every sample, and the
/// gyroscope samples that can produce a device-motion update (those after the first accelerometer
/// sample, where fusion starts). The delivery and soak benchmarks compare these with what their
/// handlers got.
final class CountingSource: SensorSource {
    let inner: any SensorSource
    private struct Counts {
        var emitted = 0
        var perSensor: [SensorKind: Int] = [:]
        var deviceMotionUpdates = 0
        var sawAccelerometer = false
        var cutoff = Double.infinity
    }
    private let counts = Locked(Counts())

    init(_ inner: any SensorSource) { self.inner = inner }

    var info: SourceInfo { inner.info }

    /// Samples emitted with a timestamp at or before the cut-off.
    var emitted: Int { counts.withLock { $0.emitted } }

    /// Samples of one sensor emitted with a timestamp at or before the cut-off.
    func emitted(_ kind: SensorKind) -> Int { counts.withLock { $0.perSensor[kind, default: 0] } }

    /// Device-motion updates the source made possible up to the cut-off.
    var deviceMotionUpdates: Int { counts.withLock { $0.deviceMotionUpdates } }

    func setCutoff(_ t: Double) { counts.withLock { $0.cutoff = t } }

    func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        try inner.apply(demand) { [self] event in
            if case .sample(let s) = event {
                counts.withLock {
                    if s.sensor == .accelerometer { $0.sawAccelerometer = true }
                    guard s.timestamp <= $0.cutoff else { return }
                    $0.emitted += 1
                    $0.perSensor[s.sensor, default: 0] += 1
                    if s.sensor == .gyro, $0.sawAccelerometer { $0.deviceMotionUpdates += 1 }
                }
            }
            sink(event)
        }
    }
}

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

    struct Result: Codable {
        var rate_hz: Double
        var seconds: Double
        var expected: Int
        var delivered: Int
        var lost: Int
        var out_of_order: Int
        var latency_us: Percentiles
    }

    func run() async throws {
        let source = CountingSource(SimulatedDevice(scenario: .handheld))
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 1 / rate
        let tally = Locked(DeliveryTally(latencyCapacity: Int(rate * seconds * 1.2)))  // safe: --rate and --seconds are validated
        let nextSleep = Locked(0.0)
        let cutoff = Locked(Double.infinity)
        let slow = slowHandler
        let queue = OperationQueue()
        manager.startAccelerometerUpdates(to: queue) { data, _ in
            let now = ProcessInfo.processInfo.systemUptime
            guard let data else { return }
            let limit = cutoff.withLock { $0 }
            tally.withLock { $0.record(timestamp: data.timestamp, now: now, cutoff: limit, recordLatency: true) }
            let sleep = slow && nextSleep.withLock { next in
                defer { if now >= next { next = now + 1 } }
                return now >= next
            }
            if sleep { usleep(50_000) }
        }
        try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))  // safe: --seconds is validated (≤ 3600)
        let end = MonotonicClock.now()
        cutoff.withLock { $0 = end }
        source.setCutoff(end)
        try await tally.waitForDrain()
        manager.stopAccelerometerUpdates()
        let result = tally.withLock { tally in
            let expected = source.emitted
            return Result(
                rate_hz: rate, seconds: seconds, expected: expected, delivered: tally.delivered,
                lost: max(0, expected - tally.delivered), out_of_order: tally.outOfOrder,
                latency_us: Percentiles(tally.latencies)
            )
        }
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
