import Foundation

/// On Linux, `CMMotionManager()` (and so `super.init()` in a mock) resolves the process's default
/// source once, from `COREMOTION_SOURCE`. Every test in this process that creates one first points it
/// at the simulator, the value Apple's listings use, so the order the suites run in does not matter.
/// On Apple platforms there is nothing to choose.
let defaultSourceChosen: Bool = {
    #if !canImport(CoreMotion)
    setenv("COREMOTION_SOURCE", "sim:handheld", 1)
    #endif
    return true
}()
