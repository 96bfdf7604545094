import MotionFusion

/// The unit and sign conversions of every phone app and recording format, in one place: the file
/// readers (`MotionRecordingFormats`) and the live phone sources (`MotionPhones`) both call these, so a
/// phone's export and its live stream give the same Core Motion values.
package enum PhoneUnits {
    /// Standard gravity in m/s² (Android's `SensorManager.GRAVITY_EARTH`, Sensor Logger's factor, BROAD's).
    package static let standardGravity = 9.80665
    /// phyphox's factor on iOS (its code multiplies Core Motion's g by −9.81, `kG`).
    package static let phyphoxGravity = 9.81

    /// Android's acceleration (m/s², +g on z lying face up: specific force) in Core Motion's (g, −1
    /// on z face up): all three axes negated and divided by `gravity`. A zero axis gives 0, never −0,
    /// so output prints `0`.
    @inlinable
    package static func androidAcceleration(_ x: Double, _ y: Double, _ z: Double, gravity: Double = standardGravity) -> Vector3 {
        let k = -1 / gravity
        // + 0 turns −0 (from a zero axis) into 0.
        return Vector3(x * k + 0, y * k + 0, z * k + 0)
    }

    /// ``androidAcceleration(_:_:_:gravity:)`` of a vector.
    @inlinable
    package static func androidAcceleration(_ v: Vector3, gravity: Double = standardGravity) -> Vector3 {
        androidAcceleration(v.x, v.y, v.z, gravity: gravity)
    }

    /// Apple's acceleration in m/s² (Sensor Logger's calibrated iOS streams, Apple's sign) in g.
    @inlinable
    package static func appleAcceleration(metresPerSecondSquared v: Vector3) -> Vector3 {
        v * (1 / standardGravity)
    }
}
