import MotionFusion
import MotionSources

/// What an estimator knows after a step: everything `CMDeviceMotion` reports, in the estimator's
/// own reference frame (z up; x toward magnetic north when it uses the magnetometer, arbitrary
/// otherwise).
struct MotionEstimate: Sendable {
    /// Device → reference rotation.
    var attitude: Quaternion
    /// Rotation rate with bias removed, rad/s, device frame.
    var rotationRate: Vector3
    /// Gravity in g, device frame, pointing down.
    var gravity: Vector3
    /// Accelerometer minus gravity, g, device frame.
    var userAcceleration: Vector3
    /// Calibrated magnetic field, µT, device frame (zero when unknown).
    var magneticField: Vector3
    /// Calibration accuracy of ``magneticField``.
    var magneticAccuracy: CMMagneticFieldCalibrationAccuracy
    /// `true` while the magnetometer calibration needs the device to move.
    var needsMovement: Bool
}

/// The seam between `CMMotionManager` and a fusion algorithm. One instance per source and mode
/// (with or without magnetometer); fed every raw sample in timestamp order, it yields an estimate
/// after each gyroscope sample once it has what it needs.
protocol DeviceMotionEstimator: Sendable {
    /// Creates an estimator that uses the magnetometer or not.
    init(usesMagnetometer: Bool)
    /// Takes one raw sample; returns a new estimate when the sample was a gyroscope sample.
    mutating func update(_ sample: RawSample) -> MotionEstimate?
}
