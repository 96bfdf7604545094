import Foundation
import MotionFusion
import MotionSources
import OpenCoreMotion
import Testing
@testable import MotionDashboard

/// The thin adapter over `CMMotionManager`, on a hand-driven source.
@Suite struct MotionManagerFeedTests {
    @Test func describesTheSourceAndItsFrames() {
        let feed = MotionManagerFeed(source: ManualSource(maximumRate: 100, identifier: "manual:test"))
        let d = feed.sourceDescription
        #expect(d.identifier == "manual:test")
        #expect(Set(d.streams.keys) == DashboardSensor.motion.union([.pedometer, .activity]), "no barometer: no altitude")
        #expect(d.streams[.accelerometer]?.maximumRate == 100)
        #expect(d.referenceFrames == ["xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical"],
                "true north needs a location")
        let located = CMMotionManager(source: ManualSource())
        located.location = .init(latitude: 48.85, longitude: 2.35)
        #expect(MotionManagerFeed(manager: located).sourceDescription.referenceFrames.last == "xTrueNorthZVertical")
    }

    @Test func theDashboardDrivesTheManager() async throws {
        let source = ManualSource(maximumRate: 100)
        let feed = MotionManagerFeed(source: source)
        let got = Box<[DashboardFeedEvent]>([])
        feed.connect { e in got.set(got.get() + [e]) }
        feed.apply(DashboardFeedConfiguration(running: [.accelerometer, .gyro], interval: 0.05, referenceFrame: nil))
        #expect(feed.manager.isAccelerometerActive && feed.manager.isGyroActive)
        #expect(!feed.manager.isMagnetometerActive && !feed.manager.isDeviceMotionActive)
        #expect(feed.manager.accelerometerUpdateInterval == 0.05)
        source.emit(RawSample(sensor: .accelerometer, timestamp: 1, value: Vector3(0, 0, -1)))
        source.emit(RawSample(sensor: .gyro, timestamp: 1, value: Vector3(0.5, 0, 0)))
        func samples() -> [DashboardSample] {
            got.get().compactMap { e -> DashboardSample? in if case .sample(let s) = e { s } else { nil } }
        }
        for _ in 0..<200 where samples().count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        let samples = samples()
        #expect(samples.contains(DashboardSample(sensor: .accelerometer, timestamp: 1, vector: Vector3(0, 0, -1))))
        #expect(samples.contains(DashboardSample(sensor: .gyro, timestamp: 1, vector: Vector3(0.5, 0, 0))))

        feed.apply(DashboardFeedConfiguration(running: [.gyro], interval: 0.01, referenceFrame: nil))
        #expect(!feed.manager.isAccelerometerActive && feed.manager.isGyroActive)
        #expect(feed.manager.gyroUpdateInterval == 0.01)
        feed.apply(DashboardFeedConfiguration(running: [], interval: 0.01, referenceFrame: nil))
        #expect(!feed.manager.isGyroActive)
    }

    /// The page's orientation label: the feed tracks its source's orientation as `UIDevice` does,
    /// through its own manager, whether or not the page runs the accelerometer panel.
    @Test func theSourcesOrientationReachesThePage() async throws {
        let source = ManualSource(maximumRate: 100)
        let feed = MotionManagerFeed(source: source)
        let got = Box<[String?]>([])
        feed.connect { e in if case .orientation(let o) = e { got.set(got.get() + [o]) } }
        feed.apply(DashboardFeedConfiguration(running: [.gyro], interval: 0.01, referenceFrame: nil))
        #expect(!feed.manager.isAccelerometerActive, "orientation must not need the accelerometer panel")
        func settle(until count: Int) async throws {
            for _ in 0..<300 where got.get().count < count { try await Task.sleep(for: .milliseconds(10)) }
        }
        source.emit(RawSample(sensor: .accelerometer, timestamp: 1, value: Vector3(0, 0, -1)))
        try await settle(until: 1)
        source.emit(RawSample(sensor: .accelerometer, timestamp: 2, value: Vector3(0, -0.98, -0.2)))
        try await settle(until: 2)
        // A diagonal reading is ambiguous: the previous orientation stays and nothing is sent.
        source.emit(RawSample(sensor: .accelerometer, timestamp: 3, value: Vector3(0.6, -0.6, -0.5)))
        source.emit(RawSample(sensor: .accelerometer, timestamp: 4, value: Vector3(0.99, 0.05, -0.1)))
        try await settle(until: 3)
        #expect(got.get() == ["faceUp", "portrait", "landscapeRight"])
    }

    @Test func sourceErrorsReachThePage() async throws {
        let source = ManualSource(maximumRate: 100)
        let feed = MotionManagerFeed(source: source)
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let d = Drain(page)
        _ = await d.next(2)
        source.fail(SourceError(.deviceRemoved, "the device was unplugged", path: "/dev/iio:device0"))
        // Every running stream's handler gets the error; each becomes a sourceError + state pair.
        var errors: [String: String] = [:]
        for _ in 0..<10 {
            let m = await d.next().first ?? [:]
            if m["type"] as? String == "sourceError", let sensor = m["sensor"] as? String {
                errors[sensor] = m["message"] as? String
            }
            if errors.count == 5 { break }
        }
        #expect(Set(errors.keys) == ["accelerometer", "gyro", "magnetometer", "deviceMotion", "pedometer"])
        #expect(errors["gyro"]?.contains("unplugged") == true, "\(errors)")
        hub.disconnect(page)
    }

    /// Regression: the sink used to sit in a lock whose value was the closure itself, and every
    /// `withLock` wrapped it in two more reabstraction thunks: each event cost more than the last
    /// (the server's CPU grew by ~8 % of a core every 10 s, and the stack would eventually overflow).
    /// Checked by the depth of the stack the sink runs on, which is exact, rather than by timing.
    @Test func theSinkRunsAtTheSameStackDepthAfterManyEvents() {
        let feed = MotionManagerFeed(source: ManualSource())
        let depths = Locked<[Int]>([])
        feed.connect { _ in depths.withLock { $0.append(Thread.callStackReturnAddresses.count) } }
        for _ in 0..<5000 { feed.report(orientation: "faceUp") }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 5000)
        #expect(Set(seen).count == 1, "stack depth changed: first \(seen.first ?? 0), last \(seen.last ?? 0)")
    }
}
