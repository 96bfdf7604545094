import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionMQTT

/// `coremotion bench fleet`: N simulated devices publishing through one broker into one subscriber
/// (MotionBenchmarks' ``FleetBenchmark``).
struct BenchFleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Measure a fleet of MQTT publishers into one subscriber through a broker.",
        discussion: """
            Each device publishes accelerometer samples at --rate Hz, batched every --batch s, to TOPIC/bench-N \
            (TOPIC from --broker, default ocm-bench); one subscriber reads TOPIC/+. Counted per device from each \
            sample's sequence number, before any de-duplication: sent, received (distinct), lost, duplicated (a \
            sample seen again: QoS 1 redelivery), out of order; and duplicates and disorder left after the subscriber's \
            reorder buffer (what an application of MQTTSensorSource sees: app_duplicated, app_out_of_order). Latency runs from a sample's timestamp to its \
            arrival at the subscriber, so it includes up to one batch period. CPU is per event-loop thread \
            (publishers share one, the subscriber has its own) and, with --broker-pid, the broker's. Client ids \
            are stable for the run with persistent sessions, so a broker restarted mid-run costs nothing at QoS 1.
            """
    )

    @Option(parsing: .unconditional, help: "Number of devices (publishers), 1 to 10000.", transform: OptionValue.count(1...10_000))
    var devices: Int = 50

    @Option(parsing: .unconditional, help: "Samples per second per device, up to 10000.", transform: OptionValue.hertz(maximum: 10_000))
    var rate: Double = 100

    @Option(parsing: .unconditional, help: "Seconds of publishing, up to 86400.", transform: OptionValue.seconds(0...86_400))
    var seconds: Double = 10

    @Option(help: "The broker: mqtt://[USER:PASS@]HOST:PORT[/TOPIC].")
    var broker: String

    @Option(parsing: .unconditional, help: "QoS 0 or 1.", transform: OptionValue.count(0...1))
    var qos: Int = 1

    @Option(parsing: .unconditional, help: "Seconds per batch (one message per device), 0.001 to 10.", transform: OptionValue.seconds(0.001...10))
    var batch: Double = 0.1

    @Flag(help: "Use the compact binary payload.")
    var binary = false

    @Option(parsing: .unconditional, help: "The broker's process id, to report its CPU time.", transform: { Int32(try OptionValue.count(1...Int(Int32.max))($0)) })
    var brokerPid: Int32?

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        do { _ = try MQTTURL(parsing: broker) } catch { throw ValidationError(error.message) }
    }

    func run() async throws {
        let url: MQTTURL
        do { url = try MQTTURL(parsing: broker) } catch { throw CLIError(error.message) }
        let configuration = FleetBenchmark.Configuration(broker: url, devices: devices, rate: rate, seconds: seconds, qos: qos,
                                                         batch: batch, binary: binary, brokerPid: brokerPid)
        let quiet = json
        let result: FleetBenchmark.Result
        do {
            result = try await FleetBenchmark.run(configuration) { line in if !quiet { printError(line) } }
        } catch {
            throw CLIError(String(describing: error))
        }
        let elapsed = result.seconds
        if json {
            try printJSON(result)
        } else {
            print("fleet: \(devices) devices × \(rate) Hz for \(String(format: "%.1f", elapsed)) s, QoS \(qos), \(result.payload) every \(batch) s")
            print("samples: sent \(result.sent), received \(result.received), lost \(result.lost), duplicated \(result.duplicated), out of order \(result.out_of_order) (as MQTT delivered them)")
            print("after the subscriber's reorder buffer: duplicated \(result.app_duplicated), out of order \(result.app_out_of_order)")
            print(String(format: "throughput: %.0f samples/s in %.0f messages/s, %.1f bytes/sample", result.samples_per_s, result.messages_per_s, result.bytes_per_sample))
            print(String(format: "latency: p50 %.1f ms, p99 %.1f ms, max %.1f ms (sample time to subscriber, includes batching)", result.latency_ms["p50"] ?? 0, result.latency_ms["p99"] ?? 0, result.latency_ms["max"] ?? 0))
            print("cpu s: " + result.cpu_s.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.2f", $0.value))" }.joined(separator: ", "))
            print("reconnections: \(result.reconnections)")
            for d in result.per_device where d.lost != 0 || d.duplicated != 0 || d.out_of_order != 0 {
                print("  \(d.device): sent \(d.sent), received \(d.received), lost \(d.lost), duplicated \(d.duplicated), out of order \(d.out_of_order)")
            }
        }
    }
}
