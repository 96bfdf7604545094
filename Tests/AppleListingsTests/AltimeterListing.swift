// The usual Swift form of Apple's CMAltimeter reference (isRelativeAltitudeAvailable(),
// startRelativeAltitudeUpdates(to:withHandler:), CMAltitudeData's relativeAltitude and pressure as
// NSNumber, stopRelativeAltitudeUpdates()). Re-typed with only the import switched; Swift 5 mode. The
// altimeter is a stored property, as in an app; tests may put one on the simulator's stairs there.
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif
import Foundation

/// Listing: show the height climbed.
final class AltimeterListing {
    var altimeter = CMAltimeter()
    let lock = NSLock()
    var heights: [Double] = []
    var pressures: [Double] = []
    var label = ""

    func startAltimeter() {
        if CMAltimeter.isRelativeAltitudeAvailable() {
            altimeter.startRelativeAltitudeUpdates(to: OperationQueue.main) { [weak self] data, error in
                guard let self = self, let data = data, error == nil else { return }
                self.lock.lock()
                self.heights.append(data.relativeAltitude.doubleValue)
                self.pressures.append(data.pressure.doubleValue)
                self.label = String(format: "%.1f m", data.relativeAltitude.floatValue)
                self.lock.unlock()
            }
        }
    }

    func stopAltimeter() {
        altimeter.stopRelativeAltitudeUpdates()
    }
}
