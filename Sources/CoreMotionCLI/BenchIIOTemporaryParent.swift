import ArgumentParser

/// `coremotion bench`, until the project's own `bench` command (on main) takes `BenchIIOCommand` in.
struct BenchIIOTemporaryParent: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Benchmarks.", subcommands: [BenchIIOCommand.self])
}
