// libFuzzer entry point for every parser of OpenCoreMotion that reads outside input.
//
// One binary, one target per run, chosen by FUZZ_TARGET (see Fuzz/run and Fuzz/README.md). Each
// target feeds the bytes to a parser and checks what must hold for any input: no crash, no trap,
// no sanitizer report, and the invariants below (a parsed value prints and parses back the same,
// decoded samples are finite or exactly what the bytes say). A violated invariant calls
// fatalError, which libFuzzer reports as a crash with the input saved.
import Foundation
import MotionFusion
import MotionSources
@testable import MotionSourcesLinux
import MotionSourcesLinuxTesting

/// The targets, by name.
let fuzzTargets: [String: @Sendable ([UInt8]) -> Void] = recordingTargets.merging([
    "sysfs": fuzzSysfs,
    "mountmatrix": fuzzMountMatrix,
    "hwdb": fuzzHwdb,
    "evdev": fuzzEvdev,
    "iio": fuzzIIO,
    "control": fuzzControl,
]) { a, _ in a }.merging(mqttTargets) { a, _ in a }.merging(phoneTargets) { a, _ in a }

nonisolated(unsafe) var selectedTarget: (@Sendable ([UInt8]) -> Void)?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> Int32 {
    let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? ""
    if name == "list" {
        print(fuzzTargets.keys.sorted().joined(separator: "\n"))
        exit(0)
    }
    guard let target = fuzzTargets[name] else {
        FileHandle.standardError.write(Data("FUZZ_TARGET must be one of: \(fuzzTargets.keys.sorted().joined(separator: ", "))\n".utf8))
        exit(2)
    }
    selectedTarget = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget?(bytes)
    return 0
}

func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant: " + message()) }
}

