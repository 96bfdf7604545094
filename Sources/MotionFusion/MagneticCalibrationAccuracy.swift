/// How well the magnetometer is calibrated; the raw values match `CMMagneticFieldCalibrationAccuracy`.
public enum MagneticCalibrationAccuracy: Int, Comparable, Hashable, Sendable, CaseIterable {
    /// No calibration yet (−1).
    case uncalibrated = -1
    /// A first estimate from little or poorly spread data (0).
    case low = 0
    /// A consistent fit over a fair spread of orientations (1).
    case medium = 1
    /// A consistent, well-conditioned fit over most orientations (2).
    case high = 2

    /// Orders by accuracy.
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
