import Testing
import Foundation
import MotionSources
import MotionFusion
@testable import MotionSourcesLinux
import OpenCoreMotion

@Suite struct LinuxFaultsThroughManagerTests {
    final class Box: @unchecked Sendable {
        let lock = NSLock()
        var data: [CMAccelerometerData] = []
        var errors: [NSError] = []
    }

    /// Unplugging the buffered device mid-stream: the handler gets one CMErrorDomain error,
    /// updates stop, the samples delivered before stay delivered, and nothing crashes.
    @Test func unplugReachesTheHandlerAsCMError() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.01
        let box = Box()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        manager.startAccelerometerUpdates(to: queue) { data, error in
            box.lock.withLock {
                if let data { box.data.append(data) }
                if let error { box.errors.append(error as NSError) }
            }
        }
        let scan = try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin")
        // Pushed from a thread of its own as soon as the node is open (see onceOpened).
        try await onceOpened(node) {
            var scans: [UInt8] = []
            let base = LinuxClock.monotonicNs()
            for i in 0..<5 {
                var s = scan
                withUnsafeBytes(of: (base + Int64(i) * 20_000_000).littleEndian) { for k in 0..<8 { s[16 + k] = $0[k] } }
                scans += s
            }
            node.push(scans)
        }
        try await waitUntil { box.lock.withLock { box.data.count } == 5 }
        fs.removeTree("/sys/devices/platform/HID-SENSOR-200073.3.auto")
        node.unplug()
        try await waitUntil { box.lock.withLock { !box.errors.isEmpty } }
        try await waitUntil { !manager.isAccelerometerActive }
        let (data, errors) = box.lock.withLock { (box.data, box.errors) }
        #expect(data.count == 5)
        #expect(errors.count == 1)
        #expect(errors.first?.domain == CMErrorDomain)
        #expect(errors.first?.code == Int(CMErrorNotAvailable.rawValue))
        #expect(abs(data[0].acceleration.y - (-919 / 9.80665)) < 1e-9)
        manager.stopAccelerometerUpdates()
    }

    /// A node this process may not open: the error names the file and the fix.
    @Test func evdevPermissionDeniedNamesTheFix() throws {
        let (id, _) = try Evtest.joycon()
        struct Denied: EvdevOpener {
            func open(_ path: String) throws(LinuxIOError) -> any EvdevDevice { throw LinuxIOError(code: EACCES, path: path, operation: "open") }
        }
        let source = EvdevSource(node: id, opener: Denied())
        #expect {
            try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: { _ in })
        } throws: { error in
            guard let e = error as? SourceError else { return false }
            return e.kind == .permissionDenied && e.path == "/dev/input/event7" && e.message.contains("'input' group")
        }
    }

    /// The handheld mount matrices InputPlumber ships (another real source of quirks) all parse
    /// as rotations or reflections once their rows are joined.
    @Test func inputPlumberMatricesParse() throws {
        let text = try Fixtures.text("mount-matrices/inputplumber_handheld-imu-mount-matrices.tsv")
        var parsed = 0
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") && !line.hasPrefix("file\t") {
            let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cells.count >= 6, !cells[3].isEmpty else { continue }
            let rows = cells[3...5].map { $0.replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "") }
            let m = try #require(MountMatrix(parsing: rows.joined(separator: ";")), "\(line)")
            #expect(m.isOrthonormal, "\(cells[0])")
            parsed += 1
        }
        #expect(parsed == 17)
    }
}
