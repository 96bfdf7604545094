import ArgumentParser
import Foundation
import MotionFusion
import MotionPhones
import MotionRecordingFormats
import MotionSourcesLinux
import OpenCoreMotion

struct SensorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensors",
        abstract: "List the motion sources found, with their sensors, rates and ranges.",
        discussion: """
            Without --source: the source named by COREMOTION_SOURCE, every IIO and evdev motion device under \
            the sysfs and device roots (usable or not, with the reason and the fix), what answers on the I2C \
            buses this user may open (the identity registers at 0x1c, 0x1e, 0x68, 0x69, 0x6a and 0x6b: MPU-6050/6500/9250, \
            LSM6DSx, LSM9DS1, BMI160; nothing is written), and the simulator.
            """
    )

    @OptionGroup var sourceOptions: SourceOptions

    @Option(parsing: .unconditional, help: "For a phone source (sensorlogger://, sensorserver://, phyphox://, sensorlog://, hyperimu://): seconds to receive before listing what the phone sends (at most 3600).", transform: OptionValue.seconds(0...3600))
    var listen: Double = 5

    func run() async throws {
        var blocks: [String] = []
        if sourceOptions.spec() != nil {
            let source = try sourceOptions.resolve()
            if let phone = source as? PhoneSource {
                blocks.append(try await Self.observe(phone, seconds: listen))
            } else {
                var block = Self.describe(source.info)
                if let spec = sourceOptions.spec(), spec.hasPrefix("replay:") {
                    block += "\n" + (try Self.recordedPressure(String(spec.dropFirst("replay:".count))))
                }
                blocks.append(block)
            }
        }
        if sourceOptions.source == nil {
            let roots = sourceOptions.roots
            let reports = LinuxSensorDiscovery.discover(sysfsRoot: roots.sysfsRoot, devRoot: roots.devRoot)
            if reports.isEmpty {
                blocks.append("no IIO or evdev motion device under \(roots.sysfsRoot) and \(roots.devRoot)")
            }
            for report in reports {
                if let source = report.source {
                    var info = source.info
                    info.details = report.description.filter { $0.0 == "status" } + info.details
                    blocks.append(Self.describe(info))
                } else {
                    blocks.append(([report.identifier + "  " + report.name] + report.description.dropFirst(2).map { "  \($0.0): \($0.1)" }).joined(separator: "\n"))
                }
            }
            blocks.append(Self.i2cListing(sysfsRoot: roots.sysfsRoot, devRoot: roots.devRoot))
            let barometers = LinuxBarometers.scan(sysfsRoot: roots.sysfsRoot)
            for sensor in barometers.sensors {
                var line = "\(sensor.identifier)  pressure sensor \(sensor.name)\n  pressure       kPa (\(sensor.valuePath.split(separator: "/").last ?? "")"
                if sensor.scale != 1 || sensor.offset != 0 { line += " × \(sensor.scale)" + (sensor.offset != 0 ? " + offset \(sensor.offset)" : "") }
                line += ")"
                if let p = try? sensor.readPressure(at: 0) { line += String(format: "  now %.3f kPa", p) }
                blocks.append(line)
            }
            for (id, error) in barometers.skipped {
                blocks.append("\(id)  pressure sensor not usable: \(error.description)")
            }
            blocks.append(Self.describe(SimulatedDevice(scenario: .handheld).info))
            blocks.append("sim:still, sim:stairs, sim:lift  simulated barometer (COREMOTION_BAROMETER=sim:SCENARIO)\n  pressure       25 Hz  kPa, 2 Pa rms noise, weather drift")
        }
        print(blocks.joined(separator: "\n\n"))
    }

    /// The I2C scan (`I2CDiscovery`): per bus, the chips found and the sources reading them, the
    /// addresses kernel drivers hold, or why nothing is there.
    static func i2cListing(sysfsRoot: String?, devRoot: String?) -> String {
        let options = LinuxDiscoveryOptions.fromEnvironment(sysfsRoot: sysfsRoot, devRoot: devRoot)
        let reports = I2CDiscovery.scan(options)
        if reports.isEmpty { return I2CDiscovery.noBusLine(options) }
        return reports.map { $0.lines.joined(separator: "\n") }.joined(separator: "\n\n")
    }

    /// The pressure line of a recording: readings, mean rate and range (kPa), or that it has none.
    static func recordedPressure(_ path: String) throws -> String {
        let track: PressureTrack?
        do throws(RecordingError) {
            track = try PressureTrack.read(path: path)
        } catch {
            throw CLIError(error.description)
        }
        guard let track, let first = track.timestamps.first, let last = track.timestamps.last else {
            return "  pressure       none in the recording"
        }
        let rate = last > first ? Double(track.count - 1) / (last - first) : 0
        return "  pressure       " + String(format: "%.1f Hz  kPa, %d readings, %.3f–%.3f kPa", rate, track.count,
                                             track.pressures.min() ?? 0, track.pressures.max() ?? 0) + " (\(track.path))"
    }

    /// The listing of one source: a title line, one line per sensor, then its details.
    static func describe(_ info: SourceInfo) -> String {
        var lines = ["\(info.identifier)  \(info.name)"]
        for sensor in SensorKind.allCases {
            guard let cap = info.sensors[sensor] else { continue }
            let unit = sensor.unit
            var line = "  " + sensor.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)
            line += cap.minimumRate == cap.maximumRate
                ? "\(format(cap.maximumRate)) Hz"
                : "\(format(cap.minimumRate))–\(format(cap.maximumRate)) Hz"
            if let range = cap.range { line += "  ±\(format(range)) \(unit)" }
            if let resolution = cap.resolution { line += "  step \(format(resolution)) \(unit)" }
            lines.append(line)
        }
        for (key, value) in info.details {
            lines.append("  \(key): \(value)")
        }
        if let line = calibrationLine(info) { lines.append(line) }
        if let line = learnedLine(info) { lines.append(line) }
        return lines.joined(separator: "\n")
    }

    /// The stored calibration of a source (``DeviceCalibrationStore``), when there is one or its file is
    /// unusable; `nil` when none is stored.
    static func calibrationLine(_ info: SourceInfo) -> String? {
        guard let store = DeviceCalibrationStore.current else { return nil }
        let identity = DeviceCalibrationStore.identity(of: info)
        do {
            guard let record = try store.load(identity) else { return nil }
            let c = record.calibration
            var parts: [String] = []
            if c.gyroBias != nil { parts.append("gyroscope bias") }
            if c.accelerometerOffset != nil { parts.append("accelerometer offset and scale") }
            if c.calibratesMagnetometer {
                parts.append("magnetometer \(c.magnetometerSoftIron == nil ? "hard iron" : "hard and soft iron") (accuracy \(DeviceCalibrationRecord.accuracyName(c.magnetometerAccuracy)))")
            }
            return "  calibration: \(parts.joined(separator: ", ")), made \(record.created) from \(record.origin) (\(store.path(for: identity)))"
        } catch {
            return "  calibration: not used: \(error.description)"
        }
    }

    /// What device-motion fusion learned about a source in earlier runs (``LearnedCalibrationRecord``), when
    /// stored or unusable; `nil` when none is stored. Shown beside the explicit calibration, which takes
    /// precedence (see ``LearnedCalibrationRecord``).
    static func learnedLine(_ info: SourceInfo) -> String? {
        guard let store = DeviceCalibrationStore.current else { return nil }
        let identity = DeviceCalibrationStore.identity(of: info)
        do {
            guard let record = try store.loadLearned(identity) else { return nil }
            let l = record.learned
            let deg = 180 / Double.pi
            let b = l.gyroBias * deg
            let v = l.gyroBiasVariance
            let sigma = max(v.x, v.y, v.z).squareRoot() * deg
            var text = "  learned: gyroscope bias " + String(format: "(%.3f, %.3f, %.3f) ± %.3f °/s", b.x, b.y, b.z, sigma)
            if l.magneticAccuracy > .uncalibrated {
                let o = l.magneticOffset
                text += String(format: ", magnetometer offset (%.1f, %.1f, %.1f) µT", o.x, o.y, o.z)
                if l.magneticGains != Vector3(1, 1, 1) {
                    text += String(format: " gains (%.3f, %.3f, %.3f)", l.magneticGains.x, l.magneticGains.y, l.magneticGains.z)
                }
                text += " (accuracy \(DeviceCalibrationRecord.accuracyName(l.magneticAccuracy)))"
            }
            let explicit = (try? store.load(identity)) ?? nil
            if record.basis != explicit?.created {
                text += "; not used: learned over another explicit calibration"
            } else if explicit?.calibration.calibratesMagnetometer == true, l.magneticAccuracy > .uncalibrated {
                text += "; the explicit magnetometer calibration takes precedence"
            }
            return text + ", saved \(record.updated) (\(store.learnedPath(for: identity)))"
        } catch {
            return "  learned: not used: \(error.description)"
        }
    }

    /// Runs a phone source for `seconds` and lists what the phone sent: sensors, measured rates, counts.
    static func observe(_ phone: PhoneSource, seconds: Double) async throws -> String {
        do {
            try phone.apply(SensorDemand(rates: [.accelerometer: 100, .gyro: 100, .magnetometer: 100])) { _ in }
        } catch {
            throw CLIError(error.description)
        }
        try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))  // safe: --listen is validated (≤ 3600 s)
        _ = try? phone.apply(.none) { _ in }
        let stats = phone.statistics
        var lines = ["\(phone.info.identifier)  \(phone.info.name)"]
        for sensor in SensorKind.motion {
            let unit = sensor.unit
            let name = "  " + sensor.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)
            if let c = stats.sensors[sensor], c.count > 0 {
                lines.append(name + (c.rate.map { String(format: "%.1f Hz measured", $0) } ?? "1 reading") + "  (\(c.count) readings, \(unit))")
            } else {
                lines.append(name + "not sent")
            }
        }
        // The phone's own estimates, in Core Motion's units and frame (see PhoneFrames).
        let extras = phone.extras
        for name in ["attitude", "gravity", "pressure"] {
            let label = "  " + name.padding(toLength: 15, withPad: " ", startingAt: 0)
            guard let l = extras.latest[name] else { lines.append(label + "not sent"); continue }
            let value: String = switch l.value {
            case .pressure(let p): String(format: "%.3f kPa", p)
            case .gravity(let g): String(format: "(%.3f, %.3f, %.3f) g", g.x, g.y, g.z)
            case .attitude(let q): String(format: "quaternion (w %.4f, x %.4f, y %.4f, z %.4f), device → north-west-up", q.w, q.x, q.y, q.z)
            }
            lines.append(label + "last \(value)  (\(l.count) readings)")
        }
        for (key, value) in phone.info.details { lines.append("  \(key): \(value)") }
        lines.append("  heard from: \(stats.peer ?? "nobody in \(format(seconds)) s")")
        if let platform = stats.platform { lines.append("  phone platform: \(platform)") }
        lines.append("  messages: \(stats.messages), malformed: \(stats.malformed), empty: \(stats.empty), oversized: \(stats.oversized), repeated: \(stats.stale)")
        return lines.joined(separator: "\n")
    }

    static func format(_ x: Double) -> String {
        if x == x.rounded(), abs(x) < 1e9 { return String(Int(x)) }
        return String(format: "%.4g", x)
    }
}
