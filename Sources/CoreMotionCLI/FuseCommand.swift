import ArgumentParser
import Foundation
import MotionFusion
import MotionRecordingFormats
import OpenCoreMotion

/// `coremotion fuse INPUT`: fuses a recording into device motion as fast as possible, with the code of
/// live device motion (``RecordingFusion``).
///
/// Reads any recording ``RecordingInput`` opens (detected from content, or `--input-format`), merged by
/// timestamp; writes one row per fused update (per gyroscope sample once an accelerometer sample has
/// been seen) in the device-motion format of `coremotion stream --sensor device-motion`
/// (``DeviceMotionWriter``).
package struct FuseCommand: ParsableCommand {
    /// The command's name, help and discussion.
    package static let configuration = CommandConfiguration(
        commandName: "fuse",
        abstract: "Fuse a sensor recording into attitude, gravity, user acceleration and heading.",
        discussion: """
            Reads any recording that replay: reads (the project's CSV and JSONL, BROAD, Sensor Logger, SensorLog, \
            phyphox, HyperIMU; file, folder or zip), merged by timestamp. Writes one row per fused update \
            (per gyroscope sample once an accelerometer sample has been seen), with the fields of \
            `coremotion stream --sensor device-motion`. --format broad (the default for BROAD input) writes \
            those rows in CSV with the attitude sensor → ENU, which shared/tools/broad_reference.py --estimate scores.
            """
    )

    /// Output formats.
    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        /// Device motion, CSV.
        case csv
        /// Device motion, JSON Lines.
        case jsonl
        /// Device motion, CSV, in the east–north–up frame (the BROAD benchmark's).
        case broad
    }

    @Argument(help: "The recording to fuse: a file, an export folder or a zip archive.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file (default: standard output). Never the input.")
    var output: String?

    @Option(help: "Output format: csv, jsonl or broad (default: broad for BROAD input, else csv).")
    var format: OutputFormat?

    @OptionGroup var inputFormatOption: InputFormatOption

    @Flag(name: .customLong("no-magnetometer"), help: "6D: ignore the magnetometer.")
    var noMagnetometer = false

    /// `--reference-frame` (default: enu for --format broad, else xMagneticNorthZVertical, or
    /// xArbitraryZVertical with --no-magnetometer) and `--location`.
    @OptionGroup var frameOptions: ReferenceFrameOptions

    @Flag(help: "Smooth with past and future samples (the same rows as without it).")
    var offline = false

    @Option(help: "Apply the stored calibration of this device identity (see `coremotion calibrate`) to the recording's raw samples.")
    var calibration: String?

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    /// Runs the command. Errors are one line on stderr, exit status 1, after every good row.
    package func run() throws {
        let recording: RecordingInput
        do {
            recording = try RecordingInput.open(path: input, format: inputFormatOption.inputFormat)
        } catch {
            throw CLIError(error.description)
        }
        let outputFormat = format ?? (recording.format == .broad ? .broad : .csv)

        var frame: AttitudeReferenceFrame
        if let f = frameOptions.referenceFrame?.frame {
            frame = f
        } else if outputFormat == .broad {
            frame = .eastNorthUp
        } else {
            frame = noMagnetometer ? .arbitrary : .magneticNorth
        }
        // ReferenceFrameOptions has refused true north without a location.
        if case .trueNorth = frame, let location = frameOptions.location { frame = .trueNorth(declination: try Self.declination(at: location)) }
        if noMagnetometer && frame.usesMagnetometer && frame != .eastNorthUp {
            throw ValidationError("--no-magnetometer conflicts with a magnetometer-based reference frame")
        }
        var options = RecordingFusion.Options(frame: frame, usesMagnetometer: !noMagnetometer && frame.usesMagnetometer,
                                              offline: offline)
        // The default frame needs a magnetometer; a recording without one (a phone export of the
        // accelerometer and gyroscope only) is fused 6D in xArbitraryZVertical, Core Motion's own default.
        options.fallsBackWithoutMagnetometer = frameOptions.referenceFrame == nil && outputFormat != .broad

        let file: OutputFile
        do {
            file = try output.map { path throws(RecordingError) in try OutputFile(path: path, protecting: Self.inputFiles(input)) } ?? OutputFile()
        } catch {
            throw CLIError(error.description)
        }
        var writer = DeviceMotionWriter(format: outputFormat == .jsonl ? .jsonl : .csv) { (bytes: inout [UInt8]) throws(RecordingError) in
            try file.write(&bytes)
        }
        var streams = recording.streams
        if let identity = calibration {
            let store = DeviceCalibrationStore(directory: DeviceCalibrationStore.defaultDirectory(environment: ProcessInfo.processInfo.environment))
            let record: DeviceCalibrationRecord?
            do {
                record = try store.load(identity)
            } catch {
                throw CLIError(error.description)
            }
            guard let record else { throw CLIError("no stored calibration for \(identity) in \(store.directory)") }
            streams = streams.map { CalibratedSampleStream(base: $0, calibration: record.calibration) }
            options.priorMagneticAccuracy = record.calibration.calibratesMagnetometer ? record.calibration.magnetometerAccuracy : .uncalibrated
        }
        var merge = SampleMerge(streams)
        var progress = ProgressLine(label: "fused")
        var rows = 0
        do {
            let summary = try RecordingFusion.run(&merge, name: input, options: options, progress: { progress.update($0) }) { (m: FusedMotion) throws(RecordingError) in
                try writer.write(m)
                rows += 1
            }
            progress.finish()
            try writer.flush()
            if summary.fellBackWithoutMagnetometer {
                FileHandle.standardError.write(Data("note: \(input) has no magnetometer samples: fused 6D, attitude in xArbitraryZVertical\n".utf8))
            }
        } catch {
            progress.finish()
            // Every good row before the error is written first; an error before any row writes nothing.
            if rows > 0 { try? writer.flush() }
            throw CLIError(error.description)
        }
    }

    /// The files a recording at `path` is read from: the path itself, and for a folder the files in it.
    static func inputFiles(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        var files = [path]
        if let e = FileManager.default.enumerator(atPath: path) {
            while let name = e.nextObject() as? String, files.count < 10_000 {
                files.append((path as NSString).appendingPathComponent(name))
            }
        }
        return files
    }

    /// The declination of `location` in radians, positive east.
    private static func declination(at location: LocationArgument) throws -> Double {
        do {
            return try MagneticModelResource.declination(latitude: location.latitude, longitude: location.longitude)
        } catch {
            throw CLIError("true north: the bundled magnetic model cannot be read (\(error))")
        }
    }
}

