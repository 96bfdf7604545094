import Foundation
import MotionBenchmarks
import MotionSources

// What the benchmark commands share in their reports: the `--json` line (the percentiles are
// MotionBenchmarks' `Percentiles`).

/// Prints `value` as JSON with sorted keys on standard output: one line, or indented when `pretty`.
func printJSON<Value: Encodable>(_ value: Value, pretty: Bool = false) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
