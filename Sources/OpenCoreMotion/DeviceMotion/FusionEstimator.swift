import MotionFusion
import MotionSources

/// Runs MotionFusion's ``AttitudeFilter`` on a source's raw samples for device motion.
///
/// One estimator serves every reference frame: the filter tracks the magnetic-north attitude, the
/// gyro-and-accelerometer-only attitude (``AttitudeEstimate/quaternion6D``) and the arbitrary frame the
/// magnetometer keeps from drifting (``AttitudeEstimate/quaternionArbitraryCorrected``). Samples are
/// fed one at a time, each sensor with the time step since its own previous sample; an estimate is
/// produced after every gyroscope sample, once an accelerometer sample has been seen.
///
/// A value type, used under the hub's lock.
struct FusionEstimator: Sendable {
    private(set) var filter: AttitudeFilter
    private var last: [SensorKind: Double] = [:]
    private var sawAccelerometer = false

    init(usesMagnetometer: Bool) {
        filter = AttitudeFilter(usesMagnetometer: usesMagnetometer)
    }

    /// Switches between 9D and 6D as consumers come and go; the filter's state is kept.
    var usesMagnetometer: Bool {
        get { filter.usesMagnetometer }
        set { filter.usesMagnetometer = newValue }
    }

    /// Takes one raw sample (finite, timestamps increasing per sensor); returns an estimate after a
    /// gyroscope sample.
    mutating func update(_ sample: RawSample) -> (estimate: AttitudeEstimate, needsMovement: Bool)? {
        let t = sample.timestamp
        let dt = last[sample.sensor].map { t - $0 } ?? filter.parameters.nominalTimeStep
        last[sample.sensor] = t
        switch sample.sensor {
        case .accelerometer:
            filter.updateAccelerometer(sample.value, dt: dt)
            sawAccelerometer = true
            return nil
        case .magnetometer:
            guard filter.usesMagnetometer else { return nil }
            filter.updateMagnetometer(sample.value, dt: dt)
            return nil
        case .gyro:
            filter.updateGyro(sample.value, dt: dt)
            guard sawAccelerometer else { return nil }
            let estimate = filter.estimate
            return (estimate, filter.usesMagnetometer && estimate.calibrationNeedsMovement)
        }
    }
}

extension CMMagneticFieldCalibrationAccuracy {
    init(_ a: MagneticCalibrationAccuracy) {
        self = CMMagneticFieldCalibrationAccuracy(rawValue: Int32(a.rawValue)) ?? .uncalibrated
    }
}
