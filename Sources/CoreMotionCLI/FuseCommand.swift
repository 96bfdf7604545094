import ArgumentParser
import Foundation
import MotionBenchmarks
import MotionFusion
import OpenCoreMotion
#if canImport(Glibc)
import Glibc
#endif

/// `coremotion fuse INPUT`: runs the fusion filter over a recording as fast as possible.
///
/// Writes one CSV row per input sample: timestamp, attitude quaternion, roll/pitch/yaw (radians),
/// gravity and user acceleration (g), unbiased rotation rate (rad/s) and heading (degrees; −1 in the
/// arbitrary frames).
public struct FuseCommand: ParsableCommand {
    /// The command's name, help and discussion.
    public static let configuration = CommandConfiguration(
        commandName: "fuse",
        abstract: "Fuse a sensor recording into attitude, gravity, user acceleration and heading.",
        discussion: """
            --format broad reads a BROAD trial CSV and writes q_w,q_x,q_y,q_z as sensor → ENU, which \
            shared/tools/broad_reference.py --estimate scores. --format csv reads `timestamp,sensor,x,y,z` \
            (as written by `coremotion stream --sensor raw`) and writes the quaternion in --reference-frame.
            """
    )

    /// Input formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case broad, csv
    }

    @Argument(help: "The recording to fuse.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file (default: standard output).")
    var output: String?

    @Option(help: "Input format: broad or csv (default: from the header).")
    var format: Format?

    @Flag(name: .customLong("no-magnetometer"), help: "6D: ignore the magnetometer.")
    var noMagnetometer = false

    @Option(name: .customLong("reference-frame"),
            help: "xArbitraryZVertical, xArbitraryCorrectedZVertical, xMagneticNorthZVertical or xTrueNorthZVertical.")
    var referenceFrame: String?

    @Option(help: "Location for xTrueNorthZVertical: LAT,LON in degrees.")
    var location: String?

    @Flag(help: "Non-causal smoothing using past and future samples.")
    var offline = false

    /// Creates the command with default options (ArgumentParser fills them in).
    public init() {}

    /// Runs the command. Errors are reported by ArgumentParser.
    public func run() throws {
        let url = URL(fileURLWithPath: input)
        guard FileManager.default.fileExists(atPath: input) else {
            throw ValidationError("no such file: \(input)")
        }
        let fmt = try format ?? detectFormat(url)
        var frame: FuseReferenceFrame
        if let name = referenceFrame {
            guard let f = FuseReferenceFrame(name: name) else {
                throw ValidationError("unknown reference frame \(name)")
            }
            frame = f
        } else if fmt == .broad {
            frame = .enu
        } else {
            frame = noMagnetometer ? .arbitrary : .magneticNorth
        }
        if case .trueNorth = frame { frame = .trueNorth(declination: try trueNorthDeclination()) }
        if noMagnetometer && frame.usesMagnetometer && frame != .enu {
            throw ValidationError("--no-magnetometer conflicts with a magnetometer-based reference frame")
        }
        let useMag = !noMagnetometer && frame.usesMagnetometer
        let handle: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil),
                  let h = FileHandle(forWritingAtPath: output) else {
                throw ValidationError("cannot write \(output)")
            }
            handle = h
        } else {
            handle = FileHandle.standardOutput
        }
        var writer = FuseWriter { handle.write(Data($0.utf8)) }
        switch fmt {
        case .broad:
            let trial = try BroadTrial(contentsOf: url)
            try FuseEngine.fuse(trial, magnetometer: useMag, offline: offline, frame: frame, into: &writer)
        case .csv:
            let rec = try SensorRecording(contentsOf: url)
            if useMag && !rec.hasMagnetometer {
                throw ValidationError("the reference frame needs a magnetometer; the recording has none")
            }
            try FuseEngine.fuse(rec, magnetometer: useMag, offline: offline, frame: frame, into: &writer)
        }
        try writer.flush()
        if output != nil { try handle.close() }
    }

    private func detectFormat(_ url: URL) throws -> Format {
        guard let h = FileHandle(forReadingAtPath: url.path) else { throw ValidationError("cannot read \(input)") }
        defer { try? h.close() }
        let head = String(decoding: h.readData(ofLength: 4096), as: UTF8.self)
        return head.contains("acc_x") ? .broad : .csv
    }

    private func trueNorthDeclination() throws -> Double {
        guard let location else {
            throw ValidationError("xTrueNorthZVertical needs --location LAT,LON (Core Motion error 102: true north not available)")
        }
        let parts = location.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, abs(parts[0]) <= 90, abs(parts[1]) <= 360 else {
            throw ValidationError("--location must be LAT,LON in degrees")
        }
        return try MagneticModelResource.declination(latitude: parts[0], longitude: parts[1])
    }
}
