import Foundation
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting

/// Paths to the real fixtures in ../shared/fixtures/linux, found from this file's location.
enum Fixtures {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let linux = packageRoot.appendingPathComponent("../shared/fixtures/linux").standardized

    static func url(_ relative: String) -> URL { linux.appendingPathComponent(relative) }
    static func text(_ relative: String) throws -> String { try String(contentsOf: url(relative), encoding: .utf8) }
    static func bytes(_ relative: String) throws -> [UInt8] { Array(try Data(contentsOf: url(relative))) }

    static var hwdb: SensorHwdb { SensorHwdb(parsing: try! text("mount-matrices/systemd-v252.39-debian_60-sensor.hwdb")) }

    /// The CSV rows of iio-sensor-proxy_buffers.decoded.csv.
    struct DecodedRow { var file: String; var scan: Int; var timestampNs: Int64; var x: Int64; var y: Int64; var z: Int64; var orientation: String }
    static func decodedRows() throws -> [DecodedRow] {
        try text("iio/iio-sensor-proxy_buffers.decoded.csv").split(whereSeparator: \.isNewline).dropFirst().map { line in
            let c = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return DecodedRow(file: c[0], scan: Int(c[1])!, timestampNs: Int64(c[2])!, x: Int64(c[3])!, y: Int64(c[4])!, z: Int64(c[5])!, orientation: c[9])
        }
    }

    /// The HID buffer test device of iio-sensor-proxy, as its layout sidecar describes it:
    /// `iio:device0` with scan elements, a writable buffer and a device node; `trigger0` exists.
    ///
    /// `accelScale`: the `in_accel_scale` attribute to add (m/s² per count). Upstream's test has none (the
    /// scale is then 1); real hid-sensor-accel-3d devices expose one, such as `0.009806650` (1 mg per count:
    /// the first scan's (103, −919, −385) is then 1.0016 g, a device at rest).
    static func hidBufferTwin(clockWritable: Bool = false, accelScale: String? = nil) throws -> (InMemoryLinuxFileSystem, InMemoryDeviceNode) {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url("iio/iio-sensor-proxy_iio-buffer-accel.layout.json"))) as! [String: Any]
        let attrs = json["device_sysfs_attributes"] as! [String: String]
        let fs = InMemoryLinuxFileSystem()
        let dir = "/sys/devices/platform/HID-SENSOR-200073.3.auto/iio:device0"
        fs.setLink("/sys/bus/iio/devices/iio:device0", to: "../../../devices/platform/HID-SENSOR-200073.3.auto/iio:device0")
        fs.setFile("/sys/devices/platform/HID-SENSOR-200073.3.auto/modalias", "platform:HID-SENSOR-200073\n")
        for (k, v) in attrs {
            let writable = k.hasSuffix("_en") || k == "buffer/enable" || k == "trigger/current_trigger"
            fs.setFile(dir + "/" + k, v + "\n", writable: writable)
        }
        // The raw attributes exist alongside the buffer (the test device has the values of the first scan).
        fs.setFile(dir + "/in_accel_x_raw", "103\n")
        fs.setFile(dir + "/in_accel_y_raw", "-919\n")
        fs.setFile(dir + "/in_accel_z_raw", "-385\n")
        if let accelScale { fs.setFile(dir + "/in_accel_scale", accelScale + "\n") }
        fs.setFile(dir + "/current_timestamp_clock", "realtime\n", writable: clockWritable)
        fs.setFile("/sys/bus/iio/devices/trigger0/name", ((json["extra_iio_device"] as! [String: String])["trigger0/name"] ?? "") + "\n")
        // The kernel lets one holder at a time open an IIO buffer's node (EBUSY otherwise).
        let node = fs.addDevice("/dev/iio:device0", exclusive: true)
        return (fs, node)
    }

    /// The HP ENVY x360 13-ag0xxx sysfs dump (AMD SFH → HID sensor hub) as a tree. The dump holds
    /// the channel attributes only; the device names (`gyro_3d`, `magn_3d`, `accel_3d`, `als`) and
    /// the parent layout under one hub are what hid-sensor-hub creates and are added here.
    static func hpEnvyTwin() throws -> InMemoryLinuxFileSystem {
        let fs = InMemoryLinuxFileSystem()
        var device: Int?
        let names = [0: ("gyro_3d", "HID-SENSOR-200076.1.auto"), 1: ("magn_3d", "HID-SENSOR-200083.2.auto"),
                     2: ("accel_3d", "HID-SENSOR-200073.0.auto"), 3: ("als", "HID-SENSOR-200041.3.auto")]
        let hub = "/sys/devices/pci0000:00/0000:00:08.1/0000:04:00.7/0020:1022:0001.0001"
        for line in try text("iio/hp-envy-x360-13-ag0xxx_amd-sfh_sysfs-dump.txt").split(separator: "\n") {
            if line.hasPrefix("$ for"), let r = line.range(of: #"iio\:device"#) {
                device = Int(String(line[r.upperBound...].prefix(1)))
                continue
            }
            guard let d = device, line.hasPrefix("in_"), let colon = line.firstIndex(of: ":") else { continue }
            let (name, parent) = names[d]!
            let dir = "\(hub)/\(parent)/iio:device\(d)"
            let valueStart = line.index(colon, offsetBy: 2, limitedBy: line.endIndex) ?? line.endIndex
            fs.setFile("\(dir)/\(line[..<colon])", String(line[valueStart...]) + "\n",
                       writable: line.contains("sampling_frequency"))
            fs.setFile("\(dir)/name", name + "\n")
            fs.setFile("\(hub)/\(parent)/modalias", "platform:\(parent.prefix(18))\n")
            fs.setLink("/sys/bus/iio/devices/iio:device\(d)", to: "\(hub)/\(parent)/iio:device\(d)")
        }
        // "cat: …: Invalid argument": these attributes exist but fail to read.
        fs.setReadError("\(hub)/HID-SENSOR-200041.3.auto/iio:device3/in_illuminance_hysteresis", EINVAL)
        return fs
    }
}
