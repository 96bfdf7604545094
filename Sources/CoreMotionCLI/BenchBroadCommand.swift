import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionFusion

/// `coremotion bench broad DIR`: accuracy of the fusion filter on BROAD trials with the benchmark's metric.
///
/// BROAD: D. Laidig, M. Caruso, A. Cereatti, T. Seel, "BROAD—A Benchmark for Robust Inertial Orientation
/// Estimation", Data 6(7):72, 2021 (CC-BY-4.0).
public struct BenchBroadCommand: ParsableCommand {
    /// The command's name, help and discussion.
    public static let configuration = CommandConfiguration(
        commandName: "broad",
        abstract: "Score the fusion filter on BROAD trials (total / heading / inclination RMSE, degrees).",
        discussion: """
            Runs the filter over every DIR/*.csv trial and prints each trial's RMSE and the mean over trials. \
            9D estimates are judged on the total error, 6D (--no-magnetometer) on the inclination. \
            BROAD: Laidig, Caruso, Cereatti, Seel, Data 6(7):72, 2021, CC-BY-4.0.
            """
    )

    @Argument(help: "Directory of BROAD compact CSV trials.")
    var directory: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Flag(name: .customLong("no-magnetometer"), help: "6D: do not fuse the magnetometer.")
    var noMagnetometer = false

    @Flag(help: "Use the non-causal offline smoother.")
    var offline = false

    @Option(name: .customLong("parameter"), help: "Override a filter parameter: NAME=VALUE (repeatable).")
    var parameterOverrides: [String] = []

    /// Creates the command with default options (ArgumentParser fills them in).
    public init() {}

    struct Report: Codable {
        var mode: String
        var offline: Bool
        var trials: [String: BroadErrors]
        var mean: BroadErrors
    }

    /// Runs the command. Errors are reported by ArgumentParser.
    public func run() throws {
        let url = URL(fileURLWithPath: directory)
        var parameters = offline ? AttitudeSmoother.defaultParameters : AttitudeFilterParameters()
        for o in parameterOverrides where !parameters.apply(override: o) {
            throw ValidationError("unknown parameter or bad value: \(o)")
        }
        let runner = BroadRunner(parameters: parameters, usesMagnetometer: !noMagnetometer, offline: offline)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".csv") }.sorted()
        guard !names.isEmpty else { throw ValidationError("no .csv trials in \(directory)") }
        var results: [(String, BroadErrors)] = []
        for name in names {
            let trial = try BroadTrial(contentsOf: url.appendingPathComponent(name))
            let e = try runner.score(trial)
            results.append((trial.name, e))
            if !json {
                print("\(trial.name.padding(toLength: 46, withPad: " ", startingAt: 0)) "
                    + "\(fmt(e.total)) \(fmt(e.heading)) \(fmt(e.inclination))")
            }
        }
        let mean = BroadErrors.mean(results.map(\.1))
        if json {
            let report = Report(mode: noMagnetometer ? "6D" : "9D", offline: offline,
                                trials: Dictionary(uniqueKeysWithValues: results), mean: mean)
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(report), as: UTF8.self))
        } else {
            print("mean over \(results.count) trials (\(noMagnetometer ? "6D" : "9D")\(offline ? ", offline" : "")): "
                + "total \(fmt(mean.total))°  heading \(fmt(mean.heading))°  inclination \(fmt(mean.inclination))°")
        }
    }

    private func fmt(_ x: Double) -> String { String(format: "%7.3f", x) }
}
