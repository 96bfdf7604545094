import Foundation
import Testing
import MotionTestSupport
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

/// Suspends until every operation added to the serial `queue` so far has run, and every operation those
/// added as they ran (without blocking a thread).
func drained(_ queue: OperationQueue) async -> Bool {
    final class Flag: @unchecked Sendable {  // Sendable: `ran` is only touched under `lock`.
        let lock = NSLock()
        var ran = false
    }
    // Barriers: on a concurrent queue too, each runs only after every operation added before it. Two,
    // one after the other: an operation running when the first is added may add another as it ends.
    for _ in 0..<2 {
        let flag = Flag()
        queue.addBarrierBlock { flag.lock.withLock { flag.ran = true } }
        guard await eventually(60, { flag.lock.withLock { flag.ran } }) else { return false }
    }
    return true
}

/// Suspends (without blocking a thread) until `condition` holds or `seconds` pass; `seconds` only
/// bounds a failure (at least 60 here: a wait that holds returns at once).
func eventually(_ seconds: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

@Suite(.serialized) struct BatchedSensorListingTests {
    init() { _ = simulatorSelected }

    /// Set in the process ``runsInAProcessOfItsOwn()`` starts: only there does the listing itself run.
    static let inChildProcess = ProcessInfo.processInfo.environment["COREMOTION_BATCHED_LISTING_CHILD"] == "1"

    /// The listing runs in a process of its own, as an app would: this test binary again, filtered to
    /// ``streamsOneSecondBatchesFromTheSimulator()``. In the whole suite's process, on two cores, it twice
    /// received no batch in 180 s (stops 28 and 31) while passing alone and beside every in-process
    /// neighbour that shares its default source; the other suites' blocking tests starving its tasks was
    /// the hypothesis, never confirmed. Apple's code is a process's only user of Core Motion; so it is here.
    @Test(.enabled(if: !inChildProcess))
    func runsInAProcessOfItsOwn() async throws {
        var env = ProcessInfo.processInfo.environment
        env["COREMOTION_BATCHED_LISTING_CHILD"] = "1"
        env["COREMOTION_SOURCE"] = "sim:handheld"
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: CommandLine.arguments[0]),
            ["--testing-library", "swift-testing", "--filter", "streamsOneSecondBatchesFromTheSimulator"],
            environment: env, timeout: 240)
        let output = result.stdout + result.stderr
        #expect(!result.timedOut && !result.terminatedBySignal && result.status == 0, "\(output)")
        // A filter that matched nothing would also exit 0: the listing must have run and passed.
        #expect(output.contains("streamsOneSecondBatchesFromTheSimulator() passed"), "\(output)")
        #expect(output.contains("batched listing: motion 200 samples"), "\(output)")
    }

    /// On the simulator (COREMOTION_SOURCE=sim:handheld) the listing receives one-second batches: 200
    /// device-motion samples and `accelerometerDataFrequency` accelerometer samples each, in time order,
    /// with gravity down the held screen. Runs only in the process ``runsInAProcessOfItsOwn()`` starts.
    @Test(.enabled(if: inChildProcess))
    func streamsOneSecondBatchesFromTheSimulator() async {
        #expect(CMBatchedSensorManager.isAccelerometerSupported)
        #expect(CMBatchedSensorManager.isDeviceMotionSupported)
        let listing = BatchedSensorListing()
        listing.startStreaming()
        let got = await eventually(60) {
            listing.lock.withLock { listing.motionBatches.count >= 2 && listing.accelerometerBatches.count >= 2 }
        }
        listing.stopStreaming()
        #expect(got)
        let (motion, accel, errors) = listing.lock.withLock {
            (listing.motionBatches, listing.accelerometerBatches, listing.errors)
        }
        #expect(errors.isEmpty, "\(errors)")
        let rate = listing.manager.deviceMotionDataFrequency
        let accelRate = listing.manager.accelerometerDataFrequency
        #expect(rate == 200)
        for batch in motion.prefix(2) {
            #expect(abs(batch.count - rate) <= rate / 20, "about one second at \(rate) Hz: \(batch.count)")
            #expect(zip(batch, batch.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
            #expect(batch.allSatisfy { $0.gravity.z < -0.5 }, "held screen up: gravity along −z")
        }
        for batch in accel.prefix(2) {
            #expect(abs(batch.count - accelRate) <= accelRate / 20, "about one second at \(accelRate) Hz: \(batch.count)")
            #expect(zip(batch, batch.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
        }
        let gaps = { (stamps: [[Double]]) -> String in
            stamps.map { b in "\(b.count) samples \(b.first ?? 0)…\(b.last ?? 0)" }.joined(separator: "; ")
        }
        print("batched listing: motion \(gaps(motion.map { $0.map(\.timestamp) })); accelerometer \(gaps(accel.map { $0.map(\.timestamp) }))")
        if motion.count >= 2, let end = motion[0].last, let next = motion[1].first {
            #expect(next.timestamp > end.timestamp, "consecutive batches follow on")
            #expect(next.timestamp - end.timestamp < 2.5 / Double(rate), "no sample lost between batches")
        }
    }
}

