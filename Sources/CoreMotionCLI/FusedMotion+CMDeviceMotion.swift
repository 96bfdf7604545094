import MotionFusion
import OpenCoreMotion

extension FusedMotion {
    /// The values of a Core Motion device-motion sample, for ``DeviceMotionWriter``.
    init(_ m: CMDeviceMotion) {
        let g = m.gravity, u = m.userAcceleration, r = m.rotationRate, f = m.magneticField.field
        self.init(
            timestamp: m.timestamp, attitude: m.attitude.rotation,
            gravity: Vector3(g.x, g.y, g.z), userAcceleration: Vector3(u.x, u.y, u.z),
            rotationRate: Vector3(r.x, r.y, r.z), magneticField: Vector3(f.x, f.y, f.z),
            magneticFieldAccuracy: MagneticCalibrationAccuracy(rawValue: Int(m.magneticField.accuracy.rawValue)) ?? .uncalibrated,
            heading: m.heading)
    }
}
