import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionFusion

/// `coremotion bench steps DIR`: step-count accuracy on labelled walks, in-sample and cross-validated.
package struct BenchStepsCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "steps",
        abstract: "Score the step detector on labelled walks (mean absolute percentage error).",
        discussion: """
            DIR holds NAME.csv walks (timestamp,sensor,x,y,z, accelerometer in g) and truth.json mapping NAME to \
            {"steps": N, "user": U, "placement": P}, as in shared/data/steps (Oxford Step Counter data set, \
            Salvi et al., EMBC 2018, CC BY 4.0). Prints each walk's count and error with the shipped defaults \
            and cross-validated: leave-one-user-out and leave-one-placement-out, where the parameters are \
            chosen from a grid on the other folds' walks only.
            """
    )

    @Argument(help: "Directory of walks with truth.json.")
    var directory: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    struct WalkReport: Codable {
        var truth: Int
        var user: String
        var placement: String
        var steps: Int
        var error: Double
        var stepsLeaveOneUserOut: Int
        var errorLeaveOneUserOut: Double
        var stepsLeaveOnePlacementOut: Int
        var errorLeaveOnePlacementOut: Double
    }

    struct Report: Codable {
        var walks: [String: WalkReport]
        var count: Int
        var mapeInSample: Double
        var mapeLeaveOneUserOut: Double
        var mapeLeaveOnePlacementOut: Double
        var gridSize: Int
        var unit: String
    }

    struct Truth: Decodable {
        var steps: Int
        var user: String?
        var placement: String?
    }

    /// Runs the command.
    package func run() throws {
        let truthPath = URL(fileURLWithPath: directory).appendingPathComponent("truth.json").path
        guard let data = FileManager.default.contents(atPath: truthPath) else {
            throw CLIError("\(truthPath): cannot read (bench steps needs DIR/truth.json)")
        }
        let truth: [String: Truth]
        do {
            truth = try JSONDecoder().decode([String: Truth].self, from: data)
        } catch {
            throw CLIError("\(truthPath): not a map of NAME to {\"steps\": N, …}")
        }
        guard !truth.isEmpty else { throw CLIError("\(truthPath): no walks") }
        var walks: [StepWalk] = []
        for name in truth.keys.sorted() {
            guard let entry = truth[name], entry.steps > 0 else {
                throw CLIError("\(truthPath): \(name) needs a positive step count")
            }
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name + ".csv").path
            let rec = try AccelerometerInput(path: path)
            walks.append(StepWalk(name: name, user: entry.user ?? "?", placement: entry.placement ?? "?",
                                  truth: entry.steps, t: rec.t, x: rec.x, y: rec.y, z: rec.z))
        }
        let result = StepCountBenchmark.run(walks)
        if json {
            var reports: [String: WalkReport] = [:]
            for w in result.walks {
                reports[w.name] = WalkReport(
                    truth: w.truth, user: w.user, placement: w.placement,
                    steps: w.countedWithDefaults, error: w.error(w.countedWithDefaults),
                    stepsLeaveOneUserOut: w.countedLeaveOneUserOut, errorLeaveOneUserOut: w.error(w.countedLeaveOneUserOut),
                    stepsLeaveOnePlacementOut: w.countedLeaveOnePlacementOut,
                    errorLeaveOnePlacementOut: w.error(w.countedLeaveOnePlacementOut))
            }
            let report = Report(walks: reports, count: walks.count, mapeInSample: result.defaultsMAPE,
                                mapeLeaveOneUserOut: result.leaveOneUserOutMAPE,
                                mapeLeaveOnePlacementOut: result.leaveOnePlacementOutMAPE,
                                gridSize: result.gridSize, unit: "fraction")
            try printJSON(report, pretty: true)
        } else {
            print("walk                                  truth  steps   err%   LOUO   err%   LOPO   err%")
            for w in result.walks {
                let name = w.name.padding(toLength: 36, withPad: " ", startingAt: 0)
                print(name + String(format: " %6d %6d %6.2f %6d %6.2f %6d %6.2f", w.truth, w.countedWithDefaults,
                                    100 * w.error(w.countedWithDefaults), w.countedLeaveOneUserOut,
                                    100 * w.error(w.countedLeaveOneUserOut), w.countedLeaveOnePlacementOut,
                                    100 * w.error(w.countedLeaveOnePlacementOut)))
            }
            print(String(format: "MAPE over %d walks: defaults (in-sample) %.2f %%, leave-one-user-out %.2f %%, "
                         + "leave-one-placement-out %.2f %% (grid of %d parameter sets)",
                         walks.count, 100 * result.defaultsMAPE, 100 * result.leaveOneUserOutMAPE,
                         100 * result.leaveOnePlacementOutMAPE, result.gridSize))
        }
    }
}
