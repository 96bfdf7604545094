import MotionFusion

/// The reference frames of `coremotion fuse`, named like `CMAttitudeReferenceFrame`.
public enum FuseReferenceFrame: Sendable, Hashable {
    /// x arbitrary and fixed at start, z up; no magnetometer.
    case arbitrary
    /// x arbitrary (the heading at start), z up; the magnetometer stops yaw drift.
    case arbitraryCorrected
    /// x magnetic north, y west, z up.
    case magneticNorth
    /// x true north, y west, z up; `declination` in radians, positive east.
    case trueNorth(declination: Double)
    /// x east, y north, z up (BROAD's earth frame), from the magnetic-north frame when the magnetometer
    /// is used, else from the arbitrary frame.
    case enu

    /// Parses a `CMAttitudeReferenceFrame` name (`xArbitraryZVertical`, `xArbitraryCorrectedZVertical`,
    /// `xMagneticNorthZVertical`, `xTrueNorthZVertical`; case-insensitive, with or without the `x`
    /// prefix) or `enu`. True north gets declination 0 here; set it with ``withDeclination(_:)``.
    public init?(name: String) {
        let n = name.lowercased().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "_", with: "")
        switch n {
        case "xarbitraryzvertical", "arbitraryzvertical", "arbitrary": self = .arbitrary
        case "xarbitrarycorrectedzvertical", "arbitrarycorrectedzvertical", "arbitrarycorrected": self = .arbitraryCorrected
        case "xmagneticnorthzvertical", "magneticnorthzvertical", "magneticnorth": self = .magneticNorth
        case "xtruenorthzvertical", "truenorthzvertical", "truenorth": self = .trueNorth(declination: 0)
        case "enu": self = .enu
        default: return nil
        }
    }

    /// Whether the frame needs the magnetometer.
    public var usesMagnetometer: Bool {
        switch self {
        case .arbitrary: false
        case .arbitraryCorrected, .magneticNorth, .trueNorth: true
        case .enu: true
        }
    }

    /// Whether the frame's x axis points to a north (heading reported in degrees; otherwise −1).
    public var isNorthReferenced: Bool {
        switch self {
        case .magneticNorth, .trueNorth, .enu: true
        case .arbitrary, .arbitraryCorrected: false
        }
    }

    /// The attitude device → a north-west-up frame (magnetic or true) recovered from an attitude in this
    /// frame, for the heading; `nil` in the arbitrary frames.
    public func northWestUp(from q: Quaternion) -> Quaternion? {
        switch self {
        case .arbitrary, .arbitraryCorrected: nil
        case .magneticNorth, .trueNorth: q
        case .enu: Quaternion.aboutZ(-Double.pi / 2) * q
        }
    }

    /// The attitude in this frame from a filter estimate.
    public func attitude(_ e: AttitudeEstimate) -> Quaternion {
        switch self {
        case .arbitrary: e.quaternion6D
        case .arbitraryCorrected: e.quaternionArbitraryCorrected
        case .magneticNorth: e.quaternion
        case .trueNorth(let d): e.quaternionTrueNorth(declination: d)
        case .enu: e.quaternionENU
        }
    }

    /// The attitude in this frame from a magnetic-north (9D) or arbitrary (6D) attitude.
    public func attitude(fromNorthOrArbitrary q: Quaternion) -> Quaternion {
        switch self {
        case .arbitrary, .arbitraryCorrected, .magneticNorth: q
        case .trueNorth(let d): Quaternion.aboutZ(-d) * q
        case .enu: Quaternion.aboutZ(Double.pi / 2) * q
        }
    }
}
