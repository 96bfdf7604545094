import ArgumentParser
import MotionFusion
import MotionRecordingFormats
import OpenCoreMotion

// The options several commands take, each defined once: one parser, one range, one error message.
// A refused value is reported by ArgumentParser as one line naming the option and the reason,
// `The value '10,abc,20' is invalid for '--location <lat,lon>': …`, exit status 1 (see ExitStatus).

/// A reference frame named on the command line (`--reference-frame`).
///
/// Accepts the Core Motion names (`xMagneticNorthZVertical`) or the same in dashed lower case
/// (`x-magnetic-north-z-vertical`), compared without case, and `enu` (east–north–up, which only
/// `fuse` writes). The names come from the one table of ``AttitudeReferenceFrame/named``.
package struct ReferenceFrameArgument: ExpressibleByArgument, Sendable, Hashable {
    /// The frame; true north with declination 0 (the location gives the real one).
    package var frame: AttitudeReferenceFrame

    /// Parses `argument` as ``parse(_:)`` does; `nil` when that refuses it.
    package init?(argument: String) {
        guard let frame = AttitudeReferenceFrame(name: argument) else { return nil }
        self.frame = frame
    }

    /// The accepted names, for help and shell completion.
    package static var allValueStrings: [String] { AttitudeReferenceFrame.named.map(\.name) }

    /// The frame's Core Motion name.
    package var defaultValueDescription: String { frame.name }

    /// The Core Motion frame, or `nil` for `enu`, which Core Motion does not have.
    package var coreMotionFrame: CMAttitudeReferenceFrame? { CMAttitudeReferenceFrame(frame) }

    /// The dashed lower-case name (`x-magnetic-north-z-vertical`) of a single Core Motion frame, from
    /// the same table; `nil` for a set of several frames or none.
    package static func dashedName(of frame: CMAttitudeReferenceFrame) -> String? {
        guard let name = frame.name else { return nil }
        var dashed = ""
        for c in name {
            if c.isUppercase { dashed += "-" + c.lowercased() } else { dashed.append(c) }
        }
        return dashed
    }

    /// The frame named `text`, or an ``OptionValue/Refusal`` listing the names.
    package static func parse(_ text: String) throws -> ReferenceFrameArgument {
        guard let argument = ReferenceFrameArgument(argument: text) else {
            throw OptionValue.Refusal("must be one of \(allValueStrings.joined(separator: ", ")) (or dashed: x-magnetic-north-z-vertical)")
        }
        return argument
    }
}

/// A place on Earth named on the command line (`--location LAT,LON`), for true north.
///
/// Exactly two numbers separated by a comma, in degrees: latitude −90…90 (north positive),
/// longitude −180…180 (east positive); spaces around them are ignored.
package struct LocationArgument: ExpressibleByArgument, Sendable, Hashable {
    /// Degrees north, −90…90.
    package var latitude: Double
    /// Degrees east, −180…180.
    package var longitude: Double

    /// Parses `argument` as ``parse(_:)`` does; `nil` when that refuses it.
    package init?(argument: String) {
        guard let location = try? Self.parse(argument) else { return nil }
        self = location
    }

    private init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The location for `CMMotionManager.location` (altitude 0).
    package var location: CMMotionManager.Location {
        CMMotionManager.Location(latitude: latitude, longitude: longitude)
    }

    /// The location in `text`, or an ``OptionValue/Refusal`` saying what is wrong with it.
    package static func parse(_ text: String) throws -> LocationArgument {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let latitude = parts[0], let longitude = parts[1], latitude.isFinite, longitude.isFinite else {
            throw OptionValue.Refusal("must be LAT,LON: two numbers of degrees, for example 52.52,13.40")
        }
        guard (-90...90).contains(latitude) else { throw OptionValue.Refusal("the latitude must be from -90 to 90 degrees") }
        guard (-180...180).contains(longitude) else { throw OptionValue.Refusal("the longitude must be from -180 to 180 degrees") }
        return LocationArgument(latitude: latitude, longitude: longitude)
    }
}

/// `--reference-frame F` and `--location LAT,LON`, for the commands that compute device motion
/// (`stream`, `demo`, `fuse`). Without `--reference-frame` each command picks its default (see its
/// help). True north needs a location: without one the command line is refused, as Core Motion
/// refuses such updates (`CMErrorTrueNorthNotAvailable`, 102).
package struct ReferenceFrameOptions: ParsableArguments {
    /// The frame asked for, `nil` for the command's default.
    @Option(
        name: .customLong("reference-frame"),
        help: ArgumentHelp(
            "Reference frame of device motion: xArbitraryZVertical, xArbitraryCorrectedZVertical, xMagneticNorthZVertical, xTrueNorthZVertical (needs --location) or enu (fuse only); dashed lower case such as x-magnetic-north-z-vertical is accepted too.",
            valueName: "frame"
        ),
        completion: .list(ReferenceFrameArgument.allValueStrings),
        transform: ReferenceFrameArgument.parse
    )
    package var referenceFrame: ReferenceFrameArgument?

    /// Where the device is, for true north.
    // Unconditional: a southern latitude (-33.9,18.4) is a value, not an option.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Latitude and longitude in degrees, for xTrueNorthZVertical, e.g. 52.52,13.40.", valueName: "lat,lon"),
        transform: LocationArgument.parse
    )
    package var location: LocationArgument?

    package init() {}

    /// Refuses true north without a location.
    package func validate() throws {
        if case .trueNorth = referenceFrame?.frame, location == nil {
            throw ValidationError("xTrueNorthZVertical needs --location LAT,LON (Core Motion error 102: true north not available)")
        }
    }

    /// The Core Motion frame asked for, `nil` when none was; refuses `enu`, which only `fuse` writes.
    package func coreMotionFrame() throws -> CMAttitudeReferenceFrame? {
        guard let referenceFrame else { return nil }
        guard let frame = referenceFrame.coreMotionFrame else {
            throw ValidationError("--reference-frame enu is for fuse only: device motion here is in a Core Motion frame")
        }
        return frame
    }
}

/// `--duration S` of the commands that run until Ctrl-C (`stream`, `demo`, `publish`): more than 0,
/// at most ``OptionValue/maximumSeconds``.
package struct DurationOption: ParsableArguments {
    /// Seconds to run, `nil` for until Ctrl-C or the end of a recording.
    @Option(parsing: .unconditional, help: "Stop after this many seconds (default: until Ctrl-C or the end of a recording).",
            transform: OptionValue.seconds())
    package var duration: Double?

    package init() {}
}

/// `--input-format FMT` of the commands that read a recording (`fuse`, `bench read`): one of
/// ``RecordingFormat``'s names, without case; without it the format is detected from the content.
package struct InputFormatOption: ParsableArguments {
    /// The format forced, `nil` to detect it.
    @Option(
        name: .customLong("input-format"),
        help: ArgumentHelp("Read the input as this format instead of detecting it from its content: \(RecordingFormat.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "fmt"),
        completion: .list(RecordingFormat.allCases.map(\.rawValue)),
        transform: InputFormatOption.parse
    )
    package var inputFormat: RecordingFormat?

    package init() {}

    /// The format named `text` (any case), or an ``OptionValue/Refusal`` listing the names.
    package static func parse(_ text: String) throws -> RecordingFormat {
        guard let format = RecordingFormat(rawValue: text.lowercased()) else {
            throw OptionValue.Refusal("must be one of \(RecordingFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return format
    }
}
