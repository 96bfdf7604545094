import MotionSourcesLinuxTesting
import MotionTestSupport
import Testing
import Foundation
import MotionSources
import MotionFusion
@testable import MotionSourcesLinux

@Suite struct IIOScanTypeTests {
    @Test func parsesTypeStrings() {
        #expect(IIOScanType(parsing: "le:s16/32>>0") == IIOScanType(signed: true, bits: 16, storageBits: 32))
        #expect(IIOScanType(parsing: "be:u12/16>>4") == IIOScanType(bigEndian: true, signed: false, bits: 12, storageBits: 16, shift: 4))
        #expect(IIOScanType(parsing: "le:s14/16X3>>2")?.totalBytes == 6)
        #expect(IIOScanType(parsing: "le:s64/64>>0")?.description == "le:s64/64>>0")
        #expect(IIOScanType(parsing: "xx:s16/32>>0") == nil)
        #expect(IIOScanType(parsing: "le:s33/32>>0") == nil)
        #expect(IIOScanType(parsing: "le:s16/24>>0") == nil)
    }

    @Test func decodesShiftMaskAndSign() {
        let be12 = IIOScanType(parsing: "be:s12/16>>4")!
        // 0xFFF0 >> 4 = 0xFFF → −1 in 12 bits.
        #expect([UInt8]([0xFF, 0xF0]).withUnsafeBytes { be12.decode($0, at: 0) } == -1)
        #expect([UInt8]([0x7F, 0xF5]).withUnsafeBytes { be12.decode($0, at: 0) } == 2047)
        let u = IIOScanType(parsing: "le:u16/32>>0")!
        #expect([UInt8]([0x69, 0xFC, 0x7F, 0xFE]).withUnsafeBytes { u.decode($0, at: 0) } == 0xFC69)
        let s = IIOScanType(parsing: "le:s16/32>>0")!
        // The HID slot: low half is y (−919), the upper half holds z: masked away.
        #expect([UInt8]([0x69, 0xFC, 0x7F, 0xFE]).withUnsafeBytes { s.decode($0, at: 0) } == -919)
    }

    @Test func layoutAlignsAndPutsTheTimestampLast() {
        let s16 = IIOScanType(parsing: "le:s16/16>>0")!, ts = IIOScanType(parsing: "le:s64/64>>0")!
        let l = IIOScanLayout(channels: [("timestamp", 3, ts), ("accel_x", 0, s16), ("accel_y", 1, s16), ("accel_z", 2, s16)])
        #expect(l.slots.map(\.offset) == [0, 2, 4, 8])
        #expect(l.scanSize == 16)
        let hid = IIOScanLayout(channels: [("accel_x", 0, IIOScanType(parsing: "le:s16/32>>0")!), ("accel_y", 1, IIOScanType(parsing: "le:s16/32>>0")!),
                                           ("accel_z", 2, IIOScanType(parsing: "le:s16/32>>0")!), ("timestamp", 3, ts)])
        #expect(hid.slots.map(\.offset) == [0, 4, 8, 16])
        #expect(hid.scanSize == 24)
        let only8 = IIOScanLayout(channels: [("a", 0, IIOScanType(parsing: "le:u8/8>>0")!), ("b", 5, IIOScanType(parsing: "le:u16/16>>0")!)])
        #expect(only8.slots.map(\.offset) == [0, 2])
        #expect(only8.scanSize == 4)
    }
}

@Suite struct IIOHIDCaptureTests {
    func device() throws -> (IIODeviceDescription, InMemoryLinuxFileSystem, InMemoryDeviceNode) {
        let (fs, node) = try Fixtures.hidBufferTwin()
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let outcomes = IIODiscovery.scan(options)
        guard case .device(let d)? = outcomes.first else { Issue.record("no device: \(outcomes)"); throw CancellationError() }
        return (d, fs, node)
    }

