import CoreMotionCLI
import ArgumentParser

// Through a generic helper: a plain `CoreMotionCommand.main()` here resolves to the synchronous
// ParsableCommand entry point, which refuses async subcommands.
func runAsyncRoot<C: AsyncParsableCommand>(_: C.Type) async { await C.main() }
await runAsyncRoot(CoreMotionCommand.self)