/// Headphones that report motion, as an iOS test would stub them: available, connecting at once and
/// delivering the given head attitudes.
final class StubHeadphones: CMHeadphoneMotionManager {
    let yaws: [Double]
    init(yaws: [Double]) { self.yaws = yaws; super.init() }
    override var isDeviceMotionAvailable: Bool { true }
    override func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMHeadphoneDeviceMotionHandler) {
        delegate?.headphoneMotionManagerDidConnect(self)
        for (i, yaw) in yaws.enumerated() {
            let motion = StubHeadMotion(yaw: yaw, timestamp: Double(i) * 0.04)
            queue.addOperation { handler(motion, nil) }
        }
    }
}

final class StubHeadMotion: CMDeviceMotion {
    let stub: CMAttitude
    let time: TimeInterval
    init(yaw: Double, timestamp: TimeInterval) {
        stub = CMAttitude(quaternion: CMQuaternion(x: 0, y: 0, z: sin(yaw / 2), w: cos(yaw / 2)))
        time = timestamp
        super.init()
    }
    required init?(coder: NSCoder) { nil }
    override var attitude: CMAttitude { stub }
    override var timestamp: TimeInterval { time }
}

@Suite struct HeadphoneMotionListingTests {
    /// Linux has no headphone that reports motion: the listing's guard returns before it sets the
    /// delegate or starts updates, and nothing is delivered.
    @Test func stopsAtTheAvailabilityCheckOnLinux() async {
        let listing = HeadphoneMotionListing()
        #expect(!listing.manager.isDeviceMotionAvailable)
        #expect(CMHeadphoneMotionManager.authorizationStatus() == .restricted)
        listing.startTracking()
        #expect(!listing.started)
        #expect(listing.manager.delegate == nil)
        listing.queue.maxConcurrentOperationCount = 1
        #expect(await drained(listing.queue))
        #expect(listing.lock.withLock { listing.poses.isEmpty && listing.errors.isEmpty && listing.connectEvents == 0 })
        listing.stopTracking()
        #expect(!listing.manager.isDeviceMotionActive)
    }

    /// Started anyway (skipping the guard), the manager reports `CMErrorNotAvailable` once to the handler.
    @Test func updatesReportNotAvailableOnLinux() async {
        let manager = CMHeadphoneMotionManager()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let lock = NSLock()
        var codes: [Int] = []
        var samples = 0
        manager.startDeviceMotionUpdates(to: queue) { motion, error in
            lock.withLock {
                if motion != nil { samples += 1 }
                if let error = error as NSError?, error.domain == CMErrorDomain { codes.append(error.code) }
            }
        }
        #expect(await eventually(60) { lock.withLock { !codes.isEmpty } })
        #expect(await drained(queue))
        #expect(lock.withLock { codes } == [Int(CMErrorNotAvailable.rawValue)])
        #expect(lock.withLock { samples } == 0)
    }

    /// With stubbed headphones the listing runs as on iOS: the delegate hears the connection and each
    /// pose is the head's attitude relative to the first (yaw 0.1 rad, then 0.4 and 0.6: 0.3 and 0.5).
    @Test func tracksTheHeadRelativeToTheStartingPoseWithStubbedHeadphones() async {
        let listing = HeadphoneMotionListing()
        listing.manager = StubHeadphones(yaws: [0.1, 0.4, 0.6])
        listing.queue.maxConcurrentOperationCount = 1
        listing.startTracking()
        #expect(listing.started)
        #expect(await eventually(60) { listing.lock.withLock { listing.poses.count == 3 } })
        let (poses, connects) = listing.lock.withLock { (listing.poses, listing.connectEvents) }
        #expect(connects == 1)
        let yaws = poses.map(\.yaw)
        #expect(yaws.count == 3)
        if yaws.count == 3 {
            #expect(abs(yaws[0] - 0.1) < 1e-9, "the starting pose itself is left as it is")
            #expect(abs(yaws[1] - 0.3) < 1e-9, "\(yaws)")
            #expect(abs(yaws[2] - 0.5) < 1e-9, "\(yaws)")
        }
    }
}
