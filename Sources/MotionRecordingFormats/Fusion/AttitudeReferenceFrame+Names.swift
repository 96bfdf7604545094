import MotionFusion

/// The names of the reference frames, in one table for every user: the command line
/// (`--reference-frame`), `fuse`'s messages and the dashboard's wire names.
extension AttitudeReferenceFrame {
    /// Every frame with a name, in Core Motion's order, then `enu`; true north with declination 0.
    package static let named: [AttitudeReferenceFrame] = [.arbitrary, .arbitraryCorrected, .magneticNorth, .trueNorth(declination: 0), .eastNorthUp]

    /// The Core Motion name of the frame (`xArbitraryZVertical`, `xArbitraryCorrectedZVertical`,
    /// `xMagneticNorthZVertical`, `xTrueNorthZVertical`), or `enu` for ``eastNorthUp``, which Core
    /// Motion does not have.
    package var name: String {
        switch self {
        case .arbitrary: "xArbitraryZVertical"
        case .arbitraryCorrected: "xArbitraryCorrectedZVertical"
        case .magneticNorth: "xMagneticNorthZVertical"
        case .trueNorth: "xTrueNorthZVertical"
        case .eastNorthUp: "enu"
        }
    }

    /// The frame called `name`: its Core Motion name, also in dashed lower case
    /// (`x-magnetic-north-z-vertical`) and without the `x` prefix or the `ZVertical` suffix
    /// (`magneticNorth`), compared without case, dashes and underscores; or `enu`. True north gets
    /// declination 0. `nil` for any other text.
    package init?(name: String) {
        func key(_ s: String) -> String { String(s.lowercased().filter { $0 != "-" && $0 != "_" }) }
        let wanted = key(name)
        let found = Self.named.first { frame in
            let full = key(frame.name)
            guard full.hasPrefix("x"), full.hasSuffix("zvertical") else { return full == wanted }
            let bare = full.dropFirst()
            return [full, String(bare), String(bare.dropLast("zvertical".count))].contains(wanted)
        }
        guard let found else { return nil }
        self = found
    }
}
