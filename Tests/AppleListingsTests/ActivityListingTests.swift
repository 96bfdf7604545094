import Foundation
import MotionRecorderStore
import Testing
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

@Suite(.serialized) struct ActivityListingTests {
    init() { _ = simulatorSelected }


    @Test(arguments: [(SimulationScenario.walk, "walking"), (.run, "running"), (.still, "stationary")])
    func reportsTheSimulatedActivityOnTheMainQueue(_ scenario: SimulationScenario, _ expected: String) async throws {
        let listing = ActivityListing()
        listing.activityManager = CMMotionActivityManager(
            source: SimulatedDevice(scenario: scenario, seed: 4, clock: .virtual(startTime: 500)),
            databasePath: NSTemporaryDirectory() + "cm-\(UUID().uuidString).sqlite")
        listing.startTrackingActivity()
        // The main queue's operations run on dispatch's threads here (the test process gives its main
        // thread to dispatchMain): the test waits for them without holding one.
        _ = await eventually(60) { listing.lock.withLock { listing.confidences.contains(.high) } }
        listing.stopTrackingActivity()
        let (names, confidences, text) = listing.lock.withLock { (listing.activities, listing.confidences, listing.statusText) }
        #expect(names.first == "unknown", "\(names)")
        #expect(names.last == expected, "\(names)")
        #expect(confidences.last == .high)
        #expect(text == expected + " (high confidence)")
        // Nothing arrives after stopActivityUpdates() returned.
        let count = names.count
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(listing.lock.withLock { listing.activities.count } == count)
    }

    @Test func theHandheldDefaultSourceIsStationary() async {
        // The process's default source here is sim:handheld (real time).
        #expect(CMMotionActivityManager.isActivityAvailable())
        #expect(CMMotionActivityManager.authorizationStatus() == .authorized)
        let listing = ActivityListing()
        listing.startTrackingActivity()
        _ = await eventually(60) { listing.lock.withLock { listing.activities.contains("stationary") } }
        listing.stopTrackingActivity()
        // "unknown" first, then "stationary" only. An update comes whenever the activity *or its
        // confidence* changes, so a test task that resumes late also sees stationary's confidence rise
        // (CI rehearsal: ["unknown", "stationary", "stationary"]); no update repeats the one before it.
        let (names, confidences) = listing.lock.withLock { (listing.activities, listing.confidences) }
        #expect(names.first == "unknown", "\(names)")
        #expect(names.count >= 2 && names.dropFirst().allSatisfy { $0 == "stationary" }, "\(names)")
        let updates = Array(zip(names, confidences))
        #expect(zip(updates, updates.dropFirst()).allSatisfy { $0.0 != $1.0 || $0.1 != $1.1 }, "\(updates)")
    }

    @Test func queriesTheRecordedHistory() async throws {
        let path = NSTemporaryDirectory() + "cm-\(UUID().uuidString)-activity-listing.sqlite"
        let store = try RecordingStore(location: .file(path))
        let start = Date().addingTimeInterval(-1800)
        // 30 s lying still, then 40 s walking at 1.8 steps/s, recorded at 50 Hz.
        _ = try store.insert((0..<3500).map { k in
            let t = Double(k) / 50
            let phase = 2 * Double.pi * 1.8 * t
            let walking = t >= 30
            return AccelerometerReading(date: start.addingTimeInterval(t), timestamp: 100 + t,
                                        x: walking ? 0.02 * sin(phase / 2) : 0.001 * sin(7 * t),
                                        y: walking ? -1 - 0.3 * sin(phase) : -1, z: 0.05)
        })
        let listing = ActivityListing()
        listing.activityManager = CMMotionActivityManager(source: SimulatedDevice(scenario: .still), databasePath: path)
        let done = NSLock()
        var finished = false
        listing.queryLastHour { done.withLock { finished = true } }
        _ = await eventually(60) { done.withLock { finished } }
        let history = try #require(listing.lock.withLock { listing.history })
        #expect(history == ["other", "stationary", "walking"], "\(history)")
    }
}
