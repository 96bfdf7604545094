import CoreMotionCLI

// Inside an async function the async `main()` of AsyncParsableCommand is chosen; at top level the
// synchronous one of ParsableCommand was, which refuses to run an async command.
func start() async { await CoreMotionCommand.main() }
await start()
