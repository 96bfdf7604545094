import ArgumentParser
import CoreMotionCLI
import Foundation

/// The executable's entry point: the `coremotion` command tree of CoreMotionCLI, with the exit
/// statuses of ``ExitStatus`` (0 success, 1 every error).
@main
struct CoreMotionMain: AsyncParsableCommand {
    static let configuration = CoreMotionCommand.configuration

    static func main() async {
        Foundation.exit(await CoreMotionCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
    }
}