    @Test func bothCapturesDecodeToTheCSV() throws {
        let (d, _, _) = try device()
        let rows = try Fixtures.decodedRows()
        #expect(rows.count == 16)
        for file in ["iio-sensor-proxy_orientation-normal.bin", "iio-sensor-proxy_orientation-left-up.bin"] {
            let bytes = try Fixtures.bytes("iio/" + file)
            let decoder = IIOScanDecoder(device: d, kinds: [.accelerometer])
            #expect(decoder.layout.scanSize == 24)
            #expect(bytes.count % 24 == 0)
            let expected = rows.filter { $0.file == file }
            #expect(expected.count == bytes.count / 24)
            for row in expected {
                let scan = Array(bytes[(row.scan * 24)..<((row.scan + 1) * 24)])
                let (ts, values) = scan.withUnsafeBytes { decoder.decodeRaw($0) }
                #expect(ts == row.timestampNs)
                #expect(values.map(\.value) == [row.x, row.y, row.z], "\(file) scan \(row.scan)")
            }
        }
    }

    @Test func splitReadsReassembleScans() throws {
        let (d, _, _) = try device()
        let bytes = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-left-up.bin")
        var decoder = IIOScanDecoder(device: d, kinds: [.accelerometer])
        var out: [(timestampNs: Int64, sample: RawSample)] = []
        var i = 0
        for chunk in [7, 30, 1, 100, 222] {
            decoder.feed(Array(bytes[i..<min(i + chunk, bytes.count)]), clockOffsetNs: 0, arrival: 0, interval: 0.03, into: &out)
            i += chunk
        }
        #expect(out.count == 15)
        #expect(out.map(\.timestampNs) == (try Fixtures.decodedRows()).filter { $0.file.hasSuffix("left-up.bin") }.map(\.timestampNs))
    }

