import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionFusion
import MotionSources

/// `coremotion bench activity`: the activity classifier's confusion on labelled data.
package struct BenchActivityCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract: "Score the activity classifier (seconds per true and reported class).",
        discussion: """
            Always scores the simulator's scenarios (still and handheld: stationary; walk; run; cycle; drive: \
            automotive) over --seeds runs of 120 s each, with and without the gyroscope. --steps DIR adds \
            labelled walks (every *.csv there is walking, e.g. shared/data/steps, the Oxford Step Counter \
            walks); --broad DIR adds the rest phases of BROAD trials (movement = 0: stationary; also scored from 5 s \
            after each movement ends, once the classifier has had time to settle). The first 5 s \
            of each recording are not scored. Reports recall per class and the full table in seconds.
            """
    )

    @Option(help: "Directory of walks (*.csv, every one labelled walking).")
    var steps: String?

    @Option(help: "Directory of BROAD trials (rest phases labelled stationary).")
    var broad: String?

    @Option(parsing: .unconditional, help: "Simulator seeds per scenario (1…50).", transform: OptionValue.count(1...50))
    var seeds: Int = 5

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    struct Row: Codable {
        var seconds: [String: Double]
        var recall: Double?
    }

    /// Runs the command.
    package func run() throws {
        var tables: [(String, ActivityConfusion)] = []
        // safe: seeds is validated to 1…50 by its option.
        let seedRange = 1...UInt64(seeds)
        for gyro in [true, false] {
            var all = ActivityConfusion()
            for (_, c) in ActivityBenchmark.simulated(seeds: seedRange, gyro: gyro) { all.merge(c) }
            tables.append((gyro ? "simulator" : "simulator-accelerometer-only", all))
        }
        if let steps {
            let dir = URL(fileURLWithPath: steps)
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: steps).filter { $0.hasSuffix(".csv") }.sorted()
            } catch {
                throw CLIError("\(steps): cannot list the directory")
            }
            guard !names.isEmpty else { throw CLIError("\(steps): no .csv walks") }
            var all = ActivityConfusion()
            for name in names {
                let rec = try AccelerometerInput(path: dir.appendingPathComponent(name).path)
                let acc = (0..<rec.t.count).map { (t: rec.t[$0], a: Vector3(rec.x[$0], rec.y[$0], rec.z[$0])) }
                all.merge(ActivityBenchmark.evaluate(accelerometer: acc) { _ in .walking })
            }
            tables.append(("walks", all))
        }
        if let broad {
            let trials: [BroadTrial]
            do {
                trials = try BroadTrial.loadDirectory(URL(fileURLWithPath: broad))
            } catch {
                throw CLIError("\(broad): \(error)")
            }
            var all = ActivityConfusion()
            var settled = ActivityConfusion()
            for trial in trials {
                let dt = trial.timeStep
                // The time since the last movement sample, for the settled score.
                var lastMove = -Double.infinity
                var sinceMove = [Double](repeating: 0, count: trial.count)
                for i in 0..<trial.count {
                    if trial.movement[i] { lastMove = Double(i) * dt }
                    sinceMove[i] = Double(i) * dt - lastMove
                }
                let acc = trial.accelerometer.enumerated().map { (t: Double($0.offset) * dt, a: $0.element) }
                let gyr = trial.gyro.enumerated().map { (t: Double($0.offset) * dt, w: $0.element) }
                all.merge(ActivityBenchmark.evaluate(accelerometer: acc, gyro: gyr) { t in
                    let i = min(max(Int((t / dt).rounded()), 0), trial.count - 1)  // safe: t is an offset · dt made here, in range
                    return trial.movement[i] ? nil : .stationary
                })
                settled.merge(ActivityBenchmark.evaluate(accelerometer: acc, gyro: gyr) { t in
                    let i = min(max(Int((t / dt).rounded()), 0), trial.count - 1)  // safe: t is an offset · dt made here, in range
                    return trial.movement[i] || sinceMove[i] < 5 ? nil : .stationary
                })
            }
            tables.append(("broad-rest", all))
            tables.append(("broad-rest-after-5s", settled))
        }
        if json {
            var out: [String: [String: Row]] = [:]
            for (name, table) in tables {
                var rows: [String: Row] = [:]
                for truth in ActivityKind.allCases where table.total(truth) > 0 {
                    var cells: [String: Double] = [:]
                    for p in ActivityKind.allCases { cells[p.description] = table.seconds[Int(truth.rawValue)][Int(p.rawValue)] }
                    rows[truth.description] = Row(seconds: cells, recall: table.recall(truth))
                }
                out[name] = rows
            }
            try printJSON(out, pretty: true)
            return
        }
        let classes = ActivityKind.allCases
        for (name, table) in tables {
            print("\(name): % of each true class's seconds reported as")
            print("truth         seconds " + classes.map { $0.description.padding(toLength: 10, withPad: " ", startingAt: 0) }.joined(separator: " "))
            for truth in classes where table.total(truth) > 0 {
                let cells = classes.map { String(format: "%10.1f", 100 * (table.fraction(truth, as: $0) ?? 0)) }
                print(truth.description.padding(toLength: 12, withPad: " ", startingAt: 0)
                      + String(format: " %8.0f ", table.total(truth)) + cells.joined(separator: " "))
            }
            print("")
        }
    }
}
