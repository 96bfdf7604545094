import Foundation
import Hummingbird
import HummingbirdTesting
import MotionFusion
import MotionSources
import OpenCoreMotion
import Testing
@testable import MotionDashboard

/// Collects every message queued for a page, as text, while the test polls.
final class PageRecorder: Sendable {
    let texts = Locked<[String]>([])
    private let task: Task<Void, Never>

    init(_ connection: DashboardConnection) {
        let texts = self.texts
        task = Task { for await m in connection.messages { texts.withLock { $0.append(m.string) } } }
    }

    deinit { task.cancel() }

    /// The rows of `sensor` in every `samples` message so far, in order.
    func rows(_ sensor: DashboardSensor) -> [[Any]] {
        texts.withLock { $0 }.flatMap { text -> [[Any]] in
            let m = json(text)
            return m["type"] as? String == "samples" ? (m[sensor.rawValue] as? [[Any]] ?? []) : []
        }
    }
}

/// The pedometer and altimeter streams, through the app (Hummingbird's router test client, no
/// sockets) and the hub, on the simulator's walk and stairs in virtual time.
@Suite struct StepsAndAltitudeTests {
    @Test(.timeLimit(.minutes(5)))
    func aSimulatedWalkAndStairsReachThePage() async throws {
        let device = SimulatedDevice(scenario: .walk, seed: 5, clock: .virtual(startTime: 1000))
        let frequency = try #require(device.stepFrequency)
        let barometer = SimulatedBarometerSource(scenario: .stairs, seed: 3, virtualStartTime: 1000)
        let hub = DashboardHub(feed: MotionManagerFeed(source: device, barometer: barometer), outboxCapacity: 1 << 20,
                               pendingCapacity: 1 << 22)  // virtual time may run far ahead of the frames: keep every row
        let app = Application(router: DashboardApplication.makeRouter(hub: hub))
        try await app.test(.router) { client in
            try await client.execute(uri: "/api/hello", method: .get) { response in
                let hello = json(String(buffer: response.body))
                let streams = try #require((hello["source"] as? [String: Any])?["streams"] as? [String: Any])
                #expect(streams["pedometer"] != nil && streams["altitude"] != nil)
                let columns = try #require(hello["columns"] as? [String: [String]])
                #expect(columns["pedometer"] == ["t", "steps", "distance", "cadence", "pace"])
                #expect(columns["altitude"] == ["t", "relativeAltitude", "pressure"])
            }
            let page = hub.connect()
            defer { hub.disconnect(page) }
            let recorder = PageRecorder(page)
            // Virtual time runs the motion streams as fast as the CPU allows: keep only the two counted ones.
            for sensor in DashboardSensor.motion.sorted() {
                hub.receive(#"{"type":"stop","sensor":"\#(sensor.rawValue)"}"#, from: page)
            }
            try await client.execute(uri: "/api/state", method: .get) { response in
                let sensors = try #require(json(String(buffer: response.body))["sensors"] as? [String: [String: Any]])
                #expect(sensors["pedometer"]?["running"] as? Bool == true)
                #expect(sensors["altitude"]?["running"] as? Bool == true)
                #expect(sensors["gyro"]?["running"] as? Bool == false)
            }
            let deadline = Date().addingTimeInterval(240)  // ends early on success; long only when the pool is starved
            while Date() < deadline {
                hub.flush()
                let steps = (recorder.rows(.pedometer).last?[1] as? Int) ?? 0
                if steps >= 150, recorder.rows(.altitude).count >= 90 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            hub.flush()

            // Steps: real counts from the walk, growing, at the walker's cadence.
            let steps = recorder.rows(.pedometer)
            let first = try #require(steps.first), last = try #require(steps.last)
            let counts = steps.compactMap { $0[1] as? Int }
            #expect(counts.count == steps.count && counts.count >= 10)
            #expect(zip(counts.dropFirst(), counts).allSatisfy { $0 > $1 }, "the count only grows")
            #expect(counts.last ?? 0 >= 150, "\(counts.last ?? 0) steps")
            let t0 = try #require(first[0] as? Double), t1 = try #require(last[0] as? Double)
            let rate = Double(counts.last! - counts.first!) / (t1 - t0)
            #expect(abs(rate - frequency) < 0.03 * frequency, "\(rate) vs \(frequency) steps/s")
            let cadence = try #require(last[3] as? Double)
            #expect(abs(cadence - frequency) < 0.05 * frequency)
            let distance = try #require(last[2] as? Double)
            let length = StepLengthModel().stepLength(cadence: frequency)
            #expect(abs(distance - Double(counts.last!) * length) < 0.05 * distance, "distance \(distance) m")

            // Altitude: one row a second, following the stairs' three floors (9 m, reached after 52 s).
            // The barometer also sees the weather (a few Pa over minutes), so the first minute is
            // compared with the true height: within 0.35 m (noise 2 Pa ≈ 0.17 m, weather ≲ 0.15 m).
            let altitude = recorder.rows(.altitude).compactMap { $0 as? [Double] }
            #expect(altitude.count >= 90)
            let start = try #require(altitude.first?[0])
            let minute = altitude.filter { $0[0] - start <= 60 }
            #expect(zip(minute.dropFirst(), minute).allSatisfy { abs($0[0] - $1[0] - 1) < 1e-6 }, "one row a second")
            let top = minute.map { $0[1] }.max() ?? 0
            #expect(top > 8.6 && top < 9.5, "top \(top) m")
            for row in minute {
                // Each row is the mean of the second before its timestamp: compare at its middle.
                let truth = barometer.altitude(at: row[0] - 0.5) - barometer.altitude(at: start - 0.5)
                #expect(abs(row[1] - truth) < 0.35, "t \(row[0] - start): \(row[1]) m vs \(truth) m")
                #expect(row[2] > 90 && row[2] < 110, "pressure in kPa")
            }
        }
    }
}

/// Stopping the pedometer, altitude or activity stream leaves the motion streams running.
@Suite struct StoppingCountedStreamsTests {
    @Test(.timeLimit(.minutes(5)))
    func theMotionStreamsGoOn() async throws {
        let device = SimulatedDevice(scenario: .handheld, seed: 2)
        let feed = MotionManagerFeed(source: device, barometer: SimulatedBarometerSource(scenario: .still))
        let counts = Locked<[DashboardSensor: Int]>([:])
        feed.connect { e in if case .sample(let s) = e { counts.withLock { $0[s.sensor, default: 0] += 1 } } }
        func count(_ s: DashboardSensor) -> Int { counts.withLock { $0[s] ?? 0 } }
        feed.apply(DashboardFeedConfiguration(running: Set(DashboardSensor.allCases), interval: 0.01, referenceFrame: nil))
        try await Task.sleep(for: .milliseconds(1500))
        #expect(count(.gyro) > 50 && count(.altitude) >= 1)
        for stopped in [DashboardSensor.pedometer, .altitude, .activity] {
            var running = Set(DashboardSensor.allCases)
            running.remove(stopped)
            feed.apply(DashboardFeedConfiguration(running: running, interval: 0.01, referenceFrame: nil))
        }
        let before = (count(.accelerometer), count(.gyro), count(.deviceMotion))
        try await Task.sleep(for: .milliseconds(1000))
        #expect(count(.accelerometer) > before.0 + 30, "accelerometer goes on")
        #expect(count(.gyro) > before.1 + 30, "gyro goes on")
        #expect(count(.deviceMotion) > before.2 + 30, "device motion goes on")
        feed.apply(DashboardFeedConfiguration(running: [], interval: 0.01, referenceFrame: nil))
    }
}

extension StoppingCountedStreamsTests {
    @Test(.timeLimit(.minutes(5)))
    func throughTheHubToo() async throws {
        let device = SimulatedDevice(scenario: .handheld, seed: 2)
        let hub = DashboardHub(feed: MotionManagerFeed(source: device, barometer: SimulatedBarometerSource(scenario: .still)), outboxCapacity: 100_000)
        let pages = (0..<3).map { _ in hub.connect() }
        let recorders = pages.map(PageRecorder.init)
        hub.receive(#"{"type":"interval","ms":10}"#, from: pages[0])
        hub.receive(#"{"type":"stop","sensor":"pedometer"}"#, from: pages[0])
        hub.receive(#"{"type":"stop","sensor":"altitude"}"#, from: pages[0])
        hub.receive(#"{"type":"stop","sensor":"activity"}"#, from: pages[0])
        #expect(hub.appliedConfiguration?.running == DashboardSensor.motion)
        for _ in 0..<50 { hub.flush(); try await Task.sleep(for: .milliseconds(20)) }
        #expect(hub.clientCount == 3)
        #expect(hub.appliedConfiguration?.running == DashboardSensor.motion, "\(String(describing: hub.appliedConfiguration))")
        for r in recorders { #expect(r.rows(.gyro).count > 30, "\(r.rows(.gyro).count)") }
        for p in pages { hub.disconnect(p) }
    }
}

/// The activity stream, through the hub, on the simulator's walk in virtual time.
@Suite struct ActivityStreamTests {
    @Test(.timeLimit(.minutes(5)))
    func aSimulatedWalkIsReportedAsWalking() async throws {
        let device = SimulatedDevice(scenario: .walk, seed: 7, clock: .virtual(startTime: 1000))
        let hub = DashboardHub(feed: MotionManagerFeed(source: device), outboxCapacity: 1 << 20)
        let page = hub.connect()
        defer { hub.disconnect(page) }
        let recorder = PageRecorder(page)
        #expect(hub.appliedConfiguration?.running.contains(.activity) == true)
        for sensor in DashboardSensor.motion.sorted() {
            hub.receive(#"{"type":"stop","sensor":"\#(sensor.rawValue)"}"#, from: page)
        }
        hub.receive(#"{"type":"stop","sensor":"pedometer"}"#, from: page)
        let deadline = Date().addingTimeInterval(240)  // ends early on success; long only when the pool is starved
        func confident() -> Bool {
            recorder.rows(.activity).contains { $0[1] as? String == "walking" && $0[2] as? Int == 2 }
        }
        while Date() < deadline, !confident() {
            hub.flush()
            try await Task.sleep(for: .milliseconds(20))
        }
        hub.flush()
        let rows = recorder.rows(.activity)
        #expect(confident(), "\(rows)")
        // Rows are [t, activity, confidence] with a known class and a confidence 0…2, in time order.
        let known = ["stationary", "walking", "running", "automotive", "cycling", "unknown"]
        for row in rows {
            #expect(row.count == 3 && known.contains(row[1] as? String ?? "") && (0...2).contains(row[2] as? Int ?? -1), "\(row)")
        }
        let times = rows.compactMap { $0[0] as? Double }
        #expect(times.count == rows.count && zip(times.dropFirst(), times).allSatisfy { $0 >= $1 })
        #expect(!rows.contains { $0[1] as? String == "running" || $0[1] as? String == "automotive" })
    }
}
