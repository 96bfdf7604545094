import MotionFusion
import MotionSources

/// A small complementary filter: gyro integration corrected toward the accelerometer's gravity and
/// the magnetometer's horizontal field (Mahony, Hamel & Pflimlin, "Nonlinear complementary filters on
/// the special orthogonal group", IEEE TAC 53(5), 2008). It is the stand-in behind the
/// ``DeviceMotionEstimator`` seam until the MotionFusion engine is wired in.
struct ComplementaryEstimator: DeviceMotionEstimator {
    private let usesMagnetometer: Bool
    private var q = Quaternion.identity
    private var lastGyroTime: Double?
    private var accel: Vector3?
    private var mag: Vector3?
    private var initialised = false
    /// Correction gain toward the measured gravity and north, 1/s.
    private let gain = 2.0

    init(usesMagnetometer: Bool) {
        self.usesMagnetometer = usesMagnetometer
    }

    mutating func update(_ sample: RawSample) -> MotionEstimate? {
        switch sample.sensor {
        case .accelerometer:
            accel = sample.value
            return nil
        case .magnetometer:
            mag = sample.value
            return nil
        case .gyro:
            break
        }
        guard let a = accel else { return nil }
        let up = -a  // Core Motion's accelerometer points down at rest; "up" in the device frame.
        if !initialised {
            guard let upDir = up.normalized else { return nil }
            // Tilt that maps the device's measured up onto the reference z.
            let axis = upDir.cross(Vector3(0, 0, 1))
            let angle = acos(max(-1, min(1, upDir.z)))
            q = axis.length > 1e-9 ? Quaternion(axis: axis, angle: angle) : (upDir.z > 0 ? .identity : Quaternion(axis: Vector3(1, 0, 0), angle: .pi))
            initialised = true
        }
        let dt = lastGyroTime.map { min(max(sample.timestamp - $0, 0), 0.1) } ?? 0
        lastGyroTime = sample.timestamp
        var error = Vector3.zero
        if let upDir = up.normalized, abs(up.length - 1) < 0.5 {
            let predictedUp = q.inverseRotate(Vector3(0, 0, 1))
            error += upDir.cross(predictedUp)
        }
        if usesMagnetometer, let m = mag, let mDir = m.normalized {
            // Horizontal part of the field in the reference frame should point along +x (north).
            let mRef = q.rotate(mDir)
            if let h = Vector3(mRef.x, mRef.y, 0).normalized {
                let correction = h.cross(Vector3(1, 0, 0))  // about z only
                error += q.inverseRotate(Vector3(0, 0, correction.z))
            }
        }
        let omega = sample.value + error * gain
        q = (q * Quaternion(rotationVector: omega * dt)).normalized
        let gravity = q.inverseRotate(Vector3(0, 0, -1))
        return MotionEstimate(
            attitude: q,
            rotationRate: sample.value,
            gravity: gravity,
            userAcceleration: a - gravity,
            magneticField: usesMagnetometer ? (mag ?? .zero) : .zero,
            magneticAccuracy: usesMagnetometer && mag != nil ? .low : .uncalibrated,
            needsMovement: false
        )
    }
}

#if canImport(Glibc)
import Glibc
#endif
