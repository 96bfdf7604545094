import ArgumentParser
import Foundation
import MotionMQTT
import MotionRecordingFormats
import OpenCoreMotion

/// `coremotion publish`: every sample of a source to an MQTT broker, as Sensor Logger push messages.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish every raw sample of a source to an MQTT broker in Sensor Logger's push schema.",
        discussion: """
            Samples are batched every --batch seconds (default 0.1) into one message to TOPIC (the device id \
            is in the message, not appended to the topic). Acceleration goes as totalacceleration in m/s² with \
            Sensor Logger's standardised sign (+9.81 on z lying face up); gyroscope rad/s; magnetometer µT; time \
            in epoch ns. The client keeps a persistent session (clean session off, client id ocm-pub-DEVICE) and \
            reconnects with exponential backoff; at QoS 1 nothing is lost across a reconnect: what is read while \
            the broker is away is kept (up to --buffer-seconds, default 60) and sent in order once it is back; past \
            that bound the oldest batches are dropped, with a warning.
            """
    )

    @OptionGroup var sourceOptions: SourceOptions

    @Option(help: ArgumentHelp("The broker and topic: mqtt://[USER:PASS@]HOST:PORT/TOPIC (mqtts:// for TLS).", valueName: "url"))
    var to: String

    @Option(parsing: .unconditional, help: "MQTT quality of service: 0 or 1.", transform: OptionValue.count(0...1))
    var qos: Int = 1

    @Option(help: "The deviceId sent in every message (default: this machine's host name).")
    var deviceId: String?

    @OptionGroup var durationOption: DurationOption
    var duration: Double? { durationOption.duration }

    @Option(parsing: .unconditional, help: "Sampling rate asked of the source, in Hz (clamped to what it supports), at most 10000.", transform: OptionValue.hertz(maximum: 10_000))
    var rate: Double = 100

    @Option(parsing: .unconditional, help: "Seconds per batch (one message), 0.001 to 60.", transform: OptionValue.seconds(0.001...60))
    var batch: Double = 0.1

    @Option(parsing: .unconditional, help: "At QoS 1, seconds of samples kept while the broker is away, sent once it is back (0 to 86400); older ones are dropped with a warning.",
            transform: OptionValue.seconds(0...86_400, allowZero: true))
    var bufferSeconds: Double = 60

    @Flag(help: "Send the compact binary payload (README: Fleets over MQTT) instead of JSON.")
    var binary = false

    func validate() throws {
        if let deviceId, deviceId.isEmpty || deviceId.utf8.count > 255 { throw ValidationError("--device-id must be 1 to 255 bytes") }
        do {
            let url = try MQTTURL(parsing: to)
            guard !url.topic.isEmpty, !url.topic.contains("+"), !url.topic.contains("#") else {
                throw ValidationError("--to needs a topic without wildcards: mqtt://HOST:PORT/TOPIC")
            }
        } catch let e as MQTTProtocolError {
            throw ValidationError(e.message)
        }
    }

    func run() async throws {
        let url: MQTTURL
        do { url = try MQTTURL(parsing: to) } catch { throw CLIError(error.message) }
        let source = try sourceOptions.resolve()
        let device = deviceId ?? ProcessInfo.processInfo.hostName
        let (events, continuation) = AsyncStream<String?>.makeStream()
        let warned = Locked(false)
        // Whether the broker was ever reached, and the last reason it was not: a broker that never
        // answered is reported as such, not as missing acknowledgements.
        let reach = Locked((connected: false, lastFailure: String?.none))
        let publisher = MQTTMotionPublisher(
            configuration: url.clientConfiguration(clientID: "ocm-pub-\(device)"), topic: url.topic, deviceID: device,
            qos: qos == 0 ? .atMostOnce : .atLeastOnce, binary: binary, batchPeriod: batch, bufferSeconds: bufferSeconds
        ) { event in
            switch event {
            case .connected:
                reach.withLock { $0.connected = true }
            case .disconnected(let reason, let retry):
                reach.withLock { $0.lastFailure = reason }
                printError("\(url): \(reason); retrying in \(String(format: "%.1f", retry)) s")
            case .refused(let code):
                continuation.yield("\(url): \(code.explanation)")
            case .dropped(let messages):
                // QoS 0 while disconnected, or the buffer full: said once, counted in the summary.
                if !warned.withLock({ w in defer { w = true }; return w }) {
                    let samples = messages.reduce(0) { $0 + ((try? SensorLoggerPush.decode($1.payload))?.payload.count ?? 0) }
                    printError(qos == 0
                        ? "warning: \(url): dropping samples while the broker is away (QoS 0 keeps nothing; use --qos 1 to buffer them)"
                        : "warning: \(url): the broker has been away longer than --buffer-seconds \(String(format: "%g", bufferSeconds)) s: dropped the oldest \(samples) buffered samples, and more follow each batch until it is back (raise --buffer-seconds to keep them; the total is in the summary)")
                }
            default:
                break
            }
        }
        let kinds = source.info.sensors.keys
        let demand = SensorDemand(rates: Dictionary(uniqueKeysWithValues: kinds.map { ($0, rate) }), maximumLatency: min(batch, 0.1))
        do {
            try source.apply(demand) { event in
                switch event {
                case .sample(let s): publisher.add(s)
                case .failed(let e): continuation.yield(String(describing: e))
                case .interrupted(let e): printError(String(describing: e))
                case .finished: continuation.yield(nil)
                }
            }
        } catch {
            throw CLIError(String(describing: error))
        }
        if let duration {
            Task {
                try? await Task.sleep(nanoseconds: UInt64(duration * 1e9))  // safe: --duration is validated (≤ 1e8 s)
                continuation.yield(nil)
            }
        }
        var failure: String?
        for await e in events {
            failure = e
            break
        }
        _ = try? source.apply(.none) { _ in }
        if let failure {
            await publisher.client.stop()
            throw CLIError(failure)
        }
        let acked = await publisher.finish(timeout: 10)
        let reached = reach.withLock { $0 }
        if !reached.connected {
            throw CLIError("\(url): could not reach the broker\(reached.lastFailure.map { " (\($0))" } ?? ""); nothing was delivered")
        }
        let t = publisher.totals
        let lost = publisher.dropped
        // One line: what was read from the source, what reached the broker and what did not.
        let skipped = publisher.skipped > 0 ? ", \(publisher.skipped) non-finite skipped" : ""
        let dropped = lost.samples > 0 ? ", \(lost.samples) dropped (\(qos == 0 ? "QoS 0 while the broker was away" : "the broker was away longer than --buffer-seconds \(String(format: "%g", bufferSeconds)) s"))" : ""
        printError("published \(t.samples - lost.samples) samples in \(t.messages - lost.messages) messages (\(t.bytes - lost.bytes) bytes) to \(url): \(publisher.samplesRead) read from the source\(skipped)\(dropped)")
        if !acked && qos == 1 { throw CLIError("\(url): the broker did not acknowledge every message within 10 s") }
    }
}
