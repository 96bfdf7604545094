// The usual Swift form of Apple's CMMotionActivityManager reference (isActivityAvailable(),
// startActivityUpdates(to:withHandler:) on the main queue, the CMMotionActivity flags and confidence,
// queryActivityStarting(from:to:to:withHandler:), stopActivityUpdates()). Re-typed with only the import
// switched; Swift 5 mode, like the other listings. The manager is a stored property, as in an app's view
// controller; tests may put one on a simulator scenario there.
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif
import Foundation

/// Listing: an activity screen.
final class ActivityListing {
    var activityManager = CMMotionActivityManager()
    let lock = NSLock()
    var statusText = ""
    var activities: [String] = []
    var confidences: [CMMotionActivityConfidence] = []
    var history: [String]?

    func startTrackingActivity() {
        guard CMMotionActivityManager.authorizationStatus() != .denied else { return }
        if CMMotionActivityManager.isActivityAvailable() {
            activityManager.startActivityUpdates(to: OperationQueue.main) { [weak self] activity in
                guard let self = self, let activity = activity else { return }
                var name = "unknown"
                if activity.stationary {
                    name = "stationary"
                } else if activity.walking {
                    name = "walking"
                } else if activity.running {
                    name = "running"
                } else if activity.automotive {
                    name = "automotive"
                } else if activity.cycling {
                    name = "cycling"
                }
                self.lock.lock()
                switch activity.confidence {
                case .low:
                    self.statusText = name + " (low confidence)"
                case .medium:
                    self.statusText = name + " (medium confidence)"
                case .high:
                    self.statusText = name + " (high confidence)"
                @unknown default:
                    self.statusText = name
                }
                self.activities.append(name)
                self.confidences.append(activity.confidence)
                self.lock.unlock()
            }
        }
    }

    func stopTrackingActivity() {
        activityManager.stopActivityUpdates()
    }

    func queryLastHour(completion: @escaping () -> Void) {
        let now = Date()
        activityManager.queryActivityStarting(from: now.addingTimeInterval(-3600), to: now, to: OperationQueue.main) { activities, error in
            if let error = error {
                print("Activity query failed: \(error.localizedDescription)")
                completion()
                return
            }
            let names = (activities ?? []).map { activity -> String in
                activity.walking ? "walking" : activity.stationary ? "stationary" : activity.running ? "running" : "other"
            }
            self.lock.lock()
            self.history = names
            self.lock.unlock()
            completion()
        }
    }
}
