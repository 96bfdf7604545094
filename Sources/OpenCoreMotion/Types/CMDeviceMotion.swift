import Foundation

/// The result of sensor fusion: attitude, the split of acceleration into gravity and user
/// acceleration, bias-free rotation rate, calibrated magnetic field and heading.
open class CMDeviceMotion: CMLogItem, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// Where the sensors sit, as Core Motion names it.
    public enum SensorLocation: Int, Sendable, Hashable {
        /// The device itself.
        case `default` = 0
        /// The left earbud of a headphone.
        case headphoneLeft = 1
        /// The right earbud of a headphone.
        case headphoneRight = 2
    }

    /// The device's orientation in the reference frame the updates were started with.
    public let attitude: CMAttitude
    /// Rotation rate in rad/s, device frame, with the gyroscope's bias removed.
    public let rotationRate: CMRotationRate
    /// Gravity in g, device frame, pointing down: `Rᵀ · (0, 0, −1)`.
    public let gravity: CMAcceleration
    /// Acceleration the user gives the device, in g, device frame: accelerometer − ``gravity``.
    public let userAcceleration: CMAcceleration
    /// The magnetic field with the device's hard and soft iron removed; zero and
    /// ``CMMagneticFieldCalibrationAccuracy/uncalibrated`` in ``CMAttitudeReferenceFrame/xArbitraryZVertical``.
    public let magneticField: CMCalibratedMagneticField
    /// Heading in degrees, 0…360 clockwise from north, in the north frames; negative (−1) in the
    /// arbitrary frames, where there is no north.
    public let heading: Double
    /// Where the sensors are; always ``SensorLocation/default`` here.
    public let sensorLocation: SensorLocation

    /// Creates a sample (beyond Apple).
    public init(
        timestamp: TimeInterval,
        attitude: CMAttitude,
        rotationRate: CMRotationRate,
        gravity: CMAcceleration,
        userAcceleration: CMAcceleration,
        magneticField: CMCalibratedMagneticField = CMCalibratedMagneticField(),
        heading: Double = -1,
        sensorLocation: SensorLocation = .default
    ) {
        self.attitude = attitude
        self.rotationRate = rotationRate
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.magneticField = magneticField
        self.heading = heading
        self.sensorLocation = sensorLocation
        super.init(timestamp: timestamp)
    }

    open override var description: String {
        "CMDeviceMotion(\(attitude), gravity: (\(gravity.x), \(gravity.y), \(gravity.z)), heading: \(heading), timestamp: \(timestamp))"
    }
}
