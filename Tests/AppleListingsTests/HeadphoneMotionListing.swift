// The shape of Apple's CMHeadphoneMotionManager code in WWDC23 "What's new in Core Motion" (session
// 10179) and the class's reference page: check `isDeviceMotionAvailable`, set the delegate for the
// connect and disconnect events, start device-motion updates on a queue, and track the head's pose as
// the attitude relative to a starting pose (`multiply(byInverseOf:)`). Only the import is switched;
// Swift 5 mode, like the other listings.
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif
import Foundation

/// Listing: head tracking with connection events.
final class HeadphoneMotionListing: NSObject, CMHeadphoneMotionManagerDelegate {
    var manager = CMHeadphoneMotionManager()
    let queue = OperationQueue()
    let lock = NSLock()
    var startingPose: CMAttitude?
    var poses: [CMAttitude] = []
    var errors: [NSError] = []
    var connectEvents = 0
    var disconnectEvents = 0
    var started = false

    func startTracking() {
        // Start streaming headphone motion
        guard manager.isDeviceMotionAvailable else {
            return
        }
        manager.delegate = self
        started = true

        manager.startDeviceMotionUpdates(to: queue) { (motion, error) in
            if let error = error as NSError? {
                self.lock.withLock { self.errors.append(error) }
            }
            guard let motion else {
                return
            }
            // Track head movement using device motion
            let currentPose = motion.attitude
            if let startingPose = self.lock.withLock({ self.startingPose }) {
                currentPose.multiply(byInverseOf: startingPose)
            } else {
                self.lock.withLock { self.startingPose = motion.attitude }
            }
            self.lock.withLock { self.poses.append(currentPose) }
        }
    }

    func stopTracking() {
        manager.stopDeviceMotionUpdates()
    }

    func headphoneMotionManagerDidConnect(_ manager: CMHeadphoneMotionManager) {
        // Tracking started with the connect event
        lock.withLock { connectEvents += 1 }
    }

    func headphoneMotionManagerDidDisconnect(_ manager: CMHeadphoneMotionManager) {
        // Tracking stopped with the disconnect event
        lock.withLock { disconnectEvents += 1 }
    }
}
