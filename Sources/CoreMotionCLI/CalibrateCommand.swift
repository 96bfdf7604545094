import ArgumentParser
import Foundation
import MotionFusion
import MotionRecordingFormats
import OpenCoreMotion

/// `coremotion calibrate`: calibrates a device's gyroscope bias, accelerometer offsets and scales and
/// magnetometer hard and soft iron (MotionFusion's ``CalibrationBuilder``), live from a source with
/// instructions on screen or offline from a recording, and stores the result per device identity
/// (``DeviceCalibrationStore``) for every later run that opens the device.
package struct CalibrateCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Calibrate a device's gyroscope, accelerometer and magnetometer and store the result.",
        discussion: """
            Live (no RECORDING): reads the source (--source, COREMOTION_SOURCE or the first motion hardware) \
            and asks you to hold the device still, lay it still on each of its six faces, then turn it \
            around all axes. Offline: reads a recording of the device doing the same (any format `fuse` reads; \
            a Sensor Logger export is read from its MagnetometerUncalibrated.csv). The result is stored \
            under $XDG_DATA_HOME/opencoremotion/calibration/ (else ~/.local/share/…; COREMOTION_CALIBRATION_DIR \
            overrides) for the device's identity: the live source's, or --identity for a recording. Every \
            later run that opens the device (stream, dashboard, the API) applies it; \
            COREMOTION_CALIBRATION=off or --no-calibration ignores it. --print shows the result without storing it.
            """
    )

    @Argument(help: "A recording of the device held still, laid on its faces and turned around (omit for live).")
    var recording: String?

    @OptionGroup var sourceOptions: SourceOptions

    @OptionGroup var inputFormatOption: InputFormatOption

    @Option(help: "The device identity to store a recording's calibration under (as `coremotion sensors` shows it, e.g. i2c:/dev/i2c-1:0x68).")
    var identity: String?

    @Flag(name: .customLong("print"), help: "Show the calibration without storing it.")
    var printOnly = false

    @Option(help: "Store in this directory instead of the default.")
    var calibrationDirectory: String?

    @Option(parsing: .unconditional, help: "Seconds of each live step: hold still, six faces (six times this), turn around (three times this).",
            transform: OptionValue.seconds(1...600))
    var stepSeconds: Double = 5

    package init() {}

    package func validate() throws {
        if recording != nil, sourceOptions.source != nil {
            throw ValidationError("give a recording or --source, not both")
        }
        if recording != nil, identity == nil, !printOnly {
            throw ValidationError("say whose calibration the recording holds: --identity IDENTITY (as `coremotion sensors` shows it), or --print")
        }
    }

    package func run() throws {
        var builder = CalibrationBuilder()
        let origin: String
        let deviceIdentity: String?
        if let recording {
            try Self.feed(recording: recording, format: inputFormatOption.inputFormat, into: &builder)
            origin = "recording \(recording)"
            deviceIdentity = identity
        } else {
            let source = try sourceOptions.resolve()
            try Self.live(source, stepSeconds: stepSeconds, into: &builder)
            origin = "live \(source.info.identifier)"
            deviceIdentity = identity ?? DeviceCalibrationStore.identity(of: source.info)
        }
        let result = builder.finish()
        StandardOutput.write(Self.report(result, of: recording ?? origin))
        guard !printOnly, let deviceIdentity else { return }
        guard !result.calibration.isEmpty else {
            throw CLIError("nothing to store: no rest, no six faces and no magnetometer fit")
        }
        let store = calibrationDirectory.map(DeviceCalibrationStore.init(directory:))
            ?? DeviceCalibrationStore(directory: DeviceCalibrationStore.defaultDirectory(environment: ProcessInfo.processInfo.environment))
        let record = DeviceCalibrationRecord(identity: deviceIdentity, created: DeviceCalibrationRecord.now(), origin: origin,
                                             calibration: result.calibration)
        do {
            let path = try store.save(record)
            StandardOutput.write("stored for \(deviceIdentity) in \(path)\n")
        } catch {
            throw CLIError(error.description)
        }
    }

    /// Feeds a recording's samples, merged by timestamp.
    static func feed(recording path: String, format: RecordingFormat?, into builder: inout CalibrationBuilder) throws {
        do {
            let input = try RecordingInput.open(path: path, format: format)
            var merge = SampleMerge(input.streams)
            while let r = try merge.next() {
                let s = r.sample
                switch s.sensor {
                case .accelerometer: builder.addAccelerometer(s.value, timestamp: s.timestamp)
                case .gyro: builder.addGyro(s.value, timestamp: s.timestamp)
                case .magnetometer: builder.addMagnetometer(s.value, timestamp: s.timestamp)
                case .pressure: break
                }
            }
        } catch {
            throw CLIError(error.description)
        }
    }

    /// Reads a live source's raw samples (the source itself, not a manager: no stored calibration is
    /// applied) through three steps with instructions on standard error.
    static func live(_ source: any SensorSource, stepSeconds: Double, into builder: inout CalibrationBuilder) throws {
        let shared = Locked(CalibrationBuilder())
        let failure = Locked<String?>(nil)
        var rates: [SensorKind: Double] = [:]
        for kind in SensorKind.motion where source.info.sensors[kind] != nil { rates[kind] = 100 }
        guard !rates.isEmpty else { throw CLIError("\(source.info.identifier) has no motion sensor") }
        do {
            try source.apply(SensorDemand(rates: rates)) { event in
                switch event {
                case .sample(let s):
                    shared.withLock { b in
                        switch s.sensor {
                        case .accelerometer: b.addAccelerometer(s.value, timestamp: s.timestamp)
                        case .gyro: b.addGyro(s.value, timestamp: s.timestamp)
                        case .magnetometer: b.addMagnetometer(s.value, timestamp: s.timestamp)
                        case .pressure: break
                        }
                    }
                case .failed(let e): failure.withLock { $0 = e.description }
                case .finished: failure.withLock { $0 = $0 ?? "the source finished" }
                case .interrupted: break
                }
            }
        } catch {
            throw CLIError(error.description)
        }
        defer { _ = try? source.apply(.none) { _ in } }
        let steps: [(String, Double)] = [
            ("Hold the device still.", stepSeconds),
            ("Lay the device still on each of its six faces in turn (screen up, screen down, each edge down), about \(Int(stepSeconds)) s each.", 6 * stepSeconds),
            ("Turn the device around all axes, slowly, in every direction (a figure eight in the air).", 3 * stepSeconds),
        ]
        for (index, step) in steps.enumerated() {
            FileHandle.standardError.write(Data("step \(index + 1) of \(steps.count), \(Int(step.1)) s: \(step.0)\n".utf8))
            let end = ProcessInfo.processInfo.systemUptime + step.1
            while ProcessInfo.processInfo.systemUptime < end {
                if let message = failure.withLock({ $0 }) { throw CLIError("\(source.info.identifier): \(message)") }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        builder = shared.withLock { $0 }
    }

    /// The report `calibrate` prints.
    static func report(_ r: CalibrationBuilder.Result, of what: String) -> String {
        func f(_ x: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", x == 0 ? 0 : x) }
        func v(_ x: Vector3, _ digits: Int) -> String { "\(f(x.x, digits)) \(f(x.y, digits)) \(f(x.z, digits))" }
        let degrees = 180 / Double.pi
        var out = "calibration of \(what)\n"
        let n = r.sampleCounts
        out += "samples: accelerometer \(n.accelerometer), gyroscope \(n.gyro), magnetometer \(n.magnetometer)\n"
        if let b = r.calibration.gyroBias, let rest = r.gyroRest {
            out += "gyroscope bias: \(v(b * degrees, 3)) °/s (rest \(f(rest.seconds, 1)) s, standard error \(f(max(rest.standardError.x, rest.standardError.y, rest.standardError.z) * degrees, 3)) °/s)\n"
        } else {
            out += "gyroscope: not calibrated: no rest found (hold the device still for a few seconds)\n"
        }
        if let a = r.accelerometer {
            out += "accelerometer offset: \(v(a.offset, 4)) g, scale \(v(a.scale, 4)) (\(a.poses) poses, residual \(f(a.residual, 4)) g)\n"
        } else {
            let names = ["+x", "-x", "+y", "-y", "+z", "-z"]
            let faces = AccelerometerPoseFit.faces(of: r.poses)
            let seen = names.indices.filter { faces[$0] }.map { names[$0] }
            out += "accelerometer: not calibrated: \(r.poses.count) distinct rest poses, reading 1 g along \(seen.isEmpty ? "no axis" : seen.joined(separator: " ")) (lay the device still on each of its six faces)\n"
        }
        if let m = r.magnetometer, r.calibration.calibratesMagnetometer {
            out += "magnetometer offset: \(v(m.offset, 2)) µT\n"
            if m.fitsSoftIron {
                out += "magnetometer soft iron: \(v(m.softIron.r0, 4)); \(v(m.softIron.r1, 4)); \(v(m.softIron.r2, 4))\n"
            } else {
                out += "magnetometer soft iron: not fitted (hard iron only: too few orientations for it, or none found; turn the device around all axes)\n"
            }
            out += "magnetometer field \(f(m.fieldStrength, 2)) µT, residual \(f(m.relativeResidual * 100, 2)) %, coverage \(f(m.coverage, 2)), \(m.samples) readings, accuracy \(DeviceCalibrationRecord.accuracyName(m.accuracy))\n"
        } else if n.magnetometer > 0 {
            out += "magnetometer: not calibrated: no fit from \(r.magnetometerReadings) readings (turn the device around all axes)\n"
        }
        return out
    }
}
