/// How well the magnetometer is calibrated; the raw values match `CMMagneticFieldCalibrationAccuracy`.
///
/// ``MagneticCalibrator`` reports the better of its two estimates:
/// - the ellipsoid fit (hard and diagonal soft iron) grades by the samples used, the octants of the
///   sphere covered and the fit's residual: ``low`` from 20 samples, ``medium`` from 60 samples over 6
///   octants, ``high`` from 150 samples over all 8 with a small residual and anisotropy;
/// - the gyro-aided hard-iron estimate (``RotationHardIronEstimator``, no soft iron) grades by the heading
///   error its offset's uncertainty allows at the current attitude: ``low`` below 5°, ``medium`` below
///   ``AttitudeFilterParameters/hardIronHeadingUncertainty`` (1°) with innovations that fit the model. It
///   never reports ``high``.
///
/// From ``AttitudeFilterParameters/minimumAccuracyForCalibratedHeading`` (default ``medium``) on, the
/// calibrated field replaces the raw one for heading.
public enum MagneticCalibrationAccuracy: Int, Comparable, Hashable, Sendable, CaseIterable {
    /// No calibration yet (−1).
    case uncalibrated = -1
    /// A first estimate from little or poorly spread data (0).
    case low = 0
    /// A consistent fit over a fair spread of orientations, or a hard-iron offset known well enough for a
    /// heading within about a degree (1).
    case medium = 1
    /// A consistent, well-conditioned fit over most orientations (2).
    case high = 2

    /// Orders by accuracy.
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
