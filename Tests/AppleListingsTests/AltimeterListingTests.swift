import Foundation
import Testing
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

@Suite(.serialized) struct AltimeterListingTests {
    init() { _ = simulatorSelected }

    @Test func followsTheSimulatedStairsOnTheMainQueue() async {
        // COREMOTION_SOURCE names the simulator here, so the default barometer is the simulator's.
        #expect(CMAltimeter.isRelativeAltitudeAvailable())
        #expect(CMAltimeter.authorizationStatus() == .authorized)
        let listing = AltimeterListing()
        listing.altimeter = CMAltimeter(barometer: SimulatedBarometerSource(scenario: .stairs, seed: 2, virtualStartTime: 0))
        listing.startAltimeter()
        // Updates arrive on the main queue, whose operations run on dispatch's threads here (the test
        // process gives its main thread to dispatchMain): the test waits without holding one.
        _ = await eventually(60) { listing.lock.withLock({ listing.heights.count }) >= 45 }
        listing.stopAltimeter()
        let heights = listing.lock.withLock { Array(listing.heights.prefix(60)) }
        #expect(heights.count >= 45)
        // 10 s standing, then 3 floors up (9 m) in 42 s: about 6 m after 40 s, about 9 m after 53 s.
        #expect(abs((heights.first ?? 1)) < 0.5)
        #expect((heights.max() ?? 0) > 5, "\(heights)")
        // The barometer runs in virtual time, as fast as the main queue takes its updates (one per
        // virtual second): a test task that resumes late finds days of simulated weather behind it. The
        // pressures checked are the first minute's, the stairs.
        let (label, pressures) = listing.lock.withLock { (listing.label, listing.pressures.prefix(60)) }
        #expect(label.hasSuffix(" m"), "label \(label.debugDescription)")
        #expect(pressures.allSatisfy { $0 > 99 && $0 < 104 }, "pressures \(Array(pressures))")
    }
}
