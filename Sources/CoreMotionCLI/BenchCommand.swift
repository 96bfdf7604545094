import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks; each prints its figures, or JSON with --json.",
        subcommands: [BenchDeliveryCommand.self, BenchDashboardCommand.self]
    )
}
