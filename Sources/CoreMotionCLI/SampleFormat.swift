import ArgumentParser
import OpenCoreMotion

/// The line formats `coremotion stream` writes. Numbers use Swift's shortest round-trip form and
/// `.` as the decimal separator, whatever the locale. Units are Core Motion's.
enum SampleFormat: String, ExpressibleByArgument, CaseIterable {
    case csv
    case jsonl

    /// The CSV header of one raw sensor: `timestamp,x,y,z`. The next line is a comment naming the
    /// sensor (`# sensor=gyro`), which `replay:` reads.
    static let rawHeader = "timestamp,x,y,z"
    /// The CSV header of all raw sensors interleaved.
    static let multiSensorHeader = "timestamp,sensor,x,y,z"
    /// The CSV header of device motion: attitude quaternion (device → reference, scalar first), Euler
    /// angles in radians, gravity and user acceleration in g, unbiased rotation rate in rad/s,
    /// calibrated magnetic field in µT with its accuracy (−1…2), heading in degrees (−1 when none).
    static let deviceMotionHeader = [
        "timestamp", "q_w", "q_x", "q_y", "q_z", "roll", "pitch", "yaw",
        "gravity_x", "gravity_y", "gravity_z",
        "user_acceleration_x", "user_acceleration_y", "user_acceleration_z",
        "rotation_rate_x", "rotation_rate_y", "rotation_rate_z",
        "magnetic_field_x", "magnetic_field_y", "magnetic_field_z", "magnetic_field_accuracy",
        "heading",
    ].joined(separator: ",")

    func line(timestamp: Double, sensor: String?, x: Double, y: Double, z: Double) -> String {
        switch self {
        case .csv:
            if let sensor { return "\(timestamp),\(sensor),\(x),\(y),\(z)" }
            return "\(timestamp),\(x),\(y),\(z)"
        case .jsonl:
            let s = sensor.map { "\"sensor\":\"\($0)\"," } ?? ""
            return "{\"timestamp\":\(timestamp),\(s)\"x\":\(x),\"y\":\(y),\"z\":\(z)}"
        }
    }

    func line(_ m: CMDeviceMotion) -> String {
        let q = m.attitude.quaternion
        let a = m.attitude
        let g = m.gravity, u = m.userAcceleration, r = m.rotationRate, f = m.magneticField.field
        let acc = m.magneticField.accuracy.rawValue
        switch self {
        case .csv:
            return [
                m.timestamp, q.w, q.x, q.y, q.z, a.roll, a.pitch, a.yaw, g.x, g.y, g.z, u.x, u.y, u.z,
                r.x, r.y, r.z, f.x, f.y, f.z, Double(acc), m.heading,
            ].map { "\($0)" }
                .joined(separator: ",")
        case .jsonl:
            return "{\"timestamp\":\(m.timestamp),\"quaternion\":{\"w\":\(q.w),\"x\":\(q.x),\"y\":\(q.y),\"z\":\(q.z)},"
                + "\"roll\":\(a.roll),\"pitch\":\(a.pitch),\"yaw\":\(a.yaw),"
                + "\"gravity\":{\"x\":\(g.x),\"y\":\(g.y),\"z\":\(g.z)},"
                + "\"userAcceleration\":{\"x\":\(u.x),\"y\":\(u.y),\"z\":\(u.z)},"
                + "\"rotationRate\":{\"x\":\(r.x),\"y\":\(r.y),\"z\":\(r.z)},"
                + "\"magneticField\":{\"x\":\(f.x),\"y\":\(f.y),\"z\":\(f.z),\"accuracy\":\(acc)},"
                + "\"heading\":\(m.heading)}"
        }
    }
}
