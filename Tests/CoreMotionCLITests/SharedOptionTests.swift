import CoreMotionCLI
import Foundation
import OpenCoreMotion
import MotionRecordingFormats
import MotionTestSupport
import Testing

/// The options several commands take (`--reference-frame`, `--location`, `--duration`,
/// `--input-format`) are one definition each: every command that takes one refuses the same values
/// with the same line on stderr, exit status 1 and nothing on stdout. Run through the real executable.
@Suite struct SharedOptionTests {
    /// A command line that stops at parsing or validation, before any source opens or file is read.
    static let stream = ["stream", "--source", "sim:still", "--sensor", "device-motion"]
    static let demo = ["demo", "--source", "sim:still", "--no-dashboard"]
    static let fuse = ["fuse", "/nonexistent/recording.csv"]
    static let publish = ["publish", "--source", "sim:still", "--to", "mqtt://127.0.0.1:1/t"]
    static let benchRead = ["bench", "read", "/nonexistent/recording.csv"]

    static let deviceMotionCommands = [stream, demo, fuse]

    /// Runs `command + arguments`; expects exit status 1, no output and exactly `line` on stderr.
    static func expectRefusal(_ command: [String], _ arguments: [String], _ line: String,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let r = try await CLI.run(command + arguments, timeout: 30)
        #expect(r.status == 1, "\(command + arguments): status \(r.status)", sourceLocation: sourceLocation)
        #expect(r.stdout.isEmpty, "\(command + arguments): \(r.stdout)", sourceLocation: sourceLocation)
        #expect(r.stderr == line + "\n", "\(command + arguments)", sourceLocation: sourceLocation)
    }

    @Test(arguments: deviceMotionCommands)
    func aLocationMustBeExactlyTwoNumbers(command: [String]) async throws {
        // `fuse` dropped the word that is not a number and accepted 10,20.
        for bad in ["10,abc,20", "10", "10,", "abc,20", "10,20,30", "nan,20", "10,inf"] {
            try await Self.expectRefusal(command, ["--location", bad],
                "Error: The value '\(bad)' is invalid for '--location <lat,lon>': must be LAT,LON: two numbers of degrees, for example 52.52,13.40")
        }
    }

    @Test(arguments: deviceMotionCommands)
    func aLocationIsOnEarth(command: [String]) async throws {
        // `fuse` took longitudes up to 360 and `stream` only to 180.
        try await Self.expectRefusal(command, ["--location", "10,200"],
            "Error: The value '10,200' is invalid for '--location <lat,lon>': the longitude must be from -180 to 180 degrees")
        try await Self.expectRefusal(command, ["--location", "-90.5,0"],
            "Error: The value '-90.5,0' is invalid for '--location <lat,lon>': the latitude must be from -90 to 90 degrees")
    }

    @Test(arguments: deviceMotionCommands)
    func anUnknownReferenceFrameIsRefusedWithTheNames(command: [String]) async throws {
        try await Self.expectRefusal(command, ["--reference-frame", "sideways"],
            "Error: The value 'sideways' is invalid for '--reference-frame <frame>': must be one of xArbitraryZVertical, xArbitraryCorrectedZVertical, xMagneticNorthZVertical, xTrueNorthZVertical, enu (or dashed: x-magnetic-north-z-vertical)")
    }

    @Test(arguments: deviceMotionCommands)
    func trueNorthNeedsALocationInEitherSpelling(command: [String]) async throws {
        for name in ["xTrueNorthZVertical", "x-true-north-z-vertical"] {
            try await Self.expectRefusal(command, ["--reference-frame", name],
                "Error: xTrueNorthZVertical needs --location LAT,LON (Core Motion error 102: true north not available)")
        }
    }

    @Test func enuIsFuseOnly() async throws {
        for command in [Self.stream, Self.demo] {
            try await Self.expectRefusal(command, ["--reference-frame", "enu"],
                "Error: --reference-frame enu is for fuse only: device motion here is in a Core Motion frame")
        }
        // fuse takes it, and gets as far as the missing recording.
        let r = try await CLI.run(Self.fuse + ["--reference-frame", "enu", "--location", "52.52,13.40"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Error: /nonexistent/recording.csv"), "\(r.stderr)")
    }

    @Test func theDashedSpellingOfStreamIsTheCamelCaseOfFuse() async throws {
        // Both commands take both spellings: fuse the dashed one, stream the Core Motion one.
        let fused = try await CLI.run(Self.fuse + ["--reference-frame", "x-arbitrary-corrected-z-vertical"])
        #expect(fused.stderr.hasPrefix("Error: /nonexistent/recording.csv"), "\(fused.stderr)")
        let streamed = try await CLI.run(["stream", "--source", "sim:still", "--sensor", "device-motion", "--duration", "0.05",
                                          "--interval", "0.01", "--reference-frame", "xMagneticNorthZVertical"])
        #expect(streamed.status == 0, "\(streamed.stderr)")
        #expect(streamed.stdout.split(separator: "\n").count >= 2, "\(streamed.stdout)")
    }

    @Test(arguments: [stream, demo, publish])
    func aDurationIsRefusedAlikeEverywhere(command: [String]) async throws {
        try await Self.expectRefusal(command, ["--duration", "0"],
            "Error: The value '0' is invalid for '--duration <duration>': must be more than 0 seconds")
        try await Self.expectRefusal(command, ["--duration", "-1"],
            "Error: The value '-1' is invalid for '--duration <duration>': must not be negative (seconds)")
    }

    @Test(arguments: [fuse, benchRead])
    func anInputFormatIsOneOfTheFormatsInAnyCase(command: [String]) async throws {
        let names = RecordingFormat.allCases.map(\.rawValue).joined(separator: ", ")
        try await Self.expectRefusal(command, ["--input-format", "excel"],
            "Error: The value 'excel' is invalid for '--input-format <fmt>': must be one of \(names)")
        // `bench read` refused upper case, `fuse` took it.
        let r = try await CLI.run(command + ["--input-format", "CSV"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Error: /nonexistent/recording.csv"), "\(r.stderr)")
    }

    @Test func everyFrameNameRoundTrips() {
        #expect(AttitudeReferenceFrame.named.map(\.name)
            == ["xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical", "xTrueNorthZVertical", "enu"])
        for frame in AttitudeReferenceFrame.named {
            #expect(AttitudeReferenceFrame(name: frame.name) == frame)
        }
        #expect(AttitudeReferenceFrame(name: "x-magnetic-north-z-vertical") == .magneticNorth)
        #expect(AttitudeReferenceFrame(name: "MAGNETIC_NORTH") == .magneticNorth)
        #expect(AttitudeReferenceFrame(name: "arbitraryCorrected") == .arbitraryCorrected)
        #expect(AttitudeReferenceFrame(name: "x") == nil)
        #expect(AttitudeReferenceFrame(name: "") == nil)
        #expect(AttitudeReferenceFrame(name: "zvertical") == nil)
        #expect(CMAttitudeReferenceFrame.named.map(\.name) == ["xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical", "xTrueNorthZVertical"])
        #expect(ReferenceFrameArgument.dashedName(of: .xArbitraryCorrectedZVertical) == "x-arbitrary-corrected-z-vertical")
        #expect(ReferenceFrameArgument.dashedName(of: [.xArbitraryZVertical, .xMagneticNorthZVertical]) == nil)
    }
}
