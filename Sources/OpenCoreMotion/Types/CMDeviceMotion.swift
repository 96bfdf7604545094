import Foundation
import MotionFusion
import Synchronization

/// The result of sensor fusion: attitude, the split of acceleration into gravity and user
/// acceleration, bias-free rotation rate, calibrated magnetic field and heading.
///
/// As on Apple platforms the class and its properties are `open`: a test can subclass it, call
/// `super.init()` and override ``attitude`` or any other property. `init()` creates a sample at rest
/// in nothing: identity attitude, every vector zero, heading 0 (the zero of Apple's `alloc`/`init`).
/// It conforms to `NSCopying` and `NSSecureCoding` through ``CMLogItem``.
open class CMDeviceMotion: CMLogItem {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    /// Where the sensors sit, as Core Motion names it.
    public enum SensorLocation: Int, Sendable {
        /// The device itself.
        case `default` = 0
        /// The left earbud of a headphone.
        case headphoneLeft = 1
        /// The right earbud of a headphone.
        case headphoneRight = 2
    }

    /// The attitude object, made on first read from ``storedRotation`` (or given at creation): a
    /// delivered sample costs one allocation, not four (a `CMAttitude` holds a lock). Made at most
    /// once, atomically, so every reader gets the same object and a `multiply(byInverseOf:)` on it is
    /// seen by the next reader.
    private let storedAttitude = AtomicLazyReference<CMAttitude>()
    private let storedRotation: Quaternion
    private let storedRotationRate: CMRotationRate
    private let storedGravity: CMAcceleration
    private let storedUserAcceleration: CMAcceleration
    private let storedMagneticField: CMCalibratedMagneticField
    private let storedHeading: Double
    private let storedHeadingAccuracy: Double
    private let storedSensorLocation: SensorLocation

    /// The device's orientation in the reference frame the updates were started with.
    open var attitude: CMAttitude {
        storedAttitude.load() ?? storedAttitude.storeIfNil(CMAttitude(rotation: storedRotation))
    }
    /// Rotation rate in rad/s, device frame, with the gyroscope's bias removed.
    open var rotationRate: CMRotationRate { storedRotationRate }
    /// Gravity in g, device frame, pointing down: `Rᵀ · (0, 0, −1)`.
    open var gravity: CMAcceleration { storedGravity }
    /// Acceleration the user gives the device, in g, device frame: accelerometer − ``gravity``.
    open var userAcceleration: CMAcceleration { storedUserAcceleration }
    /// The magnetic field with the device's hard and soft iron removed; zero and
    /// ``CMMagneticFieldCalibrationAccuracy/uncalibrated`` in ``CMAttitudeReferenceFrame/xArbitraryZVertical``.
    open var magneticField: CMCalibratedMagneticField { storedMagneticField }
    /// Heading in degrees, 0…360 clockwise from north, in the north frames; negative (−1) in the
    /// arbitrary frames, where there is no north.
    open var heading: Double { storedHeading }
    /// The largest expected error of ``heading``, in degrees; negative (−1) when ``heading`` is invalid
    /// (the arbitrary frames). On Linux it is derived from the magnetometer's calibration accuracy
    /// (high 10°, medium 20°, low 45°, uncalibrated −1), not measured.
    open var headingAccuracy: Double { storedHeadingAccuracy }
    /// Where the sensors are; always ``SensorLocation/default`` here.
    open var sensorLocation: SensorLocation { storedSensorLocation }

    /// Creates an empty sample, as Apple's `init()`: identity attitude, zero vectors, zero
    /// magnetic field (accuracy raw value 0), heading and its accuracy 0, timestamp 0.
    public override init() {
        storedRotation = .identity
        storedRotationRate = CMRotationRate()
        storedGravity = CMAcceleration()
        storedUserAcceleration = CMAcceleration()
        storedMagneticField = CMCalibratedMagneticField()
        storedHeading = 0
        storedHeadingAccuracy = 0
        storedSensorLocation = .default
        super.init()
    }

