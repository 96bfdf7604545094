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
    /// written to the device node at the batch frequency come back as one batch holding exactly the
    /// first second of them, with the kernel's timestamps and the scan's values.
    @Test func scansAtTheBatchFrequencyComeBackAsOneSecondBatches() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true, accelScale: "0.009806650")
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let manager = CMBatchedSensorManager(source: source)
        let rate = manager.accelerometerDataFrequency
        #expect(rate > 0)
        let got = Batches()
        manager.startAccelerometerUpdates { batch, error in got.add(batch, error) }
        #expect(manager.isAccelerometerActive)
        var enabled = false
        for _ in 0..<500 where !enabled {
            enabled = fs.writes.contains { $0.path.hasSuffix("buffer/enable") && $0.text == "1" } && node.opens == 1
            if !enabled { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        #expect(enabled, "the buffer is enabled and the node opened")
        // Stamps from now on: the first scan alone, so the source's first read (which drops scans more
        // than 1 s ahead as another clock's) is past before the rest, up to 1.5 s ahead, arrive.
        let scan = Array(try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin").prefix(24))
        let t0 = LinuxClock.monotonicNs() + 1_000_000
        let period = 1_000_000_000 / Int64(rate)
        let count = rate * 3 / 2
        let stamped = { (k: Int) -> [UInt8] in
            var s = scan
            withUnsafeBytes(of: (t0 + Int64(k) * period).littleEndian) { for b in 0..<8 { s[16 + b] = $0[b] } }
            return s
        }
        node.push(stamped(0))
        for _ in 0..<500 where node.pendingBytes > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        node.push((1..<count).flatMap(stamped))
        for _ in 0..<500 where got.all.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        manager.stopAccelerometerUpdates()
        #expect(got.failures.isEmpty, "\(got.failures)")
        let batch = try #require(got.all.first)
        #expect(batch.count == rate, "the first second: \(batch.count) of \(count) scans at \(rate) Hz")
        let expected = (0..<batch.count).map { Double(t0 + Int64($0) * period) / 1e9 }
        #expect(zip(batch.map(\.timestamp), expected).allSatisfy { abs($0 - $1) < 1e-6 }, "the kernel's stamps")
        let first = batch[0].acceleration
        #expect(batch.allSatisfy { $0.acceleration.x == first.x && $0.acceleration.y == first.y && $0.acceleration.z == first.z })
        // in_accel_scale 0.009806650 m/s² per count is 1 mg per count: the scan's (103, −919, −385) is
        // (0.103, 0.919, 0.385) g in magnitude per axis (the sign is the driver's convention), 1.0016 g in all.
        #expect(abs(abs(first.x) - 0.103) < 1e-9 && abs(abs(first.y) - 0.919) < 1e-9 && abs(abs(first.z) - 0.385) < 1e-9, "\(first)")
        let norm = (first.x * first.x + first.y * first.y + first.z * first.z).squareRoot()
        #expect(abs(norm - 1.0016) < 0.001, "a device at rest reads about 1 g: \(norm)")
    }
}
