/// Declination for true north: the angle from true north to magnetic north, degrees, east positive.
enum MagneticDeclination {
    /// The declination at `location` today, or `nil` when no magnetic model is available.
    static func degrees(at location: CMMotionManager.Location) -> Double? {
        nil
    }
}
