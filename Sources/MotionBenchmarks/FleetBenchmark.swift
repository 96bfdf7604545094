import Foundation
import MotionFusion
import MotionMQTT
import MotionRecordingFormats
import MotionSources
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// A fleet of MQTT publishers into one subscriber through a broker (`coremotion bench fleet`).
///
/// Each device publishes accelerometer samples at ``Configuration/rate`` Hz, batched every
/// ``Configuration/batch`` s, to TOPIC/bench-N; one subscriber reads TOPIC/+. Counted per device from
/// each sample's sequence number, before any de-duplication, and again after the subscriber's reorder
/// buffer (what an application of `MQTTSensorSource` sees). Latency runs from a sample's timestamp to
/// its arrival at the subscriber. CPU is per event-loop thread and, with a broker pid, the broker's.
package enum FleetBenchmark {
    /// What to run.
    package struct Configuration: Sendable {
        /// The broker; its topic (default `ocm-bench` when empty) prefixes the devices' topics.
        package var broker: MQTTURL
        /// Number of publishers, 1…10 000.
        package var devices: Int
        /// Samples per second per device, at most 10 000.
        package var rate: Double
        /// Seconds of publishing, at most 86 400.
        package var seconds: Double
        /// QoS 0 or 1.
        package var qos: Int
        /// Seconds per batch (one message per device).
        package var batch: Double
        /// The compact binary payload instead of JSON.
        package var binary: Bool
        /// The broker's process id, to report its CPU time.
        package var brokerPid: Int32?

        /// A configuration; every value as `coremotion bench fleet` validates it.
        package init(broker: MQTTURL, devices: Int, rate: Double, seconds: Double, qos: Int, batch: Double, binary: Bool, brokerPid: Int32?) {
            self.broker = broker
            self.devices = devices
            self.rate = rate
            self.seconds = seconds
            self.qos = qos
            self.batch = batch
            self.binary = binary
            self.brokerPid = brokerPid
        }
    }

    /// Why a run failed, one line.
    package typealias Failure = BenchmarkFailure

    /// One device's counts.
    package struct DeviceResult: Codable, Sendable {
        package var device: String
        package var sent: Int
        package var received: Int
        package var lost: Int
        package var duplicated: Int
        package var out_of_order: Int
        package var app_duplicated: Int
        package var app_out_of_order: Int
    }

    /// What one run measured; the keys of `bench fleet --json`.
    package struct Result: Codable, Sendable {
        package var devices: Int
        package var rate_hz: Double
        package var seconds: Double
        package var qos: Int
        package var payload: String
        package var batch_s: Double
        package var sent: Int
        package var received: Int
        package var lost: Int
        package var duplicated: Int
        package var out_of_order: Int
        package var app_duplicated: Int
        package var app_out_of_order: Int
        package var messages_received: Int
        package var payload_bytes: Int
        package var bytes_per_sample: Double
        package var samples_per_s: Double
        package var messages_per_s: Double
        package var latency_ms: [String: Double]
        package var cpu_s: [String: Double]
        package var reconnections: Int
        package var per_device: [DeviceResult]
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

    /// Runs the fleet and measures it.
    /// - Parameters:
    ///   - configuration: what to run.
    ///   - log: receives a line for each disconnection of the subscriber (from its event loop).
    /// - Throws: ``Failure`` when the broker refuses the subscriber or it cannot subscribe within 10 s,
    ///   or when the configuration is out of range.
    package static func run(_ configuration: Configuration, log: @escaping @Sendable (String) -> Void = { _ in }) async throws -> Result {
        let c = configuration
        guard (1...10_000).contains(c.devices), c.rate > 0, c.rate <= 10_000, c.seconds >= 0, c.seconds <= 86_400,
              (0...1).contains(c.qos), c.batch > 0, c.batch <= 10 else {
            throw Failure("the configuration is out of range: 1…10000 devices, at most 10000 Hz and 86400 s, QoS 0 or 1, batches of at most 10 s")
        }
        let (devices, rate, seconds, qos, batch, binary, brokerPid) = (c.devices, c.rate, c.seconds, c.qos, c.batch, c.binary, c.brokerPid)
        var broker = c.broker
        if broker.topic.isEmpty { broker.topic = "ocm-bench" }
        let url = broker
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
                log("subscriber: \(reason)")
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
        if let f = fatal.withLockedValue({ $0 }) { throw Failure(f) }
        guard tally.withLock({ $0.subscribed }) else { throw Failure("\(url): could not subscribe within 10 s") }

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
        let total = Int((rate * seconds).rounded())  // safe: rate ≤ 10 kHz and seconds ≤ 86 400, checked above
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
        return result
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
