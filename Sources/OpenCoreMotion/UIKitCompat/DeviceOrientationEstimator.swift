import Foundation
import MotionFusion

/// Decides the device orientation from accelerometer readings, with hysteresis.
///
/// The decision follows the behaviour of iio-sensor-proxy, which desktop Linux uses for screen
/// rotation, so both agree on real readings:
/// - the tilt of the x axis and of the y axis out of the horizontal plane are measured
///   (`atan2(x, √(y²+z²))` and `atan2(y, √(x²+z²))`, in degrees; the readings are in Core Motion's
///   frame, mount matrix applied);
/// - when exactly one of them exceeds the threshold (35°), it decides: x down (x > 0) is
///   ``UIDeviceOrientation/landscapeRight``, x up ``UIDeviceOrientation/landscapeLeft``, y down
///   (y < 0) ``UIDeviceOrientation/portrait``, y up ``UIDeviceOrientation/portraitUpsideDown``;
/// - when both exceed it (held at a diagonal), the reading is ambiguous and the previous
///   orientation is kept.
///
/// Beyond iio-sensor-proxy (which has no flat state), a device whose z axis is within
/// ``flatThreshold`` (30°) of vertical while neither x nor y passes the threshold is
/// ``UIDeviceOrientation/faceUp`` (z < 0) or ``UIDeviceOrientation/faceDown``; between that and the
/// 35° tilts the previous orientation is kept too, so no boundary flaps. Only the direction of the
/// reading counts, not its length (real drivers report odd magnitudes: the HP ENVY x360's HID hub
/// reads about 0.1 g at rest); a zero reading is ignored.
///
/// A value type with no I/O: safe to use from any thread by its owner.
public struct DeviceOrientationEstimator: Sendable {
    /// The current decision; ``UIDeviceOrientation/unknown`` until a decisive reading.
    public private(set) var orientation: UIDeviceOrientation = .unknown
    /// Tilt, in degrees, that the x or y axis must pass to decide portrait or landscape. Default 35.
    public var threshold: Double = 35
    /// Largest angle, in degrees, between the z axis and the vertical for face up or down. Default 30.
    public var flatThreshold: Double = 30

    /// Creates an estimator in the ``UIDeviceOrientation/unknown`` state.
    public init() {}

    /// Feeds one reading in g (Core Motion's sign: upright portrait reads y ≈ −1) and returns the
    /// orientation after it.
    @discardableResult
    public mutating func update(_ a: Vector3) -> UIDeviceOrientation {
        guard a.isFinite, a.lengthSquared > 0 else { return orientation }
        let deg = 180 / Double.pi
        let tiltX = atan2(a.x, (a.y * a.y + a.z * a.z).squareRoot()) * deg
        let tiltY = atan2(a.y, (a.x * a.x + a.z * a.z).squareRoot()) * deg
        let tiltZ = atan2(a.z, (a.x * a.x + a.y * a.y).squareRoot()) * deg
        let xPasses = abs(tiltX.rounded()) > threshold
        let yPasses = abs(tiltY.rounded()) > threshold
        if xPasses && yPasses { return orientation }
        if xPasses {
            orientation = tiltX > 0 ? .landscapeRight : .landscapeLeft
        } else if yPasses {
            orientation = tiltY < 0 ? .portrait : .portraitUpsideDown
        } else if abs(tiltZ) >= 90 - flatThreshold {
            orientation = tiltZ < 0 ? .faceUp : .faceDown
        }
        return orientation
    }

    /// Forgets the decision (back to ``UIDeviceOrientation/unknown``).
    public mutating func reset() { orientation = .unknown }
}
