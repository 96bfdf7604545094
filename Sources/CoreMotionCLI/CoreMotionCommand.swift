import ArgumentParser

/// The `coremotion` command: Core Motion for Linux from the terminal.
///
/// Each subcommand lives in its own `*Command.swift` file and is registered in ``configuration``.
package struct CoreMotionCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "coremotion",
        abstract: "Motion sensors, sensor fusion and Core Motion's API on Linux.",
        version: "0.1.0",
        subcommands: [
            DemoCommand.self,
            StreamCommand.self,
            BatchesCommand.self,
            SensorsCommand.self,
            FuseCommand.self,
            CalibrateCommand.self,
            DashboardCommand.self,
            OrientationCommand.self,
            RecordCommand.self,
            RecordedCommand.self,
            PublishCommand.self,
            StepsCommand.self,
            BenchCommand.self,
        ]
    )

    package init() {}
}
