import ArgumentParser
import Foundation
import MotionFusion

/// `coremotion steps INPUT`: the steps, cadence and distance of a recording's accelerometer.
package struct StepsCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "steps",
        abstract: "Count the steps of a recording (with cadence and distance).",
        discussion: """
            Reads the accelerometer rows of INPUT (timestamp,sensor,x,y,z in g, as `coremotion stream --sensor raw` \
            writes) and runs CMPedometer's step detector over them. Distance uses the step-length model \
            L = height × (0.18 × cadence + 0.091) (cadence in steps/s).
            """
    )

    @Argument(help: "The recording (CSV).")
    var input: String

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(parsing: .unconditional, help: "The walker's height in metres, for the step length (0.5–2.5).", transform: OptionValue.number(0.5...2.5, unit: "metres"))
    var height: Double = 1.70

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    struct Report: Codable {
        var steps: Int
        var distance: Double
        var cadence: Double?
        var averageActivePace: Double?
        var activeTime: Double
        var duration: Double
        var samples: Int
    }

    /// Runs the command.
    package func run() throws {
        let rec = try AccelerometerInput(path: input)
        var pedometer = PedometerAccumulator(lengthModel: StepLengthModel(height: height))
        for i in rec.t.indices {
            pedometer.process(timestamp: rec.t[i], x: rec.x[i], y: rec.y[i], z: rec.z[i])
        }
        let duration = (rec.t.last ?? 0) - (rec.t.first ?? 0)
        let cadence = pedometer.activeTime > 0 ? Double(pedometer.steps) / pedometer.activeTime : nil
        let report = Report(steps: pedometer.steps, distance: pedometer.distance, cadence: cadence,
                            averageActivePace: pedometer.averageActivePace, activeTime: pedometer.activeTime,
                            duration: duration, samples: rec.t.count)
        if json {
            try printJSON(report)
        } else {
            var line = "\(report.steps) steps, \(String(format: "%.1f", report.distance)) m"
            if let cadence { line += String(format: ", cadence %.2f steps/s (%.0f /min)", cadence, cadence * 60) }
            line += String(format: ", walking %.1f s of %.1f s", report.activeTime, duration)
            print(line)
        }
    }
}
