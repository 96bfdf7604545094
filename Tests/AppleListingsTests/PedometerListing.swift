// The usual Swift form of Apple's CMPedometer reference (class CMPedometer, startUpdates(from:withHandler:),
// queryPedometerData(from:to:withHandler:), startEventUpdates(handler:), CMPedometerData's NSNumber
// properties): check availability, start live updates, query the last hours, follow pause/resume, stop.
// Re-typed with only the import switched; Swift 5 mode, like the other listings. The pedometer is a stored
// property, as in an app's view controller; tests may put one on the simulator's walk there.
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif
import Foundation

/// Listing: a step counter screen.
final class PedometerListing {
    var pedometer = CMPedometer()
    let lock = NSLock()
    var stepsText = ""
    var distanceText = ""
    var cadenceText = ""
    var paceText = ""
    var steps: [Int] = []
    var cadences: [Double] = []
    var events: [String] = []
    var history: Int?
    var lastError: Error?

    func startCountingSteps() {
        guard CMPedometer.authorizationStatus() != .denied else { return }
        if CMPedometer.isStepCountingAvailable() {
            pedometer.startUpdates(from: Date()) { [weak self] pedometerData, error in
                guard let self = self else { return }
                guard let pedometerData = pedometerData, error == nil else {
                    self.lock.lock(); self.lastError = error; self.lock.unlock()
                    return
                }
                self.lock.lock()
                self.stepsText = pedometerData.numberOfSteps.stringValue
                self.steps.append(pedometerData.numberOfSteps.intValue)
                if CMPedometer.isDistanceAvailable(), let distance = pedometerData.distance {
                    self.distanceText = String(format: "%.1f m", distance.doubleValue)
                }
                if CMPedometer.isCadenceAvailable(), let cadence = pedometerData.currentCadence {
                    self.cadenceText = String(format: "%.2f steps/s", cadence.doubleValue)
                    self.cadences.append(cadence.doubleValue)
                }
                if CMPedometer.isPaceAvailable(), let pace = pedometerData.currentPace {
                    self.paceText = String(format: "%.2f s/m", pace.doubleValue)
                }
                if CMPedometer.isFloorCountingAvailable(), let up = pedometerData.floorsAscended {
                    self.stepsText += " (\(up) floors up)"
                }
                self.lock.unlock()
            }
        }
    }

    func startTrackingEvents() {
        if CMPedometer.isPedometerEventTrackingAvailable() {
            pedometer.startEventUpdates { [weak self] event, error in
                guard let self = self, let event = event, error == nil else { return }
                self.lock.lock()
                switch event.type {
                case .pause:
                    self.events.append("pause")
                case .resume:
                    self.events.append("resume")
                @unknown default:
                    break
                }
                self.lock.unlock()
            }
        }
    }

    func stopCountingSteps() {
        pedometer.stopUpdates()
        pedometer.stopEventUpdates()
    }

    func queryLastHours(_ hours: Double, completion: @escaping (Int?) -> Void) {
        let now = Date()
        let start = now.addingTimeInterval(-hours * 3600)
        pedometer.queryPedometerData(from: start, to: now) { data, error in
            if let error = error {
                print("Pedometer query failed: \(error.localizedDescription)")
                completion(nil)
                return
            }
            completion(data?.numberOfSteps.intValue)
        }
    }
}
