import CoreMotionCLI

await CoreMotionCommand.main()