    /// The sign convention: (103, −919, −385) is a laptop lid upright, leaning back. With no
    /// negation, y < 0 (upright, the gravity-vector convention iOS shares) and z < 0 (the screen
    /// faces partly up, as Core Motion's face-up z ≈ −1).
    @Test func signConventionOnTheRealCapture() throws {
        let (d, _, _) = try device()
        var decoder = IIOScanDecoder(device: d, kinds: [.accelerometer])
        var out: [(timestampNs: Int64, sample: RawSample)] = []
        decoder.feed(try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin"), clockOffsetNs: 0, arrival: 0, interval: 0, into: &out)
        let v = try #require(out.first?.sample.value)
        // No scale attribute on this test device: 1.0 m/s² per count, so /9.80665 for g.
        #expect(abs(v.y - (-919 / 9.80665)) < 1e-9)
        let n = v.normalized!
        #expect(n.y < -0.85 && n.z < -0.3 && abs(n.x) < 0.15)
        // The lid leans back by about 23° from vertical.
        let lean = atan2(-n.z, -n.y) * 180 / .pi
        #expect(lean > 15 && lean < 30)
    }

    @Test func bufferedSourceStreamsTheCaptureThroughTheStateMachine() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let got = Collected()
        // Left in the buffer from an earlier run: the capture's 2021 realtime stamps. Stale: all dropped.
        node.push(try Fixtures.bytes("iio/iio-sensor-proxy_orientation-left-up.bin"))
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 30]), sink: got.sink)
        // Fresh scans stamped now on the monotonic clock (the source set current_timestamp_clock).
        let scan = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin")
        let now = try await onceOpened(node, also: { fs.writes.contains { $0.path.hasSuffix("buffer/enable") && $0.text == "1" } }) {
            var fresh = scan
            let now = LinuxClock.monotonicNs() + 1_000_000
            withUnsafeBytes(of: now.littleEndian) { for k in 0..<8 { fresh[16 + k] = $0[k] } }
            node.push(fresh)
            return now
        }
        try await waitUntil { got.samples.count >= 1 }
        _ = try source.apply(.none, sink: got.sink)
        #expect(got.samples.count == 1)
        let s = got.samples[0]
        #expect(abs(s.timestamp - Double(now) / 1e9) < 1e-6)
        #expect(abs(s.value.x - 103 / 9.80665) < 1e-9)
        let writes = fs.writes.map { "\($0.path.split(separator: "/").suffix(2).joined(separator: "/"))=\($0.text)" }
        #expect(writes.contains("iio:device0/current_timestamp_clock=monotonic"))
        #expect(writes.contains("scan_elements/in_accel_x_en=1"))
        #expect(writes.contains("trigger/current_trigger=accel_3d-dev0"))
        #expect(writes.last == "buffer/enable=0")
    }

    /// A kernel may stamp scans while the enable write is still in progress (the trigger is attached
    /// before the driver's postenable returns; a HID hub is powered up there). Such a scan is fresh: the
    /// stale cutoff is the moment the enable write was issued, not when it returned (the writing thread
    /// may also be preempted after it returns, which under load dropped fresh scans).
    @Test func aScanStampedWhileTheBufferIsBeingEnabledIsKept() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let stamp = Locked<Int64?>(nil)
        let scan = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin")
        fs.setWriteHandler("/sys/bus/iio/devices/iio:device0/buffer/enable") { text in
            if text == "1" {
                var s = scan
                let now = LinuxClock.monotonicNs()
                withUnsafeBytes(of: now.littleEndian) { for k in 0..<8 { s[16 + k] = $0[k] } }
                stamp.withLock { $0 = now }
                node.push(s)
                usleep(20_000)   // the rest of enabling: 20 ms (on the source's thread)
            }
            return text + "\n"
        }
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 30]), sink: got.sink)
        try await waitUntil { got.samples.count >= 1 }
        _ = try source.apply(.none, sink: got.sink)
        let stamped = try #require(stamp.withLock { $0 })
        #expect(abs(got.samples[0].timestamp - Double(stamped) / 1e9) < 1e-6,
                "the scan itself, not a polled value: \(got.samples[0].timestamp) for \(Double(stamped) / 1e9)")
        #expect(node.pendingBytes == 0)
    }

    @Test func createsAnHrtimerTriggerWhenTheDeviceHasNone() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        fs.removeTree("/sys/bus/iio/devices/trigger0")
        // configfs: creating hrtimer/NAME makes the kernel register trigger NAME.
        fs.setDirectoryCreationHandler("/sys/kernel/config/iio/triggers/hrtimer") { [fs] name in
            fs.setFile("/sys/bus/iio/devices/trigger7/name", name + "\n")
            fs.setFile("/sys/bus/iio/devices/trigger7/sampling_frequency", "100\n", writable: true)
        }
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 30]), sink: { _ in })
        try await waitUntil { node.opens == 1 }
        _ = try source.apply(.none, sink: { _ in })
        let writes = fs.writes.map { "\($0.path.split(separator: "/").suffix(2).joined(separator: "/"))=\($0.text)" }
        #expect(writes.contains("trigger7/sampling_frequency=30"))
        #expect(writes.contains("trigger/current_trigger=coremotion-dev0"))
    }

    @Test func realtimeStampsAreMappedToMonotonic() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: false)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio:IIO Test Accelerometer", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 30]), sink: got.sink)
        let scan = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin")
        // Compared with the monotonic clock when the scan was stamped (was: when the test's task came
        // to check, which on a loaded machine was 10 s later).
        let stampedAt = try await onceOpened(node) {
            var fresh = scan
            let real = LinuxClock.realtimeNs()
            let monotonic = LinuxClock.monotonic()
            withUnsafeBytes(of: real.littleEndian) { for k in 0..<8 { fresh[16 + k] = $0[k] } }
            node.push(fresh)
            return monotonic
        }
        try await waitUntil { got.samples.count >= 1 }
        _ = try source.apply(.none, sink: got.sink)
        #expect(abs(got.samples[0].timestamp - stampedAt) < 0.5)
    }

    @Test func unplugFailsTheStreamAndKeepsEarlierSamples() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 30]), sink: got.sink)
        let scan = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin")
        try await onceOpened(node) {
            var scans: [UInt8] = []
            for i in 0..<3 {
                var s = scan
                withUnsafeBytes(of: (LinuxClock.monotonicNs() + Int64(i) * 1000).littleEndian) { for k in 0..<8 { s[16 + k] = $0[k] } }
                scans += s
            }
            node.push(scans)
        }
        try await waitUntil { got.samples.count == 3 }
        fs.removeTree("/sys/devices/platform/HID-SENSOR-200073.3.auto")
        node.unplug()
        try await waitUntil { got.failure != nil }
        #expect(got.failure?.kind == .deviceRemoved)
        #expect(got.samples.count == 3)
        _ = try source.apply(.none, sink: got.sink)
        // Starting again reports the removal instead of crashing.
        #expect(throws: SourceError.self) { try source.apply(SensorDemand(rates: [.accelerometer: 30]), sink: got.sink) }
    }

    @Test func bufferPermissionDeniedFallsBackToPolling() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin()
        fs.setWriteError("/sys/devices/platform/HID-SENSOR-200073.3.auto/iio:device0/buffer/enable", EACCES)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let reports = LinuxSensorDiscovery.discover(options: options)
        #expect(reports.count == 1)
        let p = try #require(reports[0].problem)
        #expect(p.kind == .permissionDenied)
        #expect(p.message.contains("buffer/enable") && p.message.contains("udev rule"))
        let got = Collected()
        _ = try reports[0].source!.apply(SensorDemand(rates: [.accelerometer: 100]), sink: got.sink)
        try await waitUntil { got.samples.count >= 2 }
        _ = try reports[0].source!.apply(.none, sink: got.sink)
        #expect(node.opens == 0)
        #expect(abs(got.samples[0].value.y - (-919 / 9.80665)) < 1e-9)
        #expect((reports[0].source as! IIOSource).modes[.accelerometer]?.hasPrefix("polling") == true)
    }
}

