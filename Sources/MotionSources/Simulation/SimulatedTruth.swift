import MotionFusion

/// The ground truth of a simulated device at one instant: what perfect sensors and a perfect fusion
/// filter would report.
///
/// Frames: the device frame is Core Motion's (x right, y top, z out of the screen); the world frame
/// is x magnetic north, y west, z up, the frame of `CMAttitudeReferenceFrame.xMagneticNorthZVertical`.
public struct SimulatedTruth: Sendable, Hashable {
    /// Seconds since boot, the same base as the samples' timestamps.
    public var timestamp: Double
    /// The rotation from the device frame to the world frame: `v_world = attitude.rotate(v_device)`.
    public var attitude: Quaternion
    /// The true angular velocity of the device relative to the world, rad/s, device frame (no bias,
    /// no noise). Exactly the body rate of ``attitude``: `q̇ = ½ q ⊗ (0, ω)`. The Earth's own rotation
    /// (7.3e-5 rad/s) is not simulated: the world frame is treated as inertial.
    public var rotationRate: Vector3
    /// Gravity in g, device frame, Core Motion's sign: `Rᵀ · (0, 0, −1)`; face up reads (0, 0, −1).
    public var gravity: Vector3
    /// The user's acceleration in g, device frame, Core Motion's sign: the accelerometer reads
    /// `gravity + userAcceleration`, so this is `Rᵀ · (−a / 9.80665)` for a true acceleration `a`
    /// in m/s² (world frame).
    public var userAcceleration: Vector3
    /// The gyro bias at this time, rad/s, device frame: what the gyro reads on top of
    /// ``rotationRate`` apart from white noise.
    public var gyroBias: Vector3
    /// The magnetic field at the device, µT, device frame, without the device's own hard and soft
    /// iron: the Earth's field plus any active ``MagneticDisturbance``.
    public var magneticField: Vector3
    /// The Earth's field alone, µT, device frame: ``magneticField`` without the disturbances.
    public var earthMagneticField: Vector3
    /// The device's position, metres, world frame, relative to an arbitrary origin.
    public var position: Vector3
    /// The device's velocity, m/s, world frame: the derivative of ``position``.
    public var velocity: Vector3
    /// The device's true kinematic acceleration, m/s², world frame: the derivative of ``velocity``.
    public var acceleration: Vector3

    /// Creates a truth record (used by the simulator; public for tests that build expectations).
    public init(
        timestamp: Double, attitude: Quaternion, rotationRate: Vector3, gravity: Vector3,
        userAcceleration: Vector3, gyroBias: Vector3, magneticField: Vector3,
        earthMagneticField: Vector3, position: Vector3, velocity: Vector3, acceleration: Vector3
    ) {
        self.timestamp = timestamp
        self.attitude = attitude
        self.rotationRate = rotationRate
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.gyroBias = gyroBias
        self.magneticField = magneticField
        self.earthMagneticField = earthMagneticField
        self.position = position
        self.velocity = velocity
        self.acceleration = acceleration
    }
}

extension SimulationOptions {
    /// Standard gravity, m/s² (CGPM 1901): the g of every acceleration in the simulator.
    public static let standardGravity = 9.80665
}
