@testable import CoreMotionCLI
import Foundation
import MotionDashboard
import MotionFusion
import MotionMQTT
import MotionSources
import Testing

/// `coremotion dashboard --source mqtt://…/fleet/+`: the device picker over a real, private Mosquitto
/// with two publishing devices. Needs Debian's `mosquitto` (CI installs it); fails without it.
@Suite(.serialized) struct DashboardDevicesOverMQTTTests {
    static let mosquitto = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw CLIError("no free port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    final class Events: Sendable {
        let samples = Locked<[(Double, Double)]>([])  // (timestamp, x) of accelerometer samples
        let devices = Locked<(ids: [String], selected: String?)>(([], nil))
        func handle(_ e: DashboardFeedEvent) {
            switch e {
            case .sample(let s): if case .vector(let v) = s.value, s.sensor == .accelerometer { samples.withLock { $0.append((s.timestamp, v.x)) } }
            case .devices(let list, let selected): devices.withLock { $0 = (list.map(\.id), selected) }
            default: break
            }
        }
    }

    static func wait(seconds: Double, _ condition: () -> Bool) async throws {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, !condition() { try await Task.sleep(for: .milliseconds(20)) }
    }

    @Test(.timeLimit(.minutes(5)))
    func thePagePicksOneDeviceOfTheBroker() async throws {
        let binary = try #require(Self.mosquitto, "mosquitto is not installed (CI installs it from .ci/apt-packages)")
        let port = try Self.freePort()
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: binary)
        broker.arguments = ["-p", String(port)]
        broker.standardOutput = FileHandle.nullDevice
        broker.standardError = FileHandle.nullDevice
        try broker.run()
        defer { kill(broker.processIdentifier, SIGKILL); broker.waitUntilExit() }

        let source = try MQTTSensorSource(url: MQTTURL(parsing: "mqtt://127.0.0.1:\(port)/fleet/+?silence=30"), log: { _ in })
        let picker = DashboardCommand.devicePicker(for: source)
        let feed = MotionManagerFeed(source: picker)
        let events = Events()
        feed.connect { events.handle($0) }
        feed.apply(DashboardFeedConfiguration(running: [.accelerometer], interval: 0.01, referenceFrame: nil))

        // Two devices publish at 100 Hz: x = +0.25 g for robot-a, −0.5 g for robot-b.
        let publishers = try ["robot-a", "robot-b"].map { device in
            var config = try MQTTURL(parsing: "mqtt://127.0.0.1:\(port)/fleet/\(device)").clientConfiguration(clientID: "pub-\(device)")
            config.initialBackoff = 0.05
            return MQTTMotionPublisher(configuration: config, topic: "fleet/\(device)", deviceID: device, batchPeriod: 0.02)
        }
        let x = ["robot-a": 0.25, "robot-b": -0.5]
        // On a thread of its own: the test's cooperative pool may be held by other tests running at once.
        let stopPublishing = Locked(false)
        let publishing = Thread {
            while !stopPublishing.withLock({ $0 }) {
                let t = MonotonicClock.now()
                for (p, device) in zip(publishers, ["robot-a", "robot-b"]) {
                    p.add(RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(x[device] ?? 0, 0, -1)))
                }
                usleep(10_000)
            }
        }
        publishing.start()
        defer { stopPublishing.withLock { $0 = true } }

        try await Self.wait(seconds: 60) { events.devices.withLock { $0.ids.count } == 2 && events.samples.withLock { $0.count } > 50 }
        let (ids, first) = events.devices.withLock { $0 }
        #expect(Set(ids) == ["robot-a", "robot-b"], "both devices are listed: \(ids)")
        let shown = try #require(first)
        let before = events.samples.withLock { $0 }
        #expect(before.count > 50)
        #expect(before.allSatisfy { abs($0.1 - (x[shown] ?? .nan)) < 1e-3 }, "only \(shown)'s samples are shown")

        let other = shown == "robot-a" ? "robot-b" : "robot-a"
        let switched = events.samples.withLock { $0.count }
        feed.apply(DashboardFeedConfiguration(running: [.accelerometer], interval: 0.01, referenceFrame: nil, device: other))
        #expect(events.devices.withLock { $0.selected } == other)
        try await Self.wait(seconds: 60) { events.samples.withLock { $0.count } > switched + 50 }
        let after = events.samples.withLock { Array($0.dropFirst(switched)) }
        #expect(after.count > 50)
        #expect(after.allSatisfy { abs($0.1 - (x[other] ?? .nan)) < 1e-3 }, "only \(other)'s samples after the switch")

        stopPublishing.withLock { $0 = true }
        feed.apply(DashboardFeedConfiguration(running: [], interval: 0.01, referenceFrame: nil))
        for p in publishers { _ = await p.finish(timeout: 2) }
        await source.stopDevices()
    }
}
