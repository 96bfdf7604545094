import ArgumentParser
import Foundation
import OpenCoreMotion

struct SensorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensors",
        abstract: "List the motion sources found, with their sensors, rates and ranges."
    )

    @OptionGroup var sourceOptions: SourceOptions

    func run() async throws {
        var sources: [any SensorSource] = []
        if sourceOptions.source != nil {
            sources.append(try sourceOptions.resolve())
        } else {
            if let env = ProcessInfo.processInfo.environment["COREMOTION_SOURCE"], !env.isEmpty {
                sources.append(try sourceOptions.resolve(defaultSpec: env))
            }
            sources.append(SimulatedDevice(scenario: .handheld))
        }
        print(sources.map { Self.describe($0.info) }.joined(separator: "\n\n"))
    }

    /// The listing of one source: a title line, one line per sensor, then its details.
    static func describe(_ info: SourceInfo) -> String {
        var lines = ["\(info.identifier)  \(info.name)"]
        for sensor in SensorKind.allCases {
            guard let cap = info.sensors[sensor] else { continue }
            let unit = switch sensor {
            case .accelerometer: "g"
            case .gyro: "rad/s"
            case .magnetometer: "µT"
            }
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
        return lines.joined(separator: "\n")
    }

    static func format(_ x: Double) -> String {
        if x == x.rounded(), abs(x) < 1e9 { return String(Int(x)) }
        return String(format: "%.4g", x)
    }
}
