// The source protocol, the simulator, the replay source and the maths types appear in
// OpenCoreMotion's public API (`CMMotionManager(source:)`, `CMAttitude.rotation`), so one
// `import OpenCoreMotion` brings them along.
@_exported import MotionFusion
@_exported import MotionSources