    /// Creates a sample (beyond Apple). `headingAccuracy` defaults to the one ``headingAccuracy``
    /// documents for `heading` and `magneticField`.
    public init(
        timestamp: TimeInterval,
        attitude: CMAttitude,
        rotationRate: CMRotationRate,
        gravity: CMAcceleration,
        userAcceleration: CMAcceleration,
        magneticField: CMCalibratedMagneticField = CMCalibratedMagneticField(field: CMMagneticField(), accuracy: .uncalibrated),
        heading: Double = -1,
        headingAccuracy: Double? = nil,
        sensorLocation: SensorLocation = .default
    ) {
        storedRotation = .identity
        _ = storedAttitude.storeIfNil(attitude)
        storedRotationRate = rotationRate
        storedGravity = gravity
        storedUserAcceleration = userAcceleration
        storedMagneticField = magneticField
        storedHeading = heading
        storedHeadingAccuracy = headingAccuracy ?? Self.headingAccuracy(heading: heading, accuracy: magneticField.accuracy)
        storedSensorLocation = sensorLocation
        super.init(timestamp: timestamp)
    }

    /// Creates a sample whose attitude is made from `rotation` (device → reference, normalised) when
    /// first read: the hub's delivery path.
    init(timestamp: TimeInterval, rotation: Quaternion, rotationRate: CMRotationRate, gravity: CMAcceleration,
         userAcceleration: CMAcceleration, magneticField: CMCalibratedMagneticField, heading: Double) {
        storedRotation = rotation
        storedRotationRate = rotationRate
        storedGravity = gravity
        storedUserAcceleration = userAcceleration
        storedMagneticField = magneticField
        storedHeading = heading
        storedHeadingAccuracy = Self.headingAccuracy(heading: heading, accuracy: magneticField.accuracy)
        storedSensorLocation = .default
        super.init(timestamp: timestamp)
    }

    /// The heading accuracy (degrees) documented on ``headingAccuracy``.
    static func headingAccuracy(heading: Double, accuracy: CMMagneticFieldCalibrationAccuracy) -> Double {
        guard heading >= 0 else { return -1 }
        switch accuracy {
        case .high: return 10
        case .medium: return 20
        case .low: return 45
        case .uncalibrated: return -1
        }
    }

    /// Decodes a sample written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedRotation = .identity
        _ = storedAttitude.storeIfNil(coder.decodeObject(of: CMAttitude.self, forKey: "attitude") ?? CMAttitude())
        let r = coder.decodeVector(forKey: "rotationRate")
        storedRotationRate = CMRotationRate(x: r.x, y: r.y, z: r.z)
        let g = coder.decodeVector(forKey: "gravity")
        storedGravity = CMAcceleration(x: g.x, y: g.y, z: g.z)
        let u = coder.decodeVector(forKey: "userAcceleration")
        storedUserAcceleration = CMAcceleration(x: u.x, y: u.y, z: u.z)
        let m = coder.decodeVector(forKey: "magneticField")
        let accuracy = CMMagneticFieldCalibrationAccuracy(rawValue: coder.decodeInt32(forKey: "magneticField.accuracy")) ?? .uncalibrated
        storedMagneticField = CMCalibratedMagneticField(field: CMMagneticField(x: m.x, y: m.y, z: m.z), accuracy: accuracy)
        storedHeading = coder.decodeDouble(forKey: "heading")
        storedHeadingAccuracy = coder.decodeDouble(forKey: "headingAccuracy")
        storedSensorLocation = SensorLocation(rawValue: coder.decodeInteger(forKey: "sensorLocation")) ?? .default
        super.init(coder: coder)
    }

    /// Writes the sample through its accessors (so a subclass's overrides are what is written).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(attitude, forKey: "attitude")
        let r = rotationRate, g = gravity, u = userAcceleration, m = magneticField
        coder.encodeVector(r.x, r.y, r.z, forKey: "rotationRate")
        coder.encodeVector(g.x, g.y, g.z, forKey: "gravity")
        coder.encodeVector(u.x, u.y, u.z, forKey: "userAcceleration")
        coder.encodeVector(m.field.x, m.field.y, m.field.z, forKey: "magneticField")
        coder.encode(m.accuracy.rawValue, forKey: "magneticField.accuracy")
        coder.encode(heading, forKey: "heading")
        coder.encode(headingAccuracy, forKey: "headingAccuracy")
        coder.encode(sensorLocation.rawValue, forKey: "sensorLocation")
    }

    open override var description: String {
        let g = gravity
        return "CMDeviceMotion(\(attitude), gravity: (\(g.x), \(g.y), \(g.z)), heading: \(heading), timestamp: \(timestamp))"
    }
}