/// A progress line on standard error for long work: shown only when stderr is a terminal and the work
/// has lasted more than a second, updated at most four times a second.
struct ProgressLine {
    let label: String
    private let start = ProcessInfo.processInfo.systemUptime
    private var lastShown = 0.0
    private var shown = false
    private let enabled = isatty(2) != 0

    init(label: String) { self.label = label }

    mutating func update(_ count: Int) {
        guard enabled else { return }
        let now = ProcessInfo.processInfo.systemUptime
        guard now - start >= 1, now - lastShown >= 0.25 else { return }
        lastShown = now
        shown = true
        FileHandle.standardError.write(Data("\r\(label) \(count) samples in \(String(format: "%.1f", now - start)) s".utf8))
    }

    mutating func finish() {
        if shown { FileHandle.standardError.write(Data("\n".utf8)) }
        shown = false
    }
}

/// A recording's samples with a stored calibration applied (`fuse --calibration`).
struct CalibratedSampleStream: SampleStream {
    var base: any SampleStream
    let calibration: SensorCalibration

    mutating func next() throws(RecordingError) -> RecordedSample? {
        guard var r = try base.next() else { return nil }
        switch r.sample.sensor {
        case .accelerometer: r.sample.value = calibration.accelerometer(r.sample.value)
        case .gyro: r.sample.value = calibration.gyro(r.sample.value)
        case .magnetometer: r.sample.value = calibration.magnetometer(r.sample.value)
        case .pressure: break
        }
        return r
    }
}
