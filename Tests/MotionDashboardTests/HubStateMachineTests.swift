import Foundation
import MotionFusion
import Testing
@testable import MotionDashboard

/// The hub's logic alone: inputs in, actions out, no queue, lock or feed.
@Suite struct HubStateMachineTests {
    typealias Machine = DashboardHubStateMachine

    static func source(_ streams: [DashboardSensor]) -> DashboardSourceDescription {
        var s: [DashboardSensor: DashboardSourceDescription.Stream] = [:]
        for sensor in streams { s[sensor] = .init() }
        return DashboardSourceDescription(identifier: "test:m", name: "machine", streams: s, referenceFrames: ["xArbitraryZVertical"])
    }

    /// The kinds and recipients of `actions`, for compact expectations.
    static func summary(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .send(let m, .all): "\(m.kind.rawValue)→all"
            case .send(let m, .page(let id)): "\(m.kind.rawValue)→\(id)"
            }
        }
    }

    @Test func pagesComeAndGo() {
        var m = Machine(source: Self.source([.accelerometer, .pedometer]), outboxCapacity: 8, pendingCapacity: 16)
        #expect(m.configuration.running.isEmpty, "nothing runs without a page")
        let (a, first) = m.connect()
        #expect(Self.summary(first) == ["hello→\(a)", "state→all"])
        #expect(m.configuration.running == [.accelerometer, .pedometer])
        let (b, _) = m.connect()
        #expect(Self.summary(m.disconnect(a)) == ["state→all"])
        #expect(m.disconnect(a).isEmpty, "a page leaves once")
        m.dropped(b)
        #expect(m.clients.isEmpty)
        #expect(m.configuration.running.isEmpty)
    }

    @Test func devicesArePickedFromThoseHeard() {
        var m = Machine(source: Self.source([.accelerometer]), outboxCapacity: 8, pendingCapacity: 16)
        let (page, _) = m.connect()
        let early = m.receive(.success(DashboardRequest(control: .device("b"), id: .integer(1))), from: page)
        guard case .send(.error(let refused), .page(page))? = early.first else {
            Issue.record("expected an error to the page: \(Self.summary(early))")
            return
        }
        #expect(refused.code == "unavailable" && refused.message.contains("none heard yet"))
        #expect(m.configuration.device == nil)

        let heard = m.ingest(.devices([DashboardDevice(id: "a"), DashboardDevice(id: "b")], selected: "a"))
        #expect(Self.summary(heard) == ["state→all"])
        #expect(m.state.devices.map(\.id) == ["a", "b"] && m.state.device.value == "a")
        #expect(m.ingest(.devices([DashboardDevice(id: "a"), DashboardDevice(id: "b")], selected: "a")).isEmpty, "no change, no message")

        let picked = m.receive(.success(DashboardRequest(control: .device("b"), id: .integer(2))), from: page)
        #expect(Self.summary(picked) == ["state→all", "ack→\(page)"])
        #expect(m.configuration.device == "b")
        #expect(m.state.device.value == "b")
    }

    @Test func pedometerAndAltitudeRowsGoOutWithTheFrame() throws {
        var m = Machine(source: Self.source([.pedometer, .altitude]), outboxCapacity: 8, pendingCapacity: 16)
        _ = m.connect()
        #expect(m.ingest(.sample(DashboardSample(timestamp: 5, pedometer: DashboardPedometer(steps: 7, distance: 5, cadence: nil, pace: nil)))).isEmpty)
        #expect(m.ingest(.sample(DashboardSample(timestamp: 6, altitude: DashboardAltitude(relativeAltitude: -0.5, pressure: 100.1)))).isEmpty)
        let (count, actions) = m.flush()
        #expect(count == 2)
        guard case .send(let message, .all)? = actions.first else { Issue.record("no samples"); return }
        let batch = json(message.text)
        #expect(batch["pedometer"] as? [[Any]] != nil)
        let pedometer = try #require((batch["pedometer"] as? [[Any]])?.first)
        #expect(pedometer[1] as? Int == 7)
        #expect(pedometer[3] is NSNull, "no cadence between bouts")
        #expect((batch["altitude"] as? [[Double]]) == [[6, -0.5, 100.1]])
        #expect(m.flush().count == 0)
    }
}
