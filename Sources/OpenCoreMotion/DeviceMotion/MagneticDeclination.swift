import Foundation

/// Declination for true north: the angle from true north to magnetic north, degrees, east positive,
/// from the World Magnetic Model 2025 shipped with the package (``MagneticModelResource``).
enum MagneticDeclination {
    /// The declination at `location` today, or `nil` when the bundled model cannot be read.
    static func degrees(at location: CMMotionManager.Location, date: Date = Date()) -> Double? {
        MagneticModelResource.declinationDegrees(
            latitude: location.latitude,
            longitude: location.longitude,
            height: location.altitude / 1000,
            date: date
        )
    }
}
