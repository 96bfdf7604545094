import Foundation
import Testing

@Suite struct SensorsPressureTests {
    @Test func listsIIOPressureSensorsFromASysfsCopy() async throws {
        let root = NSTemporaryDirectory() + "cm-sys-\(UUID().uuidString)"
        let dir = root + "/bus/iio/devices/iio:device0"
        let raw = root + "/bus/iio/devices/iio:device1"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: true)
        try "bmp280\n".write(toFile: dir + "/name", atomically: true, encoding: .utf8)
        try "100.51\n".write(toFile: dir + "/in_pressure_input", atomically: true, encoding: .utf8)
        try "lps22hb\n".write(toFile: raw + "/name", atomically: true, encoding: .utf8)
        try "4096000\n".write(toFile: raw + "/in_pressure_raw", atomically: true, encoding: .utf8)
        try "0.000024414\n".write(toFile: raw + "/in_pressure_scale", atomically: true, encoding: .utf8)
        let r = try await CLI.run(["sensors", "--sysfs-root", root, "--dev-root", root + "/dev"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("iio:bmp280  pressure sensor bmp280 (\(dir))"))
        #expect(lines.contains("  pressure       kPa (in_pressure_input)  now 100.510 kPa"))
        #expect(lines.contains { $0.hasPrefix("  pressure       kPa (in_pressure_raw × 2.4414e-05)  now 100.000 kPa") || $0.contains("now 100.000 kPa") })
    }
}
