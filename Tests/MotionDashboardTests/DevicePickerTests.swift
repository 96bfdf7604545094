import Foundation
import MotionFusion
import MotionSources
import Testing
@testable import MotionDashboard

/// A multi-device source driven by hand: it records starts and stops and emits what the test says.
final class HandFleet: Sendable {
    private struct Handler { var send: (@Sendable (DashboardDeviceEvent) -> Void)? }
    private let handler = Locked(Handler())
    let starts = Locked(0)
    let stops = Locked(0)

    func picker() -> DashboardDevicePicker {
        let cap = SensorCapability(minimumRate: 1, maximumRate: 200)
        return DashboardDevicePicker(
            info: SourceInfo(identifier: "test:fleet", name: "hand fleet", sensors: [.accelerometer: cap, .gyro: cap]),
            start: { [self] h in
                handler.withLock { $0.send = h }
                starts.withLock { $0 += 1 }
            },
            stop: { [self] in stops.withLock { $0 += 1 } })
    }

    func emit(_ event: DashboardDeviceEvent) { handler.withLock { $0.send }?(event) }

    /// One accelerometer sample of `device` whose x axis names it.
    func sample(_ device: String, t: Double, x: Double) {
        emit(.sample(device: device, RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(x, 0, -1))))
    }
}

/// The device picker: through the hub and a `MotionManagerFeed`, the page sees the devices heard,
/// and the feed follows the one it picks.
@Suite struct DevicePickerTests {
    static func wait(_ condition: () -> Bool) async throws {
        for _ in 0..<2000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test(.timeLimit(.minutes(5)))
    func thePagePicksTheDeviceItSees() async throws {
        let fleet = HandFleet()
        let picker = fleet.picker()
        let feed = MotionManagerFeed(source: picker)
        #expect(feed.devicePicker === picker)
        let hub = DashboardHub(feed: feed, outboxCapacity: 4096)
        let page = hub.connect()
        let recorder = PageRecorder(page)
        try await Self.wait { fleet.starts.withLock { $0 } == 1 }
        #expect(fleet.starts.withLock { $0 } == 1, "the fleet starts with the first page")

        fleet.emit(.appeared("robot-1"))
        fleet.emit(.appeared("robot-2"))
        func lastState() -> [String: Any] {
            recorder.texts.withLock { $0 }.map(json).last { $0["type"] as? String == "state" } ?? [:]
        }
        func devices() -> [String] { (lastState()["devices"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? [] }
        try await Self.wait { devices() == ["robot-1", "robot-2"] }
        #expect(devices() == ["robot-1", "robot-2"])
        #expect(lastState()["device"] as? String == "robot-1", "the first heard is shown")

        // Both devices stream; only the shown one reaches the page.
        var t = 100.0
        func stream(_ seconds: Double) async throws {
            let end = t + seconds
            while t < end {
                fleet.sample("robot-1", t: t, x: 0.1)
                fleet.sample("robot-2", t: t, x: 0.9)
                t += 0.01
                if Int(t * 100) % 10 == 0 { hub.flush(); try await Task.sleep(for: .milliseconds(1)) }
            }
            hub.flush()
        }
        func xs() -> Set<Double> { Set(recorder.rows(.accelerometer).compactMap { $0[1] as? Double }) }
        try await stream(0.5)
        try await Self.wait { !xs().isEmpty }
        #expect(xs() == [0.1], "robot-1's samples only: \(xs())")

        hub.receive(#"{"type":"device","device":"robot-2","id":1}"#, from: page)
        try await Self.wait { lastState()["device"] as? String == "robot-2" }
        #expect(picker.selected == "robot-2")
        // Rows of robot-1 still on their way from before the switch are older than `switchTime`.
        let switchTime = t
        func rowsSinceSwitch() -> [[Any]] { recorder.rows(.accelerometer).filter { ($0[0] as? Double ?? 0) >= switchTime } }
        try await stream(0.5)
        try await Self.wait { rowsSinceSwitch().count > 10 }
        let after = Set(rowsSinceSwitch().compactMap { $0[1] as? Double })
        #expect(after == [0.9], "robot-2's samples only after the switch: \(after)")

        // An unknown device is refused and changes nothing.
        hub.receive(#"{"type":"device","device":"robot-9","id":2}"#, from: page)
        try await Self.wait { recorder.texts.withLock { $0 }.contains { $0.contains(#""code":"unavailable""#) } }
        #expect(picker.selected == "robot-2")

        // Silence is shown, and a device heard again is no longer silent.
        fleet.emit(.silent("robot-1"))
        try await Self.wait { (lastState()["devices"] as? [[String: Any]])?.first?["silent"] as? Bool == true }
        #expect((lastState()["devices"] as? [[String: Any]])?.first?["silent"] as? Bool == true)
        fleet.sample("robot-1", t: t, x: 0.1)
        try await Self.wait { (lastState()["devices"] as? [[String: Any]])?.first?["silent"] as? Bool == false }
        #expect((lastState()["devices"] as? [[String: Any]])?.first?["silent"] as? Bool == false)

        // The last page gone, the streams stop (the feed's orientation tracking keeps the fleet itself
        // running at 10 Hz for as long as the feed lives, as for any source).
        hub.disconnect(page)
        #expect(!feed.manager.isAccelerometerActive && !feed.manager.isDeviceMotionActive)
    }
}
