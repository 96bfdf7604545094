import Foundation
import MotionRecorderStore
import Testing
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

@Suite(.serialized) struct PedometerListingTests {
    init() { _ = simulatorSelected }

    @Test func countsTheSimulatedWalkAtItsCadence() async throws {
        let listing = PedometerListing()
        let device = SimulatedDevice(scenario: .walk, seed: 3, clock: .virtual(startTime: 1000))
        let frequency = try #require(device.stepFrequency)
        listing.pedometer = CMPedometer(source: device, databasePath: NSTemporaryDirectory() + "cm-\(UUID().uuidString).sqlite")
        listing.startTrackingEvents()
        listing.startCountingSteps()
        _ = await eventually(60) { listing.lock.withLock({ listing.steps.last ?? 0 }) >= 120 }
        listing.stopCountingSteps()
        let (steps, cadences, events, text, distance) = listing.lock.withLock {
            (listing.steps, listing.cadences, listing.events, listing.stepsText, listing.distanceText)
        }
        #expect((steps.last ?? 0) >= 120)
        #expect(text == String(steps.last ?? -1))
        #expect(distance.hasSuffix(" m"))
        let cadence = try #require(cadences.last)
        #expect(abs(cadence - frequency) < 0.05 * frequency, "\(cadence) vs \(frequency) steps/s")
        #expect(events.first == "resume")
    }

    @Test func theHandheldDefaultSourceTakesNoSteps() async throws {
        // The process's default source here is sim:handheld (real time): an accelerometer, no walking.
        #expect(CMPedometer.isStepCountingAvailable() && CMPedometer.isDistanceAvailable())
        #expect(CMPedometer.isCadenceAvailable() && CMPedometer.isPaceAvailable())
        #expect(CMPedometer.isPedometerEventTrackingAvailable())
        #expect(CMPedometer.authorizationStatus() == .authorized)
        let listing = PedometerListing()
        listing.startCountingSteps()
        try await Task.sleep(nanoseconds: 1_500_000_000)
        listing.stopCountingSteps()
        #expect(listing.lock.withLock { listing.steps.isEmpty && listing.lastError == nil })
    }

    @Test func queriesTheRecordedHistory() async throws {
        let path = NSTemporaryDirectory() + "cm-\(UUID().uuidString)-pedometer-listing.sqlite"
        let store = try RecordingStore(location: .file(path))
        let start = Date().addingTimeInterval(-1800)
        // 40 s of walking at 1.8 steps/s, recorded at 50 Hz by CMSensorRecorder.
        _ = try store.insert((0..<2000).map { k in
            let t = Double(k) / 50
            let phase = 2 * Double.pi * 1.8 * t
            return AccelerometerReading(date: start.addingTimeInterval(t), timestamp: 100 + t,
                                        x: 0.02 * sin(phase / 2), y: -1 - 0.3 * sin(phase), z: 0.05)
        })
        let listing = PedometerListing()
        listing.pedometer = CMPedometer(source: SimulatedDevice(scenario: .still), databasePath: path)
        let result = NSLock()
        var steps: Int?
        var done = false
        listing.queryLastHours(1) { n in result.withLock { steps = n; done = true } }
        _ = await eventually(60) { result.withLock({ done }) }
        let counted = try #require(result.withLock { steps })
        #expect(abs(counted - 72) <= 2, "40 s at 1.8 steps/s: \(counted)")
    }

    @Test func countsFloorsClimbedOnTheSimulatedStairs() async {
        // COREMOTION_SOURCE names the simulator, so the process has the simulator's barometer.
        #expect(CMPedometer.isFloorCountingAvailable())
        let listing = PedometerListing()
        // The simulator's walk, 80 s of it, on the stairs barometer's virtual clock: 10 s standing, then
        // 3 floors up (about 42 s), 10 s on the top floor, then the way down begins (ascended stays 3).
        // A finite walk, not a virtual-time device: that one runs on into the next climb (104 s a
        // cycle), so a check that came late (a loaded machine) saw 6 floors up.
        let device = ManualSource(sensors: [.accelerometer])
        listing.pedometer = CMPedometer(source: device,
                                        barometer: SimulatedBarometerSource(scenario: .stairs, seed: 6, virtualStartTime: 300),
                                        databasePath: NSTemporaryDirectory() + "cm-\(UUID().uuidString).sqlite")
        listing.startCountingSteps()
        var walk = MotionSimulator(options: SimulationOptions(scenario: .walk, seed: 6), startTime: 300)
        walk.setRates(device.demand.rates, from: 300)
        #expect(!device.demand.rates.isEmpty, "the pedometer runs the accelerometer once startUpdates returns")
        while let next = walk.nextTimestamp, next < 380 { device.emit(walk.next()) }
        _ = await eventually(60) { listing.lock.withLock({ listing.stepsText.hasSuffix("(3 floors up)") }) }
        listing.stopCountingSteps()
        #expect(listing.lock.withLock { listing.stepsText.hasSuffix(" (3 floors up)") }, "\(listing.stepsText)")
    }
}
