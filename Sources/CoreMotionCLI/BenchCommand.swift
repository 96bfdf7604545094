import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks; each prints its figures, or JSON with --json.",
        subcommands: [
            BenchDeliveryCommand.self,
            BenchActivityCommand.self,
            BenchIIOCommand.self,
            BenchBroadCommand.self,
            BenchFusionCommand.self,
            BenchDashboardCommand.self,
            BenchFuseCommand.self,
            BenchFleetCommand.self,
            BenchStepsCommand.self,
            BenchReadCommand.self,
            BenchPhoneCommand.self,
            BenchSoakCommand.self,
        ]
    )
}
