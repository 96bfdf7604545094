import Testing
import Foundation
import MotionSources
import MotionFusion
@testable import MotionSourcesLinux
@testable import OpenCoreMotion

@Suite struct OrientationTests {
    static let names: [String: UIDeviceOrientation] = [
        "normal": .portrait, "bottom-up": .portraitUpsideDown, "left-up": .landscapeRight, "right-up": .landscapeLeft,
    ]

    /// The decoded HID captures, fed in order (the previous orientation carried within each file,
    /// as the CSV's column says), decide as iio-sensor-proxy did, scan by scan — including scan 7,
    /// where both tilts pass 35° and the previous orientation is kept.
    @Test func decidesAsIioSensorProxyOnTheRealCaptures() throws {
        let rows = try Fixtures.decodedRows()
        var estimators: [String: DeviceOrientationEstimator] = [:]
        for row in rows {
            var e = estimators[row.file] ?? DeviceOrientationEstimator()
            // No scale attribute on the capture's device: 1 m/s² per count.
            let o = e.update(Vector3(Double(row.x), Double(row.y), Double(row.z)) / 9.80665)
            estimators[row.file] = e
            #expect(o == Self.names[row.orientation], "\(row.file) scan \(row.scan): \(o) vs \(row.orientation)")
        }
        #expect(estimators["iio-sensor-proxy_orientation-left-up.bin"]?.orientation == .landscapeRight)
    }

    @Test func hysteresisAndFlat() {
        var e = DeviceOrientationEstimator()
        #expect(e.orientation == .unknown)
        // Diagonal first: undecidable, stays unknown.
        #expect(e.update(Vector3(0.7, -0.7, 0)) == .unknown)
        #expect(e.update(Vector3(0, -1, 0)) == .portrait)
        // 40° toward landscape: y still passes (50°), x passes (40°) → ambiguous, keep portrait.
        let r = 40 * Double.pi / 180
        #expect(e.update(Vector3(sin(r), -cos(r), 0)) == .portrait)
        #expect(e.update(Vector3(-1, 0, 0)) == .landscapeLeft)
        #expect(e.update(Vector3(1, 0.1, 0)) == .landscapeRight)
        #expect(e.update(Vector3(0, 1, 0)) == .portraitUpsideDown)
        // Tilted 40° back from flat: z within 50° of vertical but not 30°: keep.
        #expect(e.update(Vector3(0, -sin(0.55), -cos(0.55))) == .portraitUpsideDown)
        #expect(e.update(Vector3(0, -0.1, -1)) == .faceUp)
        #expect(e.update(Vector3(0.05, 0, 1)) == .faceDown)
        #expect(e.update(Vector3(0, 0, 0)) == .faceDown)
        #expect(e.update(Vector3(.nan, 0, 0)) == .faceDown)
    }

    @Test func bufferedCaptureThroughTheSourceGivesLandscapeRight() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 30]), sink: got.sink)
        // Re-stamp the 15 real scans with fresh monotonic times, 30 ms apart, as soon as the node is
        // open (see onceOpened).
        let scans = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-left-up.bin")
        try await onceOpened(node) {
            var bytes = scans
            let base = LinuxClock.monotonicNs()
            for i in 0..<15 {
                withUnsafeBytes(of: (base + Int64(i) * 30_000_000).littleEndian) { for k in 0..<8 { bytes[i * 24 + 16 + k] = $0[k] } }
            }
            node.push(bytes)
        }
        try await waitUntil { got.samples.count == 15 }
        _ = try source.apply(.none, sink: got.sink)
        var e = DeviceOrientationEstimator()
        let sequence = got.samples.map { e.update($0.value) }
        let expected = try Fixtures.decodedRows().filter { $0.file.hasSuffix("left-up.bin") }.map { Self.names[$0.orientation]! }
        #expect(sequence == expected)
    }
}

