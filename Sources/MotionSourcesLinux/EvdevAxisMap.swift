import MotionFusion

/// How a controller driver's motion axes map to Core Motion's device axes.
///
/// Core Motion's axes for a handheld controller, as for a phone lying in the same place: x to the
/// right, y forward (away from the player), z up out of the face with the buttons. Controller
/// drivers report acceleration as the *reaction* to gravity (about +1 g on the axis pointing up);
/// Core Motion reports the gravity vector (face up reads z ≈ −1), so their acceleration is negated
/// after the axes are mapped. Rotation rate keeps its sign (right-handed in both frames).
///
/// Other evdev accelerometers (a laptop's `lis3lv02d`, `hdaps`, a uinput test device that udev tags
/// `ID_INPUT_ACCELEROMETER`) follow the same convention as IIO, which iio-sensor-proxy reads them
/// with: upright reads y < 0, so no negation and no axis change.
///
/// | driver | node name | driver frame (at rest, face up) | accel units | gyro units | Core Motion (x, y, z) from driver |
/// |---|---|---|---|---|---|
/// | hid-playstation, hid-sony (DualShock 3/4, DualSense) | `… Motion Sensors` | X right, Y up, Z toward the player | 8192 per g (DS4/DualSense), 113 per g (DS3) | 1024 per °/s | accel −(X, −Z, Y); gyro (RX, −RZ, RY) |
/// | hid-steam (Steam Deck) | `Steam Deck Motion Sensors` | the same frame as hid-playstation (the driver remaps to it) | 16384 per g | 16 per °/s | as hid-playstation |
/// | hid-nintendo (Joy-Con, Pro Controller) | `… (IMU)` / `… IMU` | X forward, Y left, Z up | 4096 per g | 14247 per °/s (values ×1000) | accel −(−Y, X, Z); gyro (−RY, RX, RZ) |
/// | anything else (laptop and test accelerometers) | | the IIO convention | the node's resolution | the node's resolution | accel (X, Y, Z); gyro (RX, RY, RZ) |
///
/// Units always come from each axis's `absinfo.resolution`; the table's numbers are what those
/// drivers set. A per-node override matrix (``LinuxDiscoveryOptions/mountMatrixOverrides``) replaces
/// the axis map for chips the table gets wrong.
package struct EvdevAxisMap: Sendable, Hashable {
    /// Which row of the table.
    package var driverFamily: String
    /// Driver axes → Core Motion axes, before the acceleration negation.
    package var matrix: MountMatrix
    /// `true` for controller drivers, which read +1 g on the axis pointing up.
    package var negatesAcceleration: Bool

    /// Creates a map.
    package init(driverFamily: String, matrix: MountMatrix, negatesAcceleration: Bool = true) {
        self.driverFamily = driverFamily
        self.matrix = matrix
        self.negatesAcceleration = negatesAcceleration
    }

    /// Sony (hid-playstation, hid-sony) and Steam Deck (hid-steam).
    package static let playstation = EvdevAxisMap(driverFamily: "hid-playstation", matrix: MountMatrix(Vector3(1, 0, 0), Vector3(0, 0, -1), Vector3(0, 1, 0)))
    /// Steam Deck: the same frame as PlayStation.
    package static let steam = EvdevAxisMap(driverFamily: "hid-steam", matrix: playstation.matrix)
    /// Nintendo (hid-nintendo).
    package static let nintendo = EvdevAxisMap(driverFamily: "hid-nintendo", matrix: MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1)))
    /// Unknown drivers.
    package static let generic = EvdevAxisMap(driverFamily: "generic", matrix: .identity, negatesAcceleration: false)

    /// Picks the map for a node from its driver name, or failing that its name and vendor.
    package static func forNode(_ id: EvdevIdentity) -> EvdevAxisMap {
        let d = id.driver ?? ""
        if d.contains("playstation") || d.contains("sony") { return .playstation }
        if d.contains("steam") { return .steam }
        if d.contains("nintendo") { return .nintendo }
        switch id.vendor {
        case 0x054c: return .playstation
        case 0x057e: return .nintendo
        case 0x28de: return .steam
        default: break
        }
        let n = id.name.lowercased()
        if n.contains("nintendo") || n.contains("joy-con") { return .nintendo }
        if n.contains("steam") { return .steam }
        if n.contains("playstation") || n.contains("dualsense") || n.contains("wireless controller") { return .playstation }
        return .generic
    }

    /// Core Motion acceleration (g) from driver values already divided by resolution (g). A negated
    /// zero comes out as 0, not −0.
    @inlinable
    package func acceleration(_ driver: Vector3) -> Vector3 {
        (negatesAcceleration ? -matrix.apply(driver) : matrix.apply(driver)) + .zero
    }

    /// Core Motion rotation rate (rad/s) from driver values in rad/s.
    @inlinable
    package func rotationRate(_ driver: Vector3) -> Vector3 { matrix.apply(driver) + .zero }
}
