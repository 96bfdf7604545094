import MotionTestSupport
import Testing
import Foundation
@testable import MotionSourcesLinux

/// End to end under umockdev: the real `open`, `write`, `poll` and `read` path of the buffered IIO
/// source, against a device described from the HID fixture and a script replaying the real
/// capture. umockdev (Debian package `umockdev`) is required: CI installs it (.ci/apt-packages),
/// and without it this test fails rather than passing silently.
@Suite struct UmockdevEndToEndTests {
    /// The umockdev device description of iio-sensor-proxy's buffer test device, from the layout sidecar.
    static func deviceDescription() throws -> String {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: LinuxFixtures.url("iio/iio-sensor-proxy_iio-buffer-accel.layout.json"))) as! [String: Any]
        let attrs = json["device_sysfs_attributes"] as! [String: String]
        var lines = ["P: /devices/platform/HID-SENSOR-200073.3.auto/iio:device0", "N: iio:device0",
                     "E: DEVNAME=/dev/iio:device0", "E: SUBSYSTEM=iio", "A: dev=250:0", "A: current_timestamp_clock=realtime\\n",
                     // The raw attributes hold the first scan's values: polling would only ever see "portrait".
                     "A: in_accel_x_raw=103", "A: in_accel_y_raw=-919", "A: in_accel_z_raw=-385"]
        for (k, v) in attrs.sorted(by: { $0.key < $1.key }) { lines.append("A: \(k)=\(v)") }
        // The hub's own trigger, as hid-sensor-accel-3d registers it: a triggered buffer with no trigger
        // to attach never fills on a real kernel, and the source polls such a device instead.
        let trigger = (json["extra_iio_device"] as? [String: String])?["trigger0/name"] ?? "accel_3d-dev0"
        lines += ["", "P: /devices/platform/HID-SENSOR-200073.3.auto/trigger0", "E: SUBSYSTEM=iio", "A: name=\(trigger)"]
        return lines.joined(separator: "\n") + "\n\n"
    }

    /// A umockdev script whose reads return the 15 real scans, re-stamped on `CLOCK_MONOTONIC` from
    /// `base` ns, 30 ms apart, the first due ``firstScanDelayMs`` after the script loads. Escaping per
    /// umockdev's script-format.txt, as umockdev really reads it:
    /// bytes below 32 as `^` + (b + 64), `^` as "^`", everything else (the space included) verbatim.
    static func script(base: Int64) throws -> Data {
        var bytes = try LinuxFixtures.bytes("iio/iio-sensor-proxy_orientation-left-up.bin")
        for i in 0..<15 {
            withUnsafeBytes(of: (base + Int64(i) * 30_000_000).littleEndian) { for k in 0..<8 { bytes[i * 24 + 16 + k] = $0[k] } }
        }
        var out = Data()
        for i in 0..<15 {
            out.append(contentsOf: Array((i == 0 ? "r \(firstScanDelayMs) " : "r 30 ").utf8))
            for b in bytes[(i * 24)..<((i + 1) * 24)] {
                if b == UInt8(ascii: "^") { out.append(contentsOf: [UInt8(ascii: "^"), UInt8(ascii: "`")]) }
                else if b < 32 { out.append(contentsOf: [UInt8(ascii: "^"), b + 64]) }
                else { out.append(b) }
            }
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// The first scan is due this long after umockdev loads the script (its delays count from the
    /// previous operation, the first from the load, before `coremotion` has started), and every scan is
    /// stamped one second after it is due. A scan queued before the source's first read is then at most
    /// 1 s ahead of that read, which the source accepts, and no scan comes more than 2 s after the buffer
    /// is enabled (the source would give up on the buffer). So any startup up to 2.9 s works. With 700 ms
    /// and stamps 5 s ahead, a `coremotion` that took 1.2 s to start under load found eleven scans queued,
    /// stamped 3.8 s in its future, and rightly dropped them as another clock's.
    static let firstScanDelayMs = 1_900

    static func which(_ tool: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    @Test func bufferedCaptureRunsThroughTheRealSyscalls() async throws {
        guard let umockdevRun = Self.which("umockdev-run") else {
            Issue.record("umockdev-run is not installed: apt-get install umockdev (listed in .ci/apt-packages)")
            return
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cm-umockdev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = dir.appendingPathComponent("accel.umockdev")
        let script = dir.appendingPathComponent("accel.script")
        try Self.deviceDescription().write(to: device, atomically: true, encoding: .utf8)
        let base = LinuxClock.monotonicNs() + Int64(Self.firstScanDelayMs + 1_000) * 1_000_000
        try Self.script(base: base).write(to: script)

        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "COREMOTION_SOURCE")
        env.removeValue(forKey: "COREMOTION_SYSFS_ROOT")
        env.removeValue(forKey: "COREMOTION_DEV_ROOT")
        env["COREMOTION_IIO_TRACE"] = "1"   // shown only if the test fails
        // Awaited, its pipes read on threads of their own: the test holds no thread of the shared pool.
        // Started at once (`limited: false`), not after a wait for one of `ChildProcess.slots`: the
        // scans are stamped from now.
        let r = try await ChildProcess.run(URL(fileURLWithPath: umockdevRun),
                                           ["--device", device.path, "--script", "/dev/iio:device0=\(script.path)", "--",
                                            "timeout", "30", CLI.executable.path, "orientation", "--source", "iio", "--count", "2"],
                                           environment: env, limited: false)
        let stdout = r.stdout, stderr = r.stderr
        let changes = stdout.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        // The capture starts upright and ends with the left edge up: only the buffer carries that.
        #expect(changes == ["portrait", "landscapeRight"], "scans stamped from \(Double(base) / 1e9)\nstdout: \(stdout)\nstderr: \(stderr)")
    }
}

/// The evdev path under umockdev: the recorded uinput accelerometer of iio-sensor-proxy's tests
/// (device description and `EVIOCGABS` ioctl recording, both verbatim fixtures) and a script of
/// `input_event`s, so the real `open`, ioctls, `poll` and `read` of ``EvdevSource`` run.
@Suite struct UmockdevEvdevEndToEndTests {
    static func event(_ t: Double, _ type: UInt16, _ code: UInt16, _ value: Int32) -> [UInt8] {
        InputEvent.encode([InputEvent(time: t, type: type, code: code, value: value)])
    }

    @Test func evdevNodeRunsThroughTheRealSyscalls() async throws {
        guard let umockdevRun = UmockdevEndToEndTests.which("umockdev-run") else {
            Issue.record("umockdev-run is not installed: apt-get install umockdev (listed in .ci/apt-packages)")
            return
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cm-umockdev-ev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // One retry, only when the run printed nothing at all (seen once in CI while Chromium and the
        // other umockdev test loaded both cores); the orientations decided are asserted exactly.
        var stdout = "", stderr = ""
        for _ in 0..<2 where stdout.isEmpty {
            // Upright (y = −256, the IIO convention of non-controller accelerometers), then the left edge up.
            let t = LinuxClock.monotonic() + 1
            let upright = Self.event(t, 3, 0, 0) + Self.event(t, 3, 1, -256) + Self.event(t, 3, 2, 0) + Self.event(t, 0, 0, 0)
            let leftUp = Self.event(t + 0.2, 3, 0, 256) + Self.event(t + 0.2, 3, 1, 0) + Self.event(t + 0.2, 0, 0, 0)
            var script = Data()
            for (delay, bytes) in [(500, upright), (300, leftUp)] {
                script.append(contentsOf: Array("r \(delay) ".utf8))
                for b in bytes {
                    if b == UInt8(ascii: "^") { script.append(contentsOf: [UInt8(ascii: "^"), UInt8(ascii: "`")]) }
                    else if b < 32 { script.append(contentsOf: [UInt8(ascii: "^"), b + 64]) }
                    else { script.append(b) }
                }
                script.append(UInt8(ascii: "\n"))
            }
            let scriptURL = dir.appendingPathComponent("events.script")
            try script.write(to: scriptURL)
            var env = ProcessInfo.processInfo.environment
            for k in ["COREMOTION_SOURCE", "COREMOTION_SYSFS_ROOT", "COREMOTION_DEV_ROOT"] { env.removeValue(forKey: k) }
            let r = try await ChildProcess.run(URL(fileURLWithPath: umockdevRun),
                                               ["--device", LinuxFixtures.url("umockdev/iio-sensor-proxy_input-accel-device.umockdev").path,
                                                "--ioctl", "/dev/input/event4=\(LinuxFixtures.url("umockdev/iio-sensor-proxy_input-accel-capture.ioctl").path)",
                                                "--script", "/dev/input/event4=\(scriptURL.path)", "--",
                                                "timeout", "30", CLI.executable.path, "orientation", "--source", "evdev", "--count", "2"],
                                               environment: env, limited: false)  // at once: the events are stamped from now
            stdout = r.stdout
            stderr = r.stderr
        }
        let changes = stdout.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(changes == ["portrait", "landscapeRight"], "stdout: \(stdout)\nstderr: \(stderr)")
    }
}

/// The Linux fixtures in ../shared/fixtures/linux, found from this file's location.
enum LinuxFixtures {
    static let linux = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("../shared/fixtures/linux").standardized
    static func url(_ relative: String) -> URL { linux.appendingPathComponent(relative) }
    static func bytes(_ relative: String) throws -> [UInt8] { Array(try Data(contentsOf: url(relative))) }
}
