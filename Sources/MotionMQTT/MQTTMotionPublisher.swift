import Foundation
import MotionRecordingFormats
import MotionSources
import NIOConcurrencyHelpers
import NIOCore

/// Publishes Core Motion samples as Sensor Logger push messages, batched.
///
/// Samples added with ``add(_:)`` are collected and sent every ``batchPeriod`` seconds (default 0.1 s),
/// or sooner when a batch reaches 1,000 samples, as one message to ``topic`` (the topic is used as
/// given: the device id travels in the message, not in the topic). `messageId` starts at 1 and counts up
/// per publisher (one session, a new UUID per publisher). Values follow
/// ``SensorLoggerPushConverter/entry(for:epochOffsetNanoseconds:)``; samples with a NaN or infinite value
/// are skipped and counted in ``skipped``.
///
/// ## While the broker is away
/// At QoS 1 every batch is kept, in order, until the broker acknowledges it: batches made while the
/// connection is down wait in the client's queue and go out after the reconnect (the unacknowledged
/// ones first, again), so a broker restart loses nothing. The queue holds ``bufferSeconds`` of batches
/// (``bufferedMessages``); past it the oldest are dropped and the client says so
/// (``MQTTClientEvent/dropped(_:)``). At QoS 0 nothing is kept while disconnected.
///
/// ## Threading
/// ``add(_:)`` may be called from any thread; sending happens on the client's event loop.
package final class MQTTMotionPublisher: Sendable {
    /// The MQTT client (its id is `ocm-pub-` and the device id unless configured otherwise).
    package let client: MQTTClient
    /// The topic messages go to.
    package let topic: String
    /// The `deviceId` of every message.
    package let deviceID: String
    /// The `sessionId` of every message.
    package let sessionID: String
    /// QoS of the messages.
    package let qos: MQTTQoS
    /// Whether the compact binary payload is used instead of JSON.
    package let binary: Bool
    /// Seconds between batches.
    package let batchPeriod: Double
    /// Seconds of batches kept while the broker is away (QoS 1).
    package let bufferSeconds: Double
    /// Batches kept while the broker is away: ``bufferSeconds`` / ``batchPeriod``, at least 1.
    package var bufferedMessages: Int { client.configuration.maximumQueued }

    private struct Batch {
        var entries: [SensorLoggerPushEntry] = []
        var nextID: Int64 = 1
        var skipped = 0
        var messages = 0
        var bytes = 0
        var samples = 0
        var read = 0
    }

    private let batch = NIOLockedValueBox(Batch())
    private let droppedBox: NIOLockedValueBox<(messages: Int, samples: Int, bytes: Int)>
    private let ticker: NIOLockedValueBox<RepeatedTask?> = NIOLockedValueBox(nil)
    private let epochOffset: Int64

    /// Creates a publisher and starts its client.
    /// - Parameters:
    ///   - configuration: the broker connection (see ``MQTTURL/clientConfiguration(clientID:keepAlive:)``).
    ///   - topic: the topic (no wildcards).
    ///   - deviceID: the `deviceId` sent.
    ///   - qos: 0 or 1 (default 1).
    ///   - binary: the compact payload instead of JSON (default `false`).
    ///   - batchPeriod: seconds per batch, 0.001–60 (default 0.1).
    ///   - bufferSeconds: seconds of batches kept while the broker is away, 0–86400 (default 60); sets the
    ///     client's ``MQTTClientConfiguration/maximumQueued``.
    ///   - onEvent: the client's events (connection problems), on its event loop; the samples of dropped
    ///     messages are counted in ``dropped`` before ``MQTTClientEvent/dropped(_:)`` reaches it.
    package init(configuration: MQTTClientConfiguration, topic: String, deviceID: String, qos: MQTTQoS = .atLeastOnce, binary: Bool = false,
                batchPeriod: Double = 0.1, bufferSeconds: Double = 60, eventLoop: (any EventLoop)? = nil,
                onEvent: @escaping @Sendable (MQTTClientEvent) -> Void = { _ in }) {
        let period = batchPeriod.isFinite ? min(max(batchPeriod, 0.001), 60) : 0.1
        let buffer = bufferSeconds.isFinite ? min(max(bufferSeconds, 0), 86_400) : 60
        var configuration = configuration
        configuration.maximumQueued = max(1, Int((buffer / period).rounded(.up)))  // safe: ≤ 86 400 / 0.001
        self.bufferSeconds = buffer
        let dropped = NIOLockedValueBox((messages: 0, samples: 0, bytes: 0))
        self.droppedBox = dropped
        self.client = MQTTClient(configuration: configuration, eventLoop: eventLoop) { event in
            if case .dropped(let messages) = event {
                let samples = messages.reduce(0) { $0 + ((try? SensorLoggerPush.decode($1.payload))?.payload.count ?? 0) }
                dropped.withLockedValue { $0.messages += messages.count; $0.samples += samples; $0.bytes += messages.reduce(0) { $0 + $1.payload.count } }
            }
            onEvent(event)
        }
        self.topic = topic
        self.deviceID = deviceID
        self.sessionID = UUID().uuidString.lowercased()
        self.qos = qos == .exactlyOnce ? .atLeastOnce : qos
        self.binary = binary
        self.batchPeriod = period
        self.epochOffset = mqttEpochOffsetNanoseconds()
        client.start()
        let tick = TimeAmount.nanoseconds(Int64(self.batchPeriod * 1e9))  // safe: --batch is validated to 0.001…60 s
        let task = client.eventLoop.scheduleRepeatedTask(initialDelay: tick, delay: tick) { [weak self] _ in self?.flush() }
        ticker.withLockedValue { $0 = task }
    }

    /// Adds a sample to the current batch.
    package func add(_ sample: RawSample) {
        let entry = SensorLoggerPushConverter.entry(for: sample, epochOffsetNanoseconds: epochOffset)
        let full = batch.withLockedValue { b in
            b.read += 1
            guard let entry else {
                b.skipped += 1
                return false
            }
            b.entries.append(entry)
            return b.entries.count >= 1000
        }
        if full { flush() }
    }

    /// Sends the current batch now (if it holds anything). Numbering, encoding and handing to the client
    /// happen under one lock, so messages reach the client in `messageId` order whichever thread flushes.
    package func flush() {
        batch.withLockedValue { b in
            guard !b.entries.isEmpty else { return }
            let message = SensorLoggerPushMessage(messageId: b.nextID, sessionId: sessionID, deviceId: deviceID, payload: b.entries)
            b.entries.removeAll(keepingCapacity: true)
            let bytes: [UInt8]
            do {
                bytes = binary ? try SensorLoggerPush.encodeBinary(message) : try SensorLoggerPush.encodeJSON(message)
            } catch {
                b.skipped += message.payload.count
                return
            }
            b.nextID += 1
            b.messages += 1
            b.bytes += bytes.count
            b.samples += message.payload.count
            client.publish(MQTTMessage(topic: topic, payload: bytes, qos: qos))
        }
    }

    /// Samples skipped because a value was not finite.
    package var skipped: Int { batch.withLockedValue { $0.skipped } }
    /// Samples given to ``add(_:)`` so far: everything read from the source.
    package var samplesRead: Int { batch.withLockedValue { $0.read } }
    /// Samples of the messages dropped so far (the queue full while the broker was away, or QoS 0 while
    /// disconnected): read from the source but never handed to the broker.
    package var dropped: (messages: Int, samples: Int, bytes: Int) { droppedBox.withLockedValue { $0 } }
    /// Messages, payload bytes and samples sent so far (handed to the client, dropped ones included).
    package var totals: (messages: Int, bytes: Int, samples: Int) { batch.withLockedValue { ($0.messages, $0.bytes, $0.samples) } }

    /// Sends the last batch, waits up to `timeout` seconds for the broker to acknowledge everything
    /// (QoS 1), then disconnects. Returns `false` when messages were still unacknowledged.
    package func finish(timeout: Double = 10) async -> Bool {
        ticker.withLockedValue { $0?.cancel(); $0 = nil }
        flush()
        let done = await client.waitUntilIdle(timeout: timeout)
        await client.stop()
        return done
    }
}
