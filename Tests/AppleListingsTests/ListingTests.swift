import Foundation
import Testing
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

/// `CMMotionManager()` reads `COREMOTION_SOURCE` once per process: point it at the simulator before
/// any listing creates a manager, as a user would in the shell.
let simulatorSelected: Bool = {
    setenv("COREMOTION_SOURCE", "sim:handheld", 1)
    return true
}()

/// Runs the current run loop for `seconds`, as an app's main loop would.
func spinRunLoop(_ seconds: TimeInterval) {
    RunLoop.current.run(until: Date().addingTimeInterval(seconds))
}

@Suite(.serialized) struct AppleListingTests {
    init() { _ = simulatorSelected }

    @Test func accelerometerPulledByATimer() {
        let listing = AccelerometerListing()
        #expect(listing.motion.isAccelerometerAvailable)
        listing.startAccelerometers()
        spinRunLoop(0.5)
        listing.stopAccelerometers()
        #expect(listing.readings.count >= 10)
        let last = listing.readings.last!
        let norm = (last.0 * last.0 + last.1 * last.1 + last.2 * last.2).squareRoot()
        #expect(abs(norm - 1) < 0.3, "a handheld device at rest-ish reads about 1 g")
        #expect(last.2 < -0.5, "held screen up: gravity along −z")
        #expect(!listing.motion.isAccelerometerActive)
    }

    @Test func motionGraphsPushesAtTheSliderIntervalThenStops() {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let listing = MotionGraphsListing(queue: queue)
        listing.sliderValue = 2
        listing.startUpdates()
        #expect(abs(listing.motionManager.accelerometerUpdateInterval - 0.02) < 1e-9)
        Thread.sleep(forTimeInterval: 0.5)
        listing.stopUpdates()
        queue.waitUntilAllOperationsAreFinished()
        let count = listing.lock.withLock { listing.graphed.count }
        #expect((15...35).contains(count), "about 25 samples in 0.5 s at 50 Hz, got \(count)")
        Thread.sleep(forTimeInterval: 0.1)
        #expect(listing.lock.withLock { listing.graphed.count } == count, "nothing after stop")
    }

    @Test func gyroPushedToAQueue() {
        let listing = GyroListing()
        listing.startGyros()
        Thread.sleep(forTimeInterval: 0.4)
        listing.stopGyros()
        listing.queue.waitUntilAllOperationsAreFinished()
        let rates = listing.lock.withLock { listing.rates }
        #expect(rates.count >= 10)
        #expect(rates.allSatisfy { $0.isFinite && $0 < 5 })
    }

    @Test func deviceMotionPulledInTheMagneticNorthFrame() {
        let listing = DeviceMotionListing()
        #expect(listing.motion.isDeviceMotionAvailable)
        listing.startDeviceMotion()
        spinRunLoop(0.5)
        listing.timer?.invalidate()
        #expect(listing.motion.attitudeReferenceFrame == .xMagneticNorthZVertical)
        #expect(listing.attitudes.count >= 10)
        #expect(listing.attitudes.allSatisfy { abs($0.pitch) <= .pi / 2 && abs($0.roll) <= .pi && abs($0.yaw) <= .pi })
        listing.motion.stopDeviceMotionUpdates()
    }

    @Test func queuedDeviceMotionHasACompassHeading() {
        let listing = QueuedDeviceMotionListing()
        listing.startQueuedUpdates()
        Thread.sleep(forTimeInterval: 0.4)
        listing.motion.stopDeviceMotionUpdates()
        listing.queue.waitUntilAllOperationsAreFinished()
        let headings = listing.lock.withLock { listing.headings }
        #expect(headings.count >= 10)
        #expect(headings.allSatisfy { (0..<360).contains($0) })
    }

    @Test func referenceAttitudeMakesTheCurrentAttitudeRelative() {
        let listing = ReferenceAttitudeListing()
        listing.motion.startDeviceMotionUpdates()
        var waited = 0
        while listing.motion.deviceMotion == nil && waited < 200 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        listing.captureReference()
        #expect(listing.referenceAttitude != nil)
        let relative = listing.relativeAttitude()
        #expect(relative != nil)
        // Within a few milliseconds of the reference, a hand barely moves.
        if let r = relative {
            #expect(abs(r.roll) < 0.2 && abs(r.pitch) < 0.2 && abs(r.yaw) < 0.2)
        }
        listing.motion.stopDeviceMotionUpdates()
    }
}
