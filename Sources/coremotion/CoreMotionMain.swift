import ArgumentParser
import CoreMotionCLI

/// The executable's entry point: the `coremotion` command tree of CoreMotionCLI.
@main
struct CoreMotionMain: AsyncParsableCommand {
    static let configuration = CoreMotionCommand.configuration
}