@Suite(.serialized) struct UIKitCompatTests {
    @Test func uiDeviceOrientationNestsAndNotifies() async throws {
        let source = ManualSource(sensors: [.accelerometer])
        let device = UIDevice(source: source)
        #expect(device.orientation == .unknown)
        source.emit(RawSample(sensor: .accelerometer, timestamp: 1, value: Vector3(0, -1, 0)))
        #expect(device.orientation == .unknown, "unknown until begun")
        let posted = Collected()
        let observer = NotificationCenter.default.addObserver(forName: UIDevice.orientationDidChangeNotification, object: device, queue: nil) { _ in
            posted.sink(.sample(RawSample(sensor: .accelerometer, timestamp: 0, value: .zero)))
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        var updates = device.orientationUpdates.makeAsyncIterator()
        device.beginGeneratingDeviceOrientationNotifications()
        device.beginGeneratingDeviceOrientationNotifications()
        #expect(device.isGeneratingDeviceOrientationNotifications)
        try await waitUntil { source.demand.rates[.accelerometer] != nil }
        source.emit(RawSample(sensor: .accelerometer, timestamp: 2, value: Vector3(0, -1, 0)))
        #expect(await updates.next() == .portrait)
        #expect(device.orientation == .portrait)
        source.emit(RawSample(sensor: .accelerometer, timestamp: 3, value: Vector3(-1, 0, 0)))
        #expect(await updates.next() == .landscapeLeft)
        try await waitUntil { posted.samples.count == 2 }
        device.endGeneratingDeviceOrientationNotifications()
        #expect(device.isGeneratingDeviceOrientationNotifications, "begin/end nest")
        #expect(device.orientation == .landscapeLeft)
        device.endGeneratingDeviceOrientationNotifications()
        device.endGeneratingDeviceOrientationNotifications()   // extra: ignored
        #expect(device.orientation == .unknown)
        try await waitUntil { source.demand.isEmpty }
    }

    final class Delegate: UIAccelerometerDelegate, @unchecked Sendable {
        let lock = NSLock()
        var readings: [(UIAcceleration, Bool)] = []
        func accelerometer(_ accelerometer: UIAccelerometer, didAccelerate acceleration: UIAcceleration) {
            let onMain = OperationQueue.current === OperationQueue.main
            lock.withLock { readings.append((acceleration, onMain)) }
        }
        var count: Int { lock.withLock { readings.count } }
    }

    @Test func uiAccelerometerDeliversOnTheMainQueueAndStopsWithNilDelegate() async throws {
        let source = ManualSource(sensors: [.accelerometer])
        let acc = UIAccelerometer(source: source)
        acc.updateInterval = 0.05
        let delegate = Delegate()
        acc.delegate = delegate
        try await waitUntil { source.demand.rates[.accelerometer] != nil }
        #expect(source.demand.rates[.accelerometer] == 20)
        source.emit(RawSample(sensor: .accelerometer, timestamp: 10, value: Vector3(0.1, -0.9, -0.2)))
        try await waitUntil { delegate.count > 0 }
        #expect(delegate.count == 1)
        let (a, onMain) = delegate.lock.withLock { delegate.readings[0] }
        #expect(onMain)
        #expect(a.x == 0.1 && a.y == -0.9 && a.z == -0.2 && a.timestamp == 10)
        acc.delegate = nil
        try await waitUntil { source.demand.isEmpty }
        #expect(!acc.isActive)
    }

    @Test func shakeBeginsEndsAndIgnoresBumpsAndWalking() {
        var d = ShakeDetector()
        var events: [ShakeDetector.Event] = []
        var t = 0.0
        func run(seconds: Double, _ f: (Double) -> Vector3) {
            let end = t + seconds
            while t < end {
                if let e = d.update(f(t), timestamp: t) { events.append(e) }
                t += 0.01
            }
        }
        // At rest, then walking-like bounce (0.3 g at 2 Hz): nothing.
        run(seconds: 1) { _ in Vector3(0, -1, 0) }
        run(seconds: 2) { t in Vector3(0, -1 + 0.3 * sin(2 * .pi * 2 * t), 0) }
        // One bump: nothing.
        run(seconds: 0.05) { _ in Vector3(2, -1, 0) }
        run(seconds: 1) { _ in Vector3(0, -1, 0) }
        #expect(events.isEmpty)
        // A shake: ±2 g along x at 4 Hz for 1 s, then rest.
        let start = t
        run(seconds: 1) { t in Vector3(2 * sin(2 * .pi * 4 * (t - start)), -1, 0) }
        run(seconds: 1) { _ in Vector3(0, -1, 0) }
        #expect(events.count == 2)
        guard events.count == 2, case .began(let b) = events[0], case .ended(let e) = events[1] else { return }
        #expect(b > start && b < start + 0.5)
        #expect(e > start + 1 && e < start + 1.6)
        // A shake that never stops is cancelled.
        events.removeAll()
        let s2 = t
        run(seconds: 6) { t in Vector3(2 * sin(2 * .pi * 4 * (t - s2)), -1, 0) }
        #expect(events.first.map { if case .began = $0 { true } else { false } } == true)
        #expect(events.contains { if case .cancelled = $0 { true } else { false } })
    }
}
