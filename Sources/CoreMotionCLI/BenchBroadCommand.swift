import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionFusion

/// `coremotion bench broad DIR`: accuracy of the fusion filter on BROAD trials with the benchmark's metric.
///
/// BROAD: D. Laidig, M. Caruso, A. Cereatti, T. Seel, "BROAD—A Benchmark for Robust Inertial Orientation
/// Estimation", Data 6(7):72, 2021 (CC-BY-4.0).
package struct BenchBroadCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "broad",
        abstract: "Score the fusion filter on BROAD trials (total / heading / inclination RMSE, degrees).",
        discussion: """
            Runs the filter over every DIR/*.csv trial and prints each trial's RMSE and the mean over trials. \
            9D estimates are judged on the total error, 6D (--no-magnetometer) on the inclination. \
            With --cross-validate it instead runs all four measures (causal 9D total, causal 6D inclination, \
            offline 9D total, offline 6D inclination) and reports, per trial, the in-sample figure (default \
            parameters) and the leave-one-trial-out figure: each trial scored with the parameter values \
            (from --grid, or the tuned parameters' default grid) that do best on the other trials. \
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

    // Unconditional: a negative component (-60,90,-40) is a value, not an option.
    @Option(name: .customLong("hard-iron"), parsing: .unconditional,
            help: "Add a constant hard-iron offset X,Y,Z (µT, sensor frame) to every magnetometer sample, as an uncalibrated phone magnetometer reads.")
    var hardIron: String?

    @Option(name: .customLong("soft-iron"), parsing: .unconditional,
            help: "Multiply every magnetometer sample by the symmetric matrix XX,YY,ZZ[,XY,XZ,YZ] (dimensionless) before adding --hard-iron, as a phone's soft iron distorts the field.")
    var softIron: String?

    @Option(name: .customLong("gyro-bias"), parsing: .unconditional,
            help: "Add a constant bias X,Y,Z (°/s, sensor frame) to every gyroscope sample, as a phone's raw gyroscope reads.")
    var gyroBias: String?

    @Flag(name: .customLong("cross-validate"),
          help: "Leave-one-trial-out cross-validation of the tuned parameters, all four measures.")
    var crossValidate = false

    @Option(name: .customLong("grid"),
            help: "With --cross-validate: NAME=V1,V2,... values to choose among (repeatable; replaces the default grid).")
    var grid: [String] = []

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    struct Report: Codable {
        var mode: String
        var offline: Bool
        var trials: [String: BroadErrors]
        var mean: BroadErrors
    }

    /// Runs the command. Errors are reported by ArgumentParser.
    package func run() throws {
        if crossValidate { return try runCrossValidation() }
        guard grid.isEmpty else { throw ValidationError("--grid chooses among values in --cross-validate; without it use --parameter NAME=VALUE") }
        let url = URL(fileURLWithPath: directory)
        var parameters = offline ? AttitudeSmoother.defaultParameters : AttitudeFilterParameters()
        for o in parameterOverrides where !parameters.apply(override: o) {
            throw ValidationError("unknown parameter or bad value: \(o)")
        }
        let runner = BroadRunner(parameters: parameters, usesMagnetometer: !noMagnetometer, offline: offline)
        let offset = try hardIronOffset()
        let distortion = try softIronMatrix()
        let rateOffset = try gyroBiasOffset()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".csv") }.sorted()
        guard !names.isEmpty else { throw ValidationError("no .csv trials in \(directory)") }
        var results: [(String, BroadErrors)] = []
        for name in names {
            var trial = try BroadTrial(contentsOf: url.appendingPathComponent(name))
            if let distortion { trial.magnetometer = trial.magnetometer.map { distortion * $0 } }
            if let offset { trial.magnetometer = trial.magnetometer.map { $0 + offset } }
            if let rateOffset { trial.gyro = trial.gyro.map { $0 + rateOffset } }
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
            try printJSON(report, pretty: true)
        } else {
            print("mean over \(results.count) trials (\(noMagnetometer ? "6D" : "9D")\(offline ? ", offline" : "")): "
                + "total \(fmt(mean.total))°  heading \(fmt(mean.heading))°  inclination \(fmt(mean.inclination))°")
        }
    }

    /// Parses `--hard-iron X,Y,Z`; `nil` without it.
    func hardIronOffset() throws -> Vector3? {
        guard let hardIron else { return nil }
        let v = hardIron.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 3, let x = v[0], let y = v[1], let z = v[2], x.isFinite, y.isFinite, z.isFinite else {
            throw ValidationError("--hard-iron expects X,Y,Z in µT: \(hardIron)")
        }
        return Vector3(x, y, z)
    }

    /// Parses `--soft-iron XX,YY,ZZ[,XY,XZ,YZ]`; `nil` without it.
    func softIronMatrix() throws -> Matrix3? {
        guard let softIron else { return nil }
        let v = softIron.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 3 || v.count == 6, v.allSatisfy({ $0?.isFinite == true }) else {
            throw ValidationError("--soft-iron expects XX,YY,ZZ or XX,YY,ZZ,XY,XZ,YZ: \(softIron)")
        }
        let d = v.compactMap { $0 }
        let xy = d.count == 6 ? d[3] : 0, xz = d.count == 6 ? d[4] : 0, yz = d.count == 6 ? d[5] : 0
        return Matrix3(rows: Vector3(d[0], xy, xz), Vector3(xy, d[1], yz), Vector3(xz, yz, d[2]))
    }

    /// Parses `--gyro-bias X,Y,Z` (°/s) into rad/s; `nil` without it.
    func gyroBiasOffset() throws -> Vector3? {
        guard let gyroBias else { return nil }
        let v = gyroBias.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 3, let x = v[0], let y = v[1], let z = v[2], x.isFinite, y.isFinite, z.isFinite else {
            throw ValidationError("--gyro-bias expects X,Y,Z in °/s: \(gyroBias)")
        }
        return Vector3(x, y, z) * (Double.pi / 180)
    }

    private func fmt(_ x: Double) -> String { String(format: "%7.3f", x) }

    struct CrossValidationReport: Codable {
        var trials: [String]
        var measures: [BroadCrossValidation.MeasureResult]
    }

    /// Parses `--grid` options into axes; `nil` when none were given.
    func gridAxes() throws -> [BroadCrossValidation.Axis]? {
        guard !grid.isEmpty else { return nil }
        return try grid.map { text in
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, AttitudeFilterParameters.numericKeyPaths[parts[0]] != nil else {
                throw ValidationError("--grid expects NAME=V1,V2,... with a numeric parameter name: \(text)")
            }
            let values = parts[1].split(separator: ",").map { Double($0) }
            guard !values.isEmpty, values.count <= 64, values.allSatisfy({ $0?.isFinite == true }) else {
                throw ValidationError("--grid expects 1 to 64 finite values: \(text)")
            }
            return BroadCrossValidation.Axis(name: parts[0], values: values.compactMap { $0 })
        }
    }

    func runCrossValidation() throws {
        guard parameterOverrides.isEmpty else {
            throw ValidationError("--cross-validate does not take --parameter; use --grid")
        }
        guard hardIron == nil, softIron == nil, gyroBias == nil else {
            throw ValidationError("--cross-validate does not take --hard-iron, --soft-iron or --gyro-bias")
        }
        let axes = try gridAxes()
        if let axes, axes.reduce(1, { $0 * $1.values.count }) > 256 {
            throw ValidationError("--grid: more than 256 combinations")
        }
        let trials: [BroadTrial]
        do {
            trials = try BroadTrial.loadDirectory(URL(fileURLWithPath: directory))
        } catch {
            throw ValidationError("cannot read trials in \(directory): \(error)")
        }
        guard trials.count >= 2 else { throw ValidationError("cross-validation needs at least 2 trials in \(directory)") }
        var results: [BroadCrossValidation.MeasureResult] = []
        for measure in BroadMeasure.allCases {
            let cv = BroadCrossValidation(axes: axes ?? BroadCrossValidation.defaultAxes[measure] ?? [])
            results.append(try cv.run(measure, trials: trials))
        }
        if json {
            try printJSON(CrossValidationReport(trials: trials.map(\.name), measures: results), pretty: true)
            return
        }
        print("leave-one-trial-out, degrees: in-sample (defaults) / cross-validated")
        print("trial".padding(toLength: 40, withPad: " ", startingAt: 0)
            + results.map { $0.measure.rawValue.padding(toLength: 24, withPad: " ", startingAt: 0) }.joined())
        for t in trials {
            var line = String(t.name.prefix(39)).padding(toLength: 40, withPad: " ", startingAt: 0)
            for r in results {
                let cell = "\(fmt(r.inSample[t.name] ?? .nan)) /\(fmt(r.crossValidated[t.name] ?? .nan))"
                line += cell.padding(toLength: 24, withPad: " ", startingAt: 0)
            }
            print(line)
        }
        var mean = "mean".padding(toLength: 40, withPad: " ", startingAt: 0)
        for r in results {
            mean += "\(fmt(r.inSampleMean)) /\(fmt(r.crossValidatedMean))".padding(toLength: 24, withPad: " ", startingAt: 0)
        }
        print(mean)
        for r in results {
            let chosen = Dictionary(grouping: trials.map { r.chosen[$0.name]?.joined(separator: " ") ?? "" }, by: { $0 })
                .map { "\($0.key.isEmpty ? "defaults" : $0.key) ×\($0.value.count)" }.sorted().joined(separator: ", ")
            print("\(r.measure.rawValue): chosen \(chosen); best on all trials \(r.bestOnAll.joined(separator: " ")) \(fmt(r.bestOnAllMean))")
        }
    }
}
