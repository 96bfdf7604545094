import Foundation
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting
import OpenCoreMotion
import Testing

/// Collected batches, filled on the manager's queue.
private final class Batches: @unchecked Sendable {
    // Sendable: every access is under `lock`; the samples are the package's immutable ones.
    private let lock = NSLock()
    private var batches: [[CMAccelerometerData]] = []
    private var errors: [any Error] = []
    func add(_ batch: [CMAccelerometerData]?, _ error: (any Error)?) {
        lock.withLock {
            if let batch { batches.append(batch) }
            if let error { errors.append(error) }
        }
    }
    var all: [[CMAccelerometerData]] { lock.withLock { batches } }
    var failures: [any Error] { lock.withLock { errors } }
}

@Suite struct BatchedOnBufferedIIOTests {
    /// CMBatchedSensorManager on the in-memory twin of iio-sensor-proxy's HID buffer device: scans
    /// stamped at the batch frequency come back as one batch holding exactly the first second of them,
    /// with the kernel's timestamps and the scan's values; through the handler, and through the async
    /// sequence Apple's listing iterates (`for try await … in manager.accelerometerUpdates()` in a task).
    ///
    /// The twin fills its buffer the way a kernel's trigger does: the first scan is queued while the
    /// buffer is being enabled, on the thread enabling it. Pushed from this test's task instead, it could
    /// come after the source's first-scan deadline (2 s) when the cooperative pool is busy with other
    /// suites; the source then rightly takes the buffer for one that never fills and polls sysfs (seen
    /// once in four loaded runs: a batch of polled samples).
    @Test(arguments: [false, true])
    func scansAtTheBatchFrequencyComeBackAsOneSecondBatches(throughTheAsyncSequence: Bool) async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true, accelScale: "0.009806650")
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let manager = CMBatchedSensorManager(source: source)
        let rate = manager.accelerometerDataFrequency
        try #require(rate > 0)
        let scan = Array(try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin").prefix(24))
        let period = 1_000_000_000 / Int64(rate)
        let stamped = { @Sendable (t0: Int64, k: Int) -> [UInt8] in
            var s = scan
            withUnsafeBytes(of: (t0 + Int64(k) * period).littleEndian) { for b in 0..<8 { s[16 + b] = $0[b] } }
            return s
        }
        // The first enable queues scan 0, stamped now on the monotonic clock the source asked for.
        let firstStamp = Locked<Int64?>(nil)
        fs.setWriteHandler("/sys/bus/iio/devices/iio:device0/buffer/enable") { text in
            if text == "1" {
                firstStamp.withLock { t0 in
                    guard t0 == nil else { return }
                    t0 = LinuxClock.monotonicNs()
                    node.push(stamped(t0!, 0))
                }
            }
            return text + "\n"
        }
        let got = Batches()
        var reader: Task<Void, Never>?
        if throughTheAsyncSequence {
            // The manager is thread-safe by construction but, like Apple's, not `Sendable`.
            nonisolated(unsafe) let shared = manager
            reader = Task {
                do {
                    for try await batch in shared.accelerometerUpdates() { got.add(batch, nil) }
                } catch {
                    got.add(nil, error)
                }
            }
        } else {
            manager.startAccelerometerUpdates { batch, error in got.add(batch, error) }
            #expect(manager.isAccelerometerActive)
        }
        // Once the source has read scan 0 (its first read drops scans more than 1 s ahead as another
        // clock's), the rest up to 1.5 s after it: enough to close the first one-second batch.
        var t0: Int64?
        for _ in 0..<6_000 {   // gives up after 60 s, on a failure only
            t0 = firstStamp.withLock { $0 }
            if t0 != nil && node.opens == 1 && node.pendingBytes == 0 { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let start = try #require(t0, "the buffer is enabled")
        let count = rate * 3 / 2
        node.push((1..<count).flatMap { stamped(start, $0) })
        for _ in 0..<6_000 where got.all.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }   // 60 s at most
        if let reader {
            reader.cancel()
            await reader.value
        } else {
            manager.stopAccelerometerUpdates()
        }
        #expect(node.opens == 1, "one buffered session")
        #expect(got.failures.isEmpty, "\(got.failures)")
        let batch = try #require(got.all.first)
        #expect(batch.count == rate, "the first second: \(batch.count) of \(count) scans at \(rate) Hz")
        let expected = (0..<batch.count).map { Double(start + Int64($0) * period) / 1e9 }
        #expect(zip(batch.map(\.timestamp), expected).allSatisfy { abs($0 - $1) < 1e-6 },
                "the kernel's stamps: \(batch.prefix(3).map(\.timestamp)) for \(expected.prefix(3))")
        let first = batch[0].acceleration
        #expect(batch.allSatisfy { $0.acceleration.x == first.x && $0.acceleration.y == first.y && $0.acceleration.z == first.z })
        // in_accel_scale 0.009806650 m/s² per count is 1 mg per count: the scan's (103, −919, −385) is
        // (0.103, 0.919, 0.385) g in magnitude per axis (the sign is the driver's convention), 1.0016 g in all.
        #expect(abs(abs(first.x) - 0.103) < 1e-9 && abs(abs(first.y) - 0.919) < 1e-9 && abs(abs(first.z) - 0.385) < 1e-9, "\(first)")
        let norm = (first.x * first.x + first.y * first.y + first.z * first.z).squareRoot()
        #expect(abs(norm - 1.0016) < 0.001, "a device at rest reads about 1 g: \(norm)")
    }

    /// A buffer that never fills (its trigger never fires) is handed to polling by the source after
    /// its first-scan deadline; the manager still delivers what a user expects: one-second batches of
    /// the sysfs values, in time order, with the times they were read.
    @Test func aBufferThatNeverFillsStillGivesOneSecondBatchesOfPolledValues() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true, accelScale: "0.009806650")
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let manager = CMBatchedSensorManager(source: source)
        let before = LinuxClock.monotonic()
        let got = Batches()
        manager.startAccelerometerUpdates { batch, error in got.add(batch, error) }
        for _ in 0..<6_000 where got.all.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }   // 60 s at most
        manager.stopAccelerometerUpdates()
        let after = LinuxClock.monotonic()
        #expect(node.opens == 1, "the buffer was tried first")
        #expect(got.failures.isEmpty, "\(got.failures)")
        let batch = try #require(got.all.first)
        let stamps = batch.map(\.timestamp)
        #expect(batch.count > 1)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "in time order")
        #expect(stamps.allSatisfy { $0 > before && $0 < after }, "read during the run, on the monotonic clock")
        #expect(stamps.last! - stamps.first! < CMBatchedSensorManager.batchDuration, "at most one second")
        let a = batch[0].acceleration
        #expect(abs(abs(a.x) - 0.103) < 1e-9 && abs(abs(a.y) - 0.919) < 1e-9 && abs(abs(a.z) - 0.385) < 1e-9, "the sysfs values: \(a)")
    }
}
