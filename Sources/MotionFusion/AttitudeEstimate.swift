/// Everything ``AttitudeFilter`` estimates after its latest sample, in Core Motion's conventions.
///
/// Frames: the attitude maps device → reference, reference z up. In 9D (magnetometer in use and
/// initialised) the reference is magnetic north–west–up (Core Motion's `xMagneticNorthZVertical`);
/// otherwise x is an arbitrary horizontal direction fixed at start (`xArbitraryZVertical`).
/// Values only; safe from any thread.
public struct AttitudeEstimate: Sendable, Hashable {
    /// Attitude device → reference (see the type's discussion for the reference frame).
    public var quaternion: Quaternion
    /// Attitude device → arbitrary z-up frame fixed at start, never using the magnetometer.
    public var quaternion6D: Quaternion
    /// Attitude device → the arbitrary frame whose drift the magnetometer corrects
    /// (`xArbitraryCorrectedZVertical`): equal to ``quaternion6D`` at the first magnetometer sample.
    public var quaternionArbitraryCorrected: Quaternion
    /// Whether ``quaternion`` is referenced to magnetic north.
    public var isMagneticNorthReferenced: Bool
    /// Gravity in the device frame, g: `Rᵀ · (0, 0, −1)`.
    public var gravity: Vector3
    /// Accelerometer minus gravity, device frame, g (Core Motion sign).
    public var userAcceleration: Vector3
    /// Gyroscope minus its estimated bias, device frame, rad/s.
    public var rotationRate: Vector3
    /// Estimated gyroscope bias, device frame, rad/s.
    public var gyroBias: Vector3
    /// Calibrated magnetic field, device frame, µT (raw while uncalibrated).
    public var magneticField: Vector3
    /// Accuracy of ``magneticField``'s calibration.
    public var magneticFieldAccuracy: MagneticCalibrationAccuracy
    /// Whether the magnetometer currently sees a disturbed field (its heading corrections are suspended).
    public var isMagneticallyDisturbed: Bool
    /// Whether rest is detected.
    public var isAtRest: Bool

    /// Whether the magnetometer calibration needs the device to move (through varied orientations):
    /// magnetometer samples arrive but the calibration is below medium accuracy. Drives Core Motion's
    /// `CMErrorDeviceRequiresMovement` with `showsDeviceMovementDisplay`.
    public var calibrationNeedsMovement: Bool {
        hasMagneticField && magneticFieldAccuracy < .medium
    }

    /// Whether any magnetometer sample has been received.
    public var hasMagneticField: Bool

    /// Heading of the device in degrees [0, 360) clockwise from the reference x axis: its top, or its
    /// back when it stands upright (``Quaternion/compassHeading``). With ``isMagneticNorthReferenced``
    /// this is the magnetic heading.
    public var heading: Double { quaternion.compassHeading }

    /// Core Motion's roll, pitch and yaw of ``quaternion``, radians.
    public var eulerAngles: EulerAngles { quaternion.eulerAngles }

    /// Attitude device → ENU (x east, y north, z up), the convention of the BROAD benchmark:
    /// `q_ENU = q_z(+90°) ⊗ q_NWU`.
    public var quaternionENU: Quaternion { Quaternion.aboutZ(Double.pi / 2) * quaternion }

    /// Attitude device → true north–west–up given the magnetic declination (radians, positive east):
    /// `q_TN = q_z(−declination) ⊗ q_magnetic`.
    public func quaternionTrueNorth(declination: Double) -> Quaternion {
        Quaternion.aboutZ(-declination) * quaternion
    }
}