/// Collects sink events, thread-safely.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var _samples: [RawSample] = []
    private var _failure: SourceError?
    private var _interruptions = 0
    private var _failures = 0
    var samples: [RawSample] { lock.withLock { _samples } }
    var failure: SourceError? { lock.withLock { _failure } }
    /// `.interrupted` events so far (samples lost, the stream goes on).
    var interruptions: Int { lock.withLock { _interruptions } }
    /// `.failed` events so far (a source ends with one).
    var failures: Int { lock.withLock { _failures } }
    var sink: @Sendable (SourceEvent) -> Void {
        { [self] e in
            lock.withLock {
                switch e {
                case .sample(let s): _samples.append(s)
                case .failed(let f):
                    _failure = f
                    _failures += 1
                case .interrupted: _interruptions += 1
                case .finished: break
                }
            }
        }
    }
}

struct TimedOut: Error {}

/// Polls `condition` every 2 ms without holding a thread (a blocked thread would be one of the
/// dispatch pool's, one per CPU, that every task and plain OperationQueue shares); gives up after 60 s,
/// a bound on a failure only.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(60)
    while !condition() {
        if Date() > deadline { throw TimedOut() }
        try await Task.sleep(nanoseconds: 2_000_000)
    }
}

/// Waits until the source has opened `node` (and `also` holds), then runs `body` (which stamps and
/// pushes scans) at once, both on a thread of its own. A buffer still empty 2 s after it was enabled is
/// given up for polling (`IIOBufferedCapture.firstScanTimeout`), and a test's task resumes on the
/// dispatch pool, one thread per CPU, which on a loaded machine can take longer than that (a full run
/// of the suites beside a build: the scans came too late, TimedOut); a thread of its own wakes on time.
func onceOpened<T: Sendable>(_ node: InMemoryDeviceNode, also: @escaping @Sendable () -> Bool = { true },
                             _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await offThePool {
        let deadline = Date().addingTimeInterval(60)   // bounds a failure only
        while !(node.opens >= 1 && also()) {
            if Date() > deadline { throw TimedOut() }
            usleep(1_000)
        }
        return try body()
    }
}

