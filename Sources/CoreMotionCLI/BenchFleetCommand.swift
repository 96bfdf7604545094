import ArgumentParser
import Foundation
import MotionFusion
import MotionMQTT
import MotionRecordings
import MotionSources
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// `coremotion bench fleet`: N simulated devices publishing through one broker into one subscriber.
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

    struct DeviceResult: Codable {
        var device: String
        var sent: Int
        var received: Int
        var lost: Int
        var duplicated: Int
        var out_of_order: Int
        var app_duplicated: Int
        var app_out_of_order: Int
    }

    struct Result: Codable {
        var devices: Int
        var rate_hz: Double
        var seconds: Double
        var qos: Int
        var payload: String
        var batch_s: Double
        var sent: Int
        var received: Int
        var lost: Int
        var duplicated: Int
        var out_of_order: Int
        var app_duplicated: Int
        var app_out_of_order: Int
        var messages_received: Int
        var payload_bytes: Int
        var bytes_per_sample: Double
        var samples_per_s: Double
        var messages_per_s: Double
        var latency_ms: [String: Double]
        var cpu_s: [String: Double]
        var reconnections: Int
        var per_device: [DeviceResult]
    }

    /// What the subscriber counts, held in a `Locked` (the events arrive on the client's event loop).
    struct Tally {
        struct Device {
            var seen = Set<Int>()
            var maxSeq = -1
            var duplicated = 0
            var outOfOrder = 0
            // What an application sees after the subscriber's reorder buffer (MQTTSensorSource's path).
            var reorder = SensorLoggerPushReorderBuffer()
            var appSeen = Set<Int>()
            var appMax = -1
            var appDuplicated = 0
            var appOutOfOrder = 0
        }
        var devices: [String: Device] = [:]
        var latencies: [Double] = []
        var messages = 0
        var bytes = 0
        var received = 0
        var reconnections = 0
        var subscribed = false
    }

    func run() async throws {
        var parsed: MQTTURL
        do { parsed = try MQTTURL(parsing: broker) } catch { throw CLIError(error.message) }
        if parsed.topic.isEmpty { parsed.topic = "ocm-bench" }
        let url = parsed
        let run = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let pubGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let subGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let pubLoop = pubGroup.next(), subLoop = subGroup.next()
        let pubTID = try await pubLoop.submit { Self.currentThreadID() }.get()
        let subTID = try await subLoop.submit { Self.currentThreadID() }.get()
        let tally = Locked(Tally())
        let fatal = NIOLockedValueBox<String?>(nil)

        // The subscriber: decodes every message and counts samples by sequence number (x).
        var subConfig = url.clientConfiguration(clientID: "ocm-bench-\(run)-sub")
        subConfig.maximumBackoff = MQTTSensorSource.subscriberMaximumBackoff  // as the broker source
        let subscriber = MQTTClient(configuration: subConfig, eventLoop: subLoop) { event in
            switch event {
            case .message(let m):
                let now = ProcessInfo.processInfo.systemUptime
                guard let message = try? SensorLoggerPush.decode(m.payload) else { return }
                let offset = mqttEpochOffsetNanoseconds()
                tally.withLock { tally in
                    tally.messages += 1
                    tally.bytes += m.payload.count
                    var d = tally.devices[message.deviceId] ?? Tally.Device()
                    for ready in d.reorder.add(message) {
                        for e in ready.payload {
                            guard let x = e.values["x"].map({ -$0 / PhoneUnits.standardGravity }), x.isFinite, x > -0.5, x < 1e9 else { continue }
                            let seq = Int(x.rounded())
                            if !d.appSeen.insert(seq).inserted { d.appDuplicated += 1; continue }
                            if seq < d.appMax { d.appOutOfOrder += 1 }
                            d.appMax = max(d.appMax, seq)
                        }
                    }
                    for e in message.payload {
                        // Published as totalacceleration: x = −9.80665 · seq m/s².
                        guard let x = e.values["x"].map({ -$0 / PhoneUnits.standardGravity }), x.isFinite, x > -0.5, x < 1e9 else { continue }
                        let seq = Int(x.rounded())
                        tally.received += 1
                        if !d.seen.insert(seq).inserted { d.duplicated += 1; continue }
                        if seq < d.maxSeq { d.outOfOrder += 1 }
                        d.maxSeq = max(d.maxSeq, seq)
                        tally.latencies.append(now - Double(e.time &- offset) / 1e9)
                    }
                    tally.devices[message.deviceId] = d
                }
            case .subscribed: tally.withLock { $0.subscribed = true }
            case .disconnected(let reason, _):
                tally.withLock { $0.reconnections += 1 }
                if !json { printError("subscriber: \(reason)") }
            case .refused(let code): fatal.withLockedValue { $0 = "\(url): \(code.explanation)" }
            default: break
            }
        }
        subscriber.subscribe([("\(url.topic)/+", .atLeastOnce)])
        subscriber.start()
        let subscribeDeadline = Date().addingTimeInterval(10)
        while !tally.withLock({ $0.subscribed }) && fatal.withLockedValue({ $0 }) == nil && Date() < subscribeDeadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        if let f = fatal.withLockedValue({ $0 }) { throw CLIError(f) }
        guard tally.withLock({ $0.subscribed }) else { throw CLIError("\(url): could not subscribe within 10 s") }

        let publishers = (0..<devices).map { i in
            var config = url.clientConfiguration(clientID: "ocm-bench-\(run)-pub-\(i)")
            config.maximumQueued = 1_000_000
            return MQTTMotionPublisher(configuration: config, topic: "\(url.topic)/bench-\(i)", deviceID: "bench-\(i)",
                                       qos: qos == 0 ? .atMostOnce : .atLeastOnce, binary: binary, batchPeriod: batch, eventLoop: pubLoop) { event in
                if case .disconnected = event { tally.withLock { $0.reconnections += 1 } }
            }
        }
        let brokerCPU0 = brokerPid.flatMap(Self.processCPU)
        let pubCPU0 = Self.threadCPU(pubTID), subCPU0 = Self.threadCPU(subTID)
        let start = ProcessInfo.processInfo.systemUptime
        var sent = [Int](repeating: 0, count: devices)
        let total = Int((rate * seconds).rounded())  // safe: --rate ≤ 10 kHz, --seconds ≤ 86 400, validated
        while true {
            let now = ProcessInfo.processInfo.systemUptime
            let due = min(total, Int(((now - start) * rate).rounded(.down)) + 1)
            for (i, p) in publishers.enumerated() {
                while sent[i] < due {
                    let seq = sent[i]
                    p.add(RawSample(sensor: .accelerometer, timestamp: start + Double(seq) / rate, value: Vector3(Double(seq), 0, -1)))
                    sent[i] += 1
                }
            }
            if due >= total { break }
            try await Task.sleep(nanoseconds: UInt64(max(0.001, min(0.01, 0.5 / rate)) * 1e9))  // safe: clamped to 1–10 ms
        }
        let elapsed = ProcessInfo.processInfo.systemUptime - start
        for p in publishers { _ = await p.finish(timeout: 30) }
        // Wait for the subscriber: everything in, or 5 s without progress.
        let expectedTotal = total * devices
        var last = -1, stall = 0.0
        while stall < 5 {
            let (received, distinct) = tally.withLock { ($0.received, $0.devices.values.reduce(0) { $0 + $1.seen.count }) }
            if distinct >= expectedTotal && qos == 1 { break }
            if received == last { stall += 0.05 } else { stall = 0; last = received }
            if qos == 0 && stall >= 1 { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let pubCPU = Self.threadCPU(pubTID) - pubCPU0, subCPU = Self.threadCPU(subTID) - subCPU0
        let brokerCPU = brokerPid.flatMap(Self.processCPU).flatMap { now in brokerCPU0.map { now - $0 } }
        await subscriber.stop()
        // The run's persistent subscriber session would stay in the broker (saved with persistence on)
        // and queue every later run's messages for nobody: end it with a clean-session connect.
        await Self.discardSession(subConfig, eventLoop: subLoop)
        try? await pubGroup.shutdownGracefully()
        try? await subGroup.shutdownGracefully()

        let result: Result = tally.withLock { tally in
            var per: [DeviceResult] = []
            for i in 0..<devices {
                let d = tally.devices["bench-\(i)"] ?? Tally.Device()
                per.append(DeviceResult(device: "bench-\(i)", sent: sent[i], received: d.seen.count, lost: sent[i] - d.seen.count,
                                        duplicated: d.duplicated, out_of_order: d.outOfOrder,
                                        app_duplicated: d.appDuplicated, app_out_of_order: d.appOutOfOrder))
            }
            let latency = Percentiles(tally.latencies, scale: 1000, rounded: false)
            var cpu = ["publishers": pubCPU, "subscriber": subCPU, "process": Self.processCPU(getpid()) ?? 0]
            if let brokerCPU { cpu["broker"] = brokerCPU }
            let received = per.reduce(0) { $0 + $1.received }
            return Result(devices: devices, rate_hz: rate, seconds: elapsed, qos: qos, payload: binary ? "binary" : "json", batch_s: batch,
                          sent: per.reduce(0) { $0 + $1.sent }, received: received, lost: per.reduce(0) { $0 + $1.lost },
                          duplicated: per.reduce(0) { $0 + $1.duplicated }, out_of_order: per.reduce(0) { $0 + $1.out_of_order },
                          app_duplicated: per.reduce(0) { $0 + $1.app_duplicated }, app_out_of_order: per.reduce(0) { $0 + $1.app_out_of_order },
                          messages_received: tally.messages, payload_bytes: tally.bytes,
                          bytes_per_sample: received > 0 ? Double(tally.bytes) / Double(tally.received) : 0,
                          samples_per_s: Double(received) / elapsed, messages_per_s: Double(tally.messages) / elapsed,
                          latency_ms: ["p50": latency.p50, "p99": latency.p99, "max": latency.max], cpu_s: cpu,
                          reconnections: tally.reconnections, per_device: per)
        }
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

    /// Connects once with clean session on (which makes the broker discard the client id's stored
    /// session and its subscriptions), then disconnects; gives up after 2 s.
    static func discardSession(_ configuration: MQTTClientConfiguration, eventLoop: any EventLoop) async {
        var config = configuration
        config.connect.cleanSession = true
        let (connected, continuation) = AsyncStream<Void>.makeStream()
        let client = MQTTClient(configuration: config, eventLoop: eventLoop) { event in
            if case .connected = event { continuation.yield() }
        }
        client.start()
        let timeout = Task {
            try? await Task.sleep(nanoseconds: 2_000_000_000)
            continuation.finish()
        }
        for await _ in connected { break }
        timeout.cancel()
        await client.stop()
    }

    /// The kernel id of the calling thread (from `/proc/thread-self`, which links to `PID/task/TID`).
    static func currentThreadID() -> Int {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return link.split(separator: "/").last.flatMap { Int($0) } ?? 0
    }

    /// CPU seconds (user + system) of one thread of this process, from /proc.
    static func threadCPU(_ tid: Int) -> Double {
        cpu(fromStat: "/proc/self/task/\(tid)/stat") ?? 0
    }

    /// CPU seconds (user + system) of a process, from /proc.
    static func processCPU(_ pid: Int32) -> Double? {
        cpu(fromStat: "/proc/\(pid)/stat")
    }

    private static func cpu(fromStat path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based in proc(5)).
        guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (u + s) / (hz > 0 ? hz : 100)
    }
}
