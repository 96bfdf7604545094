/// Why a benchmark run failed, one line (the CLI prints it and exits 1).
package struct BenchmarkFailure: Error, CustomStringConvertible, Sendable {
    /// The reason.
    package var description: String
    init(_ description: String) { self.description = description }
}
