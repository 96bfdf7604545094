import MotionFusion
import MotionRecordingFormats

extension CMAttitudeReferenceFrame {
    /// The single Core Motion frame of a MotionFusion frame; `nil` for
    /// `AttitudeReferenceFrame.eastNorthUp`, which Core Motion does not have. True north's declination
    /// is not part of a `CMAttitudeReferenceFrame` (the manager's `location` gives it).
    package init?(_ frame: AttitudeReferenceFrame) {
        switch frame {
        case .arbitrary: self = .xArbitraryZVertical
        case .arbitraryCorrected: self = .xArbitraryCorrectedZVertical
        case .magneticNorth: self = .xMagneticNorthZVertical
        case .trueNorth: self = .xTrueNorthZVertical
        case .eastNorthUp: return nil
        }
    }

    /// The four single frames by their Core Motion names (`xArbitraryZVertical` …), in Core Motion's
    /// order; the names come from MotionRecordingFormats' one table (`AttitudeReferenceFrame.named`).
    package static let named: [(frame: CMAttitudeReferenceFrame, name: String)] =
        AttitudeReferenceFrame.named.compactMap { frame in CMAttitudeReferenceFrame(frame).map { ($0, frame.name) } }

    /// The Core Motion name of a single frame (`xMagneticNorthZVertical`), `nil` for a set of several
    /// frames or none.
    package var name: String? {
        Self.named.first { $0.frame == self }?.name
    }
}
