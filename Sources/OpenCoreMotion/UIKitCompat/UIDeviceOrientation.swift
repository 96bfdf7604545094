/// The physical orientation of the device, as UIKit's `UIDeviceOrientation` (same raw values).
public enum UIDeviceOrientation: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not known: notifications not begun, or no decisive reading yet.
    case unknown = 0
    /// Upright, the bottom edge (home button) down.
    case portrait = 1
    /// Upside down, the bottom edge up.
    case portraitUpsideDown = 2
    /// On its side with the bottom edge (home button) on the right: the right edge is up.
    case landscapeLeft = 3
    /// On its side with the bottom edge (home button) on the left: the left edge is up.
    case landscapeRight = 4
    /// Lying flat, screen up.
    case faceUp = 5
    /// Lying flat, screen down.
    case faceDown = 6

    /// `true` for the two portrait orientations.
    public var isPortrait: Bool { self == .portrait || self == .portraitUpsideDown }
    /// `true` for the two landscape orientations.
    public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }
    /// `true` for face up and face down.
    public var isFlat: Bool { self == .faceUp || self == .faceDown }
    /// `true` for portrait and landscape (what an interface can rotate to).
    public var isValidInterfaceOrientation: Bool { isPortrait || isLandscape }

    /// `portrait`, `landscapeLeft`, … (the Swift case name).
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .portrait: "portrait"
        case .portraitUpsideDown: "portraitUpsideDown"
        case .landscapeLeft: "landscapeLeft"
        case .landscapeRight: "landscapeRight"
        case .faceUp: "faceUp"
        case .faceDown: "faceDown"
        }
    }
}
