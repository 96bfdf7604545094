// The shape of Apple's CMBatchedSensorManager code in WWDC23 "What's new in Core Motion" (session
// 10179): check `isAccelerometerSupported` and `isDeviceMotionSupported`, create a
// `CMBatchedSensorManager()`, then in a `Task` iterate `for try await … in manager.deviceMotionUpdates()`
// (and `accelerometerUpdates()`), processing each one-second batch, leaving the loop on the app's own
// condition, and catching the error as an `NSError`. The session's code could not be retrieved verbatim
// here; the calls are Apple's API as the session and the reference pages show it, with only the import
// switched. Swift 5 mode, like the other listings; the detector is this file's own stand-in.
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif
import Foundation

/// Listing: high-rate batches for a swing detector.
final class BatchedSensorListing {
    let manager = CMBatchedSensorManager()
    let lock = NSLock()
    var motionBatches: [[CMDeviceMotion]] = []
    var accelerometerBatches: [[CMAccelerometerData]] = []
    var errors: [NSError] = []
    var shouldStop = false
    var tasks: [Task<Void, Never>] = []

    func startStreaming() {
        guard CMBatchedSensorManager.isAccelerometerSupported && CMBatchedSensorManager.isDeviceMotionSupported else {
            return
        }
        tasks.append(Task {
            do {
                for try await data in manager.deviceMotionUpdates() {
                    // Process the batch (one second of 200 Hz device motion).
                    lock.withLock { motionBatches.append(data) }
                    if lock.withLock({ shouldStop }) { break }
                }
            } catch let error as NSError {
                lock.withLock { errors.append(error) }
            }
        })
        tasks.append(Task {
            do {
                for try await data in manager.accelerometerUpdates() {
                    // Process the batch (one second of accelerometer samples).
                    lock.withLock { accelerometerBatches.append(data) }
                    if lock.withLock({ shouldStop }) { break }
                }
            } catch let error as NSError {
                lock.withLock { errors.append(error) }
            }
        })
    }

    func stopStreaming() {
        lock.withLock { shouldStop = true }
        for task in tasks { task.cancel() }
    }
}
