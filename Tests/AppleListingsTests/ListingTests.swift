import Foundation
import MotionTestSupport
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

/// Gives `queue` a serial dispatch queue of its own to run on, returned to be kept alive (an
/// `OperationQueue` does not retain its `underlyingQueue`). A plain `OperationQueue` runs on
/// libdispatch's global pool, one thread per CPU, which the other suites' work fills on a loaded
/// machine; samples still waiting when a listing stops are dropped (as Core Motion drops them), so
/// there a listing counted 0 or 2 of the 25 samples of 0.5 s. A serial queue without target runs on the
/// overcommit pool, which starts a thread when none is free. Apple's listings keep their queues; the
/// test only says where they run.
func runsOnAThreadOfItsOwn(_ queue: OperationQueue, _ label: String) -> DispatchQueue {
    let backing = DispatchQueue(label: label)
    queue.underlyingQueue = backing
    return backing
}

/// Hands a listing to the thread of ``offThePool(_:)``, which alone uses it until it returns.
final class HandedOver<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

@Suite(.serialized) struct AppleListingTests {
    init() { _ = simulatorSelected }

    @Test func accelerometerPulledByATimer() async throws {
        let listing = AccelerometerListing()
        #expect(listing.motion.isAccelerometerAvailable)
        // The listing's timer runs on the run loop of the thread that starts it: a thread of the test's
        // own, not one of the dispatch pool's (one per CPU) that the test's task runs on.
        let handed = HandedOver(listing)
        try await offThePool {
            handed.value.startAccelerometers()
            spinRunLoop(0.5)
            handed.value.stopAccelerometers()
        }
        #expect(listing.readings.count >= 10)
        let last = listing.readings.last!
        let norm = (last.0 * last.0 + last.1 * last.1 + last.2 * last.2).squareRoot()
        #expect(abs(norm - 1) < 0.3, "a handheld device at rest-ish reads about 1 g")
        #expect(last.2 < -0.5, "held screen up: gravity along −z")
        #expect(!listing.motion.isAccelerometerActive)
    }

    @Test func motionGraphsPushesAtTheSliderIntervalThenStops() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let backing = runsOnAThreadOfItsOwn(queue, "MotionGraphsListing")
        defer { withExtendedLifetime(backing) {} }
        let listing = MotionGraphsListing(queue: queue)
        listing.sliderValue = 2
        listing.startUpdates()
        #expect(abs(listing.motionManager.accelerometerUpdateInterval - 0.02) < 1e-9)
        // The 0.5 s is measured: slept on a thread of the test's own, which wakes on time however busy
        // the dispatch pool (the test's task could resume late, and more samples be counted).
        let handed = HandedOver(listing)
        try await offThePool {
            Thread.sleep(forTimeInterval: 0.5)
            handed.value.stopUpdates()
        }
        #expect(await drained(queue))
        let count = listing.lock.withLock { listing.graphed.count }
        #expect((15...35).contains(count), "about 25 samples in 0.5 s at 50 Hz, got \(count)")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(listing.lock.withLock { listing.graphed.count } == count, "nothing after stop")
    }

    @Test func gyroPushedToAQueue() async throws {
        let listing = GyroListing()
        let backing = runsOnAThreadOfItsOwn(listing.queue, "GyroListing")
        defer { withExtendedLifetime(backing) {} }
        listing.startGyros()
        try await Task.sleep(nanoseconds: 400_000_000)
        listing.stopGyros()
        #expect(await drained(listing.queue))
        let rates = listing.lock.withLock { listing.rates }
        #expect(rates.count >= 10)
        #expect(rates.allSatisfy { $0.isFinite && $0 < 5 })
    }

    @Test func deviceMotionPulledInTheMagneticNorthFrame() async throws {
        let listing = DeviceMotionListing()
        #expect(listing.motion.isDeviceMotionAvailable)
        // The timer runs on the run loop of the thread that starts it (see accelerometerPulledByATimer).
        let handed = HandedOver(listing)
        try await offThePool {
            handed.value.startDeviceMotion()
            spinRunLoop(0.5)
            handed.value.timer?.invalidate()
        }
        #expect(listing.motion.attitudeReferenceFrame == .xMagneticNorthZVertical)
        #expect(listing.attitudes.count >= 10)
        #expect(listing.attitudes.allSatisfy { abs($0.pitch) <= .pi / 2 && abs($0.roll) <= .pi && abs($0.yaw) <= .pi })
        listing.motion.stopDeviceMotionUpdates()
    }

    @Test func queuedDeviceMotionHasACompassHeading() async throws {
        let listing = QueuedDeviceMotionListing()
        let backing = runsOnAThreadOfItsOwn(listing.queue, "QueuedDeviceMotionListing")
        defer { withExtendedLifetime(backing) {} }
        listing.startQueuedUpdates()
        try await Task.sleep(nanoseconds: 400_000_000)
        listing.motion.stopDeviceMotionUpdates()
        #expect(await drained(listing.queue))
        let headings = listing.lock.withLock { listing.headings }
        #expect(headings.count >= 10)
        #expect(headings.allSatisfy { (0..<360).contains($0) })
    }

    @Test func referenceAttitudeMakesTheCurrentAttitudeRelative() async {
        let listing = ReferenceAttitudeListing()
        listing.motion.startDeviceMotionUpdates()
        _ = await eventually(60) { listing.motion.deviceMotion != nil }
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
