import ArgumentParser

/// `coremotion bench`: benchmarks (parent command).
public struct BenchCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks: fusion accuracy on BROAD and fusion throughput.",
        subcommands: [BenchBroadCommand.self, BenchFusionCommand.self]
    )

    public init() {}
}