@Suite struct IIOBufferedCaptureMachineTests {
    /// The state machine on its own: the actions it asks for, and what it makes of bytes.
    @Test func actionsAndOrdering() throws {
        let (fs, _) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        guard case .device(let d)? = IIODiscovery.scan(options).first else { Issue.record("no device"); return }
        var m = IIOBufferedCapture(device: d, kinds: [.accelerometer], otherEnablePaths: [], triggerName: nil, clockWritable: true, rate: 30)
        let start = m.start()
        let dir = "/sys/bus/iio/devices/iio:device0"
        #expect(start.first == .write(path: dir + "/buffer/enable", value: "0"))
        #expect(start.last == .write(path: dir + "/buffer/enable", value: "1"))
        #expect(start.contains(.write(path: dir + "/current_timestamp_clock", value: "monotonic")))
        var next: [IIOBufferedCapture.Action] = []
        for case .write(let p, _) in start { next += m.writeSucceeded(p, issuedAt: 1_000_000_000) }
        #expect(next == [.openDevice(path: "/dev/iio:device0")])
        #expect(m.timestampClock == "monotonic")
        #expect(m.deviceOpened().count == 1)
        #expect(m.state == .streaming)
        // Three scans stamped 2 s, 1.5 s (backwards: dropped) and 2.1 s.
        var bytes: [UInt8] = []
        for ts: Int64 in [2_000_000_000, 1_500_000_000, 2_100_000_000] {
            var s = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin")
            withUnsafeBytes(of: ts.littleEndian) { for k in 0..<8 { s[16 + k] = $0[k] } }
            bytes += s
        }
        let acts = m.bytesRead(bytes, clockOffsetNs: 0, arrival: 2.2)
        guard case .deliver(let samples)? = acts.first else { Issue.record("\(acts)"); return }
        #expect(samples.map(\.timestamp) == [2.0, 2.1])
        // A write refused for lack of permission falls back to polling, naming the file and the fix.
        var m2 = IIOBufferedCapture(device: d, kinds: [.accelerometer], otherEnablePaths: [], triggerName: nil, clockWritable: false, rate: 30)
        _ = m2.start()
        let fb = m2.writeFailed(dir + "/buffer/enable", LinuxIOError(code: EACCES, path: dir + "/buffer/enable", operation: "open"))
        guard case .fallBackToPolling(let reason)? = fb.first else { Issue.record("\(fb)"); return }
        #expect(reason.contains("buffer/enable") && reason.contains("udev rule"))
        // ENODEV while streaming: close and fail with deviceRemoved.
        let gone = m.readFailed(LinuxIOError(code: ENODEV, path: "/dev/iio:device0", operation: "read"))
        #expect(gone.first == .closeDevice)
        if case .fail(let e)? = gone.last { #expect(e.kind == .deviceRemoved) } else { Issue.record("\(gone)") }
    }
}

/// A buffer that never fills (a driver without an interrupt line registers no trigger: bmi160 and
/// st_lsm6dsx on i2c-stub in the VM rig) is switched off and polled instead.
@Suite struct IIOEmptyBufferTests {
    @Test func theMachineFallsBackToPollingWhenNoScanArrives() throws {
        let (fs, _) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        guard case .device(let d)? = IIODiscovery.scan(options).first else { Issue.record("no device"); return }
        var m = IIOBufferedCapture(device: d, kinds: [.accelerometer], otherEnablePaths: [], triggerName: nil, clockWritable: true, rate: 100)
        let enabledNs: Int64 = 5_000_000_000
        for case .write(let p, _) in m.start() { _ = m.writeSucceeded(p, issuedAt: enabledNs) }
        _ = m.deviceOpened()
        #expect(m.firstScanTimeout == 2)
        // Within the timeout, an empty read just reads again.
        #expect(m.bytesRead([], clockOffsetNs: 0, arrival: 6.9) == [.read(maxBytes: m.readSize, timeout: m.readTimeout)])
        let after = m.bytesRead([], clockOffsetNs: 0, arrival: 7.1)
        #expect(after.first == .closeDevice)
        #expect(after.contains(.write(path: "/sys/bus/iio/devices/iio:device0/buffer/enable", value: "0")))
        guard case .fallBackToPolling(let reason)? = after.last else { Issue.record("\(after)"); return }
        #expect(reason.contains("no scan arrived within 2 s") && reason.contains("no trigger"))
        #expect(m.state == .stopped)
    }

    @Test func aTriggeredBufferWithNoTriggerToAttachIsPolledFromTheStart() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        fs.removeTree("/sys/bus/iio/devices/trigger0")   // the driver registered none; no configfs either
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 50]), sink: got.sink)
        defer { _ = try? source.apply(.none, sink: got.sink) }
        try await waitUntil { got.samples.count >= 3 }
        #expect(node.opens == 0, "the buffer was never opened")
        #expect(!fs.writes.contains { $0.path.hasSuffix("buffer/enable") && $0.text == "1" })
    }

    @Test func anEmptyBufferIsPolledThroughTheSource() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let got = Collected()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 50]), sink: got.sink)
        defer { _ = try? source.apply(.none, sink: got.sink) }
        try await waitUntil { node.opens == 1 }
        // Nothing is pushed: after the timeout the sysfs values (the first scan's) come by polling.
        try await waitUntil { got.samples.count >= 3 }
        #expect(abs(got.samples[0].value.y - (-919 / 9.80665)) < 1e-9, "scale 1: the fixture has no in_accel_scale")
        #expect(fs.writes.last { $0.path.hasSuffix("buffer/enable") }?.text == "0")
    }
}
