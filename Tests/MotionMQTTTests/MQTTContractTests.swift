import Foundation
import MotionFusion
import MotionMQTT
import MotionSources
import MotionTestSupport
import Testing

/// A broker source under the contract: a real Mosquitto, and a publisher (``MQTTMotionPublisher``,
/// Sensor Logger push at QoS 1) that sends the run's samples by hand, 100 per second of the device's
/// time, continuing one timeline across runs.
///
/// A run publishes its samples and, while the source runs, returns once they have arrived; with
/// `running` false the device keeps publishing into a stopped source (the persistent session queues
/// them at the broker; none may reach the stopped sink). The interruption is the device going silent
/// (`silence=0.5`); it resumes when the device publishes again. A broker source never ends by itself
/// (refused credentials fail it only at connection).
final class MQTTSubject: SourceContractSubject {
    let broker: Mosquitto
    let mqtt: MQTTSensorSource
    let topic: String
    /// The device time of the next sample (seconds since boot).
    private let cursor = Locked(ProcessInfo.processInfo.systemUptime - 60)
    /// Whether the source's persistent session holds the subscription yet.
    private let subscribed = Locked(false)

    var source: any SensorSource { mqtt }
    var sensor: SensorKind { .gyro }
    /// The device sends at 100 Hz whatever is asked; the source grants what it measured.
    var rates: (first: Double, second: Double) { (100, 50) }

    /// A subject on `broker` (started by the caller off the pool: see ``Mosquitto/started(webSocket:)``).
    init(broker: Mosquitto) throws {
        self.broker = broker
        let id = UUID().uuidString.prefix(8)
        topic = "contract-\(id)/dev"
        mqtt = try MQTTSensorSource(url: MQTTURL(parsing: "mqtt://127.0.0.1:\(broker.port)/contract-\(id)/+?device=dev&silence=0.5&client-id=contract-sub-\(id)"),
                                    log: { _ in })
    }

    /// Waits, once, until the broker granted the source's subscription (messages published before it
    /// would not be queued for the source's session), or 60 s: then the run goes on and its checks fail,
    /// rather than the test hanging (a rehearsal under load once waited here for 23 minutes, the source
    /// connected to the broker and no `.subscribed` reported).
    private func awaitSubscription() async {
        guard !subscribed.withLock({ $0 }) else { return }
        let granted = Locked<CheckedContinuation<Bool, Never>?>(nil)
        let watchdog = Task {
            try? await Task.sleep(nanoseconds: 60_000_000_000)
            granted.withLock { c in c?.resume(returning: false); c = nil }
        }
        let ok = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            granted.withLock { $0 = done }
            mqtt.startDevices { event in
                if case .subscribed = event { granted.withLock { c in c?.resume(returning: true); c = nil } }
            }
        }
        watchdog.cancel()
        #expect(ok, "the broker did not grant the source's subscription within 60 s")
        await mqtt.stopDevices()
        subscribed.withLock { $0 = true }
    }

    private func publish(seconds: Double) async {
        var config = try! MQTTURL(parsing: "mqtt://127.0.0.1:\(broker.port)/\(topic)").clientConfiguration(clientID: "contract-pub-\(topic)")
        config.initialBackoff = 0.05
        config.maximumBackoff = 0.5
        let publisher = MQTTMotionPublisher(configuration: config, topic: topic, deviceID: "dev", qos: .atLeastOnce, batchPeriod: 0.05)
        let count = Int(seconds * 100)
        let start = cursor.withLock { t in defer { t += Double(count) * 0.01 }; return t }
        for i in 0..<count {
            publisher.add(RawSample(sensor: .gyro, timestamp: start + Double(i) * 0.01, value: Vector3(0, 0, 0.5)))
        }
        #expect(await publisher.finish(timeout: 60), "the publisher could not deliver to the broker")
    }

    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        if running { await awaitSubscription() }
        let expected = recorder.samples.count + Int(seconds * 100)
        await publish(seconds: seconds)
        guard running else { return }
        let arrived = await recorder.waitFor({ events in
            events.count { if case .sample = $0 { true } else { false } } >= expected
        }, timeout: 60)
        #expect(arrived, "the samples published in a run did not all arrive")
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool {
        let interrupted = await recorder.waitFor({ $0.contains { if case .interrupted = $0 { true } else { false } } }, timeout: 60)
        #expect(interrupted, "no interruption once the device went silent")
        await publish(seconds: 0.2)
        _ = await recorder.waitFor({ events in
            guard let i = events.firstIndex(where: { if case .interrupted = $0 { true } else { false } }) else { return false }
            return events[(i + 1)...].contains { if case .sample = $0 { true } else { false } }
        }, timeout: 60)
        return true
    }

    func end(recorder: EventRecorder) async -> Bool { false }
}

/// A broker source keeps the contract of every ``SensorSource``.
@Suite(.enabled(if: Mosquitto.available, Comment(rawValue: Mosquitto.skipMessage)))
struct MQTTContractTests {
    @Test func brokerSourceKeepsTheContract() async throws {
        // One broker per check, started and stopped on threads of their own: Mosquitto's init waits for
        // `mosquitto_passwd` and polls the port, its stop waits for the broker to save its sessions, and
        // `check` makes its subjects synchronously on the test's pool thread.
        var brokers: [Mosquitto] = []
        for _ in 0..<4 { brokers.append(try await Mosquitto.started()) }
        let unused = Locked(brokers)
        #expect(await SourceContract.check {
            guard let broker = unused.withLock({ $0.popLast() }) else { throw SourceError(.unavailable, "no broker left") }
            return try MQTTSubject(broker: broker)
        } == [])
        for broker in brokers { await broker.stopAsync() }
    }
}

@Suite(.enabled(if: Mosquitto.available, Comment(rawValue: Mosquitto.skipMessage)))
struct MQTTSubscriptionNoticeTests {
    /// A device handler installed once the broker has granted the subscription hears `.subscribed` at
    /// once: the grant came before it and does not come again. (Without this, the contract test waited
    /// for ever when the broker's grant overtook the test under load.)
    @Test func aHandlerInstalledAfterTheGrantHearsItAtOnce() async throws {
        let broker = try await Mosquitto.started()
        let id = UUID().uuidString.prefix(8)
        let mqtt = try MQTTSensorSource(url: MQTTURL(parsing: "mqtt://127.0.0.1:\(broker.port)/late-\(id)/+?device=dev"), log: { _ in })
        let first = Locked<CheckedContinuation<Void, Never>?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            first.withLock { $0 = done }
            mqtt.startDevices { event in
                if case .subscribed = event { first.withLock { c in c?.resume(); c = nil } }
            }
        }
        let heard = Locked(0)
        mqtt.startDevices { event in
            if case .subscribed = event { heard.withLock { $0 += 1 } }
        }
        #expect(heard.withLock { $0 } == 1, "told once, at once")
        await mqtt.stopDevices()
        await broker.stopAsync()
    }
}
