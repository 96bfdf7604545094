import Foundation
import MotionFusion
import MotionSources
@testable import MotionDashboard

/// A feed the test drives by hand: it records every configuration and emits what the test says.
final class ScriptedFeed: DashboardFeed {
    let sourceDescription: DashboardSourceDescription
    private struct Sink { var send: (@Sendable (DashboardFeedEvent) -> Void)? }
    private let sink = Locked(Sink())
    private let _applied = Locked<[DashboardFeedConfiguration]>([])

    init(streams: [DashboardSensor] = [.accelerometer, .gyro, .magnetometer, .deviceMotion], frames: [String] = ["xArbitraryZVertical", "xMagneticNorthZVertical"]) {
        var s: [DashboardSensor: DashboardSourceDescription.Stream] = [:]
        for sensor in streams { s[sensor] = .init(minimumRate: 1, maximumRate: 100, range: sensor == .accelerometer ? 8 : nil) }
        sourceDescription = DashboardSourceDescription(
            identifier: "test:scripted", name: "Scripted \"test\" feed", streams: s,
            referenceFrames: frames, details: [("kind", "unit test")])
    }

    func connect(_ sink: @escaping @Sendable (DashboardFeedEvent) -> Void) { self.sink.withLock { $0.send = sink } }
    func apply(_ configuration: DashboardFeedConfiguration) { _applied.withLock { $0.append(configuration) } }

    var applied: [DashboardFeedConfiguration] { _applied.withLock { $0 } }
    var last: DashboardFeedConfiguration? { applied.last }

    func emit(_ event: DashboardFeedEvent) { sink.withLock { $0.send }?(event) }
    func emit(_ sensor: DashboardSensor, t: Double, _ x: Double, _ y: Double, _ z: Double) {
        emit(.sample(DashboardSample(sensor: sensor, timestamp: t, vector: Vector3(x, y, z))))
    }
}

/// Reads every message queued for a connection so far, without waiting for more.
final class Drain: @unchecked Sendable {
    private var iterator: AsyncStream<DashboardOutgoing>.AsyncIterator
    init(_ connection: DashboardConnection) { iterator = connection.messages.makeAsyncIterator() }

    /// The next `count` messages (they must already be queued), decoded as JSON objects.
    func next(_ count: Int = 1) async -> [[String: Any]] {
        var out: [[String: Any]] = []
        for _ in 0..<count {
            guard let m = await iterator.next() else { break }
            out.append(json(m.string))
        }
        return out
    }

    /// Whether the stream has ended (the connection was dropped or disconnected).
    func finished() async -> Bool { await iterator.next() == nil }
}

func json(_ text: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? ["unparsable": text]
}