/// Bytes as text the way the readers see a file: UTF-8 with invalid sequences repaired.
func text(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

// MARK: - sysfs values

func fuzzSysfs(_ bytes: [UInt8]) {
    let t = text(bytes)
    let trimmed = SysfsValue.trimmed(t)
    require(SysfsValue.trimmed(trimmed) == trimmed, "trimmed is idempotent")
    if let d = SysfsValue.double(t) { require(d.isFinite, "double() is finite: \(d)") }
    if let i = SysfsValue.integer(t), let d = SysfsValue.double(t) { _ = Double(i) - d }
    if let ds = SysfsValue.doubles(t) { require(ds.allSatisfy(\.isFinite), "doubles() are finite") }
    _ = IIOScanType(parsing: t).map { type in
        require(IIOScanType(parsing: type.description) == type, "scan type \(type) prints and parses back")
        var buffer = [UInt8](repeating: 0xA5, count: type.totalBytes + 8)
        for (i, b) in bytes.prefix(buffer.count).enumerated() { buffer[i] = b }
        _ = buffer.withUnsafeBytes { type.decode($0, at: 0) }
    }
}

// MARK: - mount matrices

func fuzzMountMatrix(_ bytes: [UInt8]) {
    let t = text(bytes)
    guard let m = MountMatrix(parsing: t) else { return }
    require(m.rows.count == 3, "three rows")
    require(m.rows.allSatisfy { $0.x.isFinite && $0.y.isFinite && $0.z.isFinite }, "finite entries")
    _ = m.determinant
    _ = m.isOrthonormal
    if let back = MountMatrix(parsing: m.description) {
        require(back == m, "\(m) prints and parses back")
    } else {
        fatalError("invariant: \(m.description) does not parse back")
    }
    _ = m.apply(Vector3(0.1, -9.8, 0.3))
}

// MARK: - hwdb

func fuzzHwdb(_ bytes: [UInt8]) {
    let t = text(bytes)
    let hwdb = SensorHwdb(parsing: t)
    for key in ["sensor:modalias:acpi:BOSC0200:BOSC0200:dmi:bvnLENOVO:pnThinkPad", "sensor:modalias:platform:HID-SENSOR-200073:dmi:",
                "", String(t.prefix(64))] {
        for (k, v) in hwdb.properties(forKey: key) {
            if k.hasSuffix("MOUNT_MATRIX") { _ = MountMatrix(parsing: v) }
        }
    }
    _ = SensorHwdb.lookupKey(label: String(t.prefix(8)), parentModalias: String(t.prefix(32)), dmiModalias: String(t.suffix(32)))
}

// MARK: - evdev

func fuzzEvdev(_ bytes: [UInt8]) {
    let events = InputEvent.decode(bytes)
    require(events.count == bytes.count / InputEvent.byteSize, "one event per \(InputEvent.byteSize) bytes")
    for e in events { require(e.time.isFinite, "finite time") }
    let again = InputEvent.decode(InputEvent.encode(events))
    require(again.count == events.count, "encode/decode keeps the count")
    for (a, b) in zip(events, again) {
        require(a.type == b.type && a.code == b.code && a.value == b.value, "encode/decode keeps type, code and value")
    }
}

// MARK: - IIO: sysfs attributes then buffer bytes

/// The input is `attr=value` lines (a device's sysfs attributes, paths relative to the device
/// directory), a NUL byte, then the bytes read from `/dev/iio:device0`, fed in chunks whose sizes
/// come from the bytes themselves.
func fuzzIIO(_ bytes: [UInt8]) {
    let split = bytes.firstIndex(of: 0) ?? bytes.endIndex
    let header = text(bytes[..<split])
    let payload = Array(bytes[min(split + 1, bytes.endIndex)...])
    let fs = InMemoryLinuxFileSystem()
    let dir = "/sys/bus/iio/devices/iio:device0"
    for line in header.split(separator: "\n").prefix(64) {
        guard let eq = line.firstIndex(of: "=") else { continue }
        let name = line[..<eq].filter { $0 != "." }
        guard !name.isEmpty, name.count < 80 else { continue }
        fs.setFile(dir + "/" + name, String(line[line.index(after: eq)...]) + "\n", writable: true)
    }
    fs.setFile(dir + "/dev", "240:0\n")
    _ = fs.addDevice("/dev/iio:device0")
    let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
    for outcome in IIODiscovery.scan(options) {
        guard case .device(let device) = outcome else { continue }
        for kinds: Set<SensorKind> in [[.accelerometer], [.accelerometer, .gyro, .magnetometer]] {
            var decoder = IIOScanDecoder(device: device, kinds: kinds)
            var out: [(timestampNs: Int64, sample: RawSample)] = []
            var i = 0
            var step = 1
            while i < payload.count {
                step = 1 + (Int(payload[i]) + step * 7) % 64
                let end = min(i + step, payload.count)
                decoder.feed(Array(payload[i..<end]), clockOffsetNs: 0, arrival: 100, interval: 0.01, into: &out)
                i = end
            }
            let size = decoder.layout.scanSize
            if size > 0 {
                require(out.count == (payload.count / size) * decoder.routes.count, "one sample per complete scan and sensor")
            }
            if payload.count >= size, size > 0 {
                _ = payload.withUnsafeBytes { decoder.decodeRaw(UnsafeRawBufferPointer(rebasing: $0[0..<size])) }
            }
        }
    }
}

// MARK: - dashboard control messages

func fuzzControl(_ bytes: [UInt8]) {
    let t = text(bytes)
    switch DashboardControlParser.parse(t) {
    case .success(let request):
        if case .interval(let ms) = request.control {
            require((DashboardLimits.minimumIntervalMilliseconds...DashboardLimits.maximumIntervalMilliseconds).contains(ms),
                    "interval in range: \(ms)")
        }
        if case .filter(let f) = request.control {
            require(f.factor.isFinite && f.factor >= DashboardLimits.minimumFilterFactor && f.factor <= DashboardLimits.maximumFilterFactor,
                    "filter factor in range: \(f.factor)")
        }
    case .failure(let error):
        require(!error.message.isEmpty, "an error says why")
    }
}
