/// Whether the app may use a motion service that needs the user's permission, such as
/// ``CMSensorRecorder``. Raw values are Apple's.
@frozen
public enum CMAuthorizationStatus: Int, Sendable, Hashable {
    /// The user has not been asked yet.
    case notDetermined = 0
    /// Access is impossible on this device (on Linux: no sensor for the service, such as no
    /// accelerometer or gyroscope for ``CMSensorRecorder``).
    case restricted = 1
    /// The user refused access.
    case denied = 2
    /// Access is granted.
    case authorized = 3
}
