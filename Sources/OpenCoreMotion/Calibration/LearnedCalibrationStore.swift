import Foundation
import MotionFusion
import MotionSources

/// What device-motion fusion learned online about a device (``LearnedCalibration``: gyroscope bias with
/// its uncertainty, magnetometer calibration with its accuracy), kept for the next run of that device so
/// that it starts calibrated. Stored by ``DeviceCalibrationStore`` beside the explicit calibration, in
/// `learned/<identity>.json`, never in the explicit calibration's file.
///
/// ## Precedence
/// An explicit calibration (`coremotion calibrate`, ``DeviceCalibrationRecord``) is applied to the samples
/// first; the learned state describes what remains after it, and is used only on top of the same explicit
/// calibration it was learned over (``basis``): after a new `coremotion calibrate` the learned state is
/// ignored until the next run replaces it. When the explicit calibration includes the magnetometer, the
/// learned magnetometer calibration is not used (the explicit one's accuracy is the fusion's starting
/// point); the learned gyroscope bias is.
package struct LearnedCalibrationRecord: Sendable, Hashable {
    /// The file format's version; a file of another version is refused.
    package static let formatVersion = 1

    /// The device identity (see ``DeviceCalibrationStore/identity(of:)``).
    package var identity: String
    /// When it was saved, ISO 8601 UTC.
    package var updated: String
    /// The `created` time of the explicit calibration the state was learned over, `nil` when there was none.
    package var basis: String?
    /// The learned values.
    package var learned: LearnedCalibration

    package init(identity: String, updated: String, basis: String?, learned: LearnedCalibration) {
        self.identity = identity
        self.updated = updated
        self.basis = basis
        self.learned = learned
    }

    /// Whether `learned` says more than a fresh filter knows: a bias variance below the initial one on some
    /// axis, or a magnetometer calibration. Only such state is worth saving.
    package static func isInformative(_ learned: LearnedCalibration, parameters: AttitudeFilterParameters = AttitudeFilterParameters()) -> Bool {
        let s = parameters.biasInitialSigma * Double.pi / 180
        let v = learned.gyroBiasVariance
        return min(v.x, v.y, v.z) < 0.99 * s * s || learned.magneticAccuracy > .uncalibrated
    }

    /// The JSON file: pretty-printed, keys sorted, ending with a newline.
    package func encoded() -> Data {
        let l = learned
        let v = l.gyroBiasVariance
        let file = File(
            version: Self.formatVersion, identity: identity, updated: updated, basis: basis,
            gyroBias: [l.gyroBias.x, l.gyroBias.y, l.gyroBias.z],
            gyroBiasSigma: [v.x.squareRoot(), v.y.squareRoot(), v.z.squareRoot()],
            magnetometerOffset: l.magneticAccuracy == .uncalibrated ? nil : [l.magneticOffset.x, l.magneticOffset.y, l.magneticOffset.z],
            magnetometerGains: l.magneticAccuracy == .uncalibrated ? nil : [l.magneticGains.x, l.magneticGains.y, l.magneticGains.z],
            magneticFieldStrength: l.magneticAccuracy == .uncalibrated ? nil : l.magneticFieldStrength,
            magnetometerAccuracy: DeviceCalibrationRecord.accuracyName(l.magneticAccuracy)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data = (try? encoder.encode(file)) ?? Data()
        data.append(0x0A)
        return data
    }

    /// Decodes a file's bytes.
    /// - Throws: ``DeviceCalibrationError`` naming what is wrong (not JSON, a missing or mistyped field,
    ///   another version, a value that cannot be used).
    package static func decode(_ data: Data, path: String) throws(DeviceCalibrationError) -> LearnedCalibrationRecord {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw DeviceCalibrationError(path: path, message: "not a learned-calibration file: \(error is DecodingError ? "malformed or missing fields" : "\(error)")")
        }
        guard file.version == formatVersion else {
            throw DeviceCalibrationError(path: path, message: "learned-calibration format version \(file.version) is not supported (this build reads version \(formatVersion))")
        }
        func vector(_ v: [Double]?, _ name: String) throws(DeviceCalibrationError) -> Vector3? {
            guard let v else { return nil }
            guard v.count == 3 else { throw DeviceCalibrationError(path: path, message: "\(name) must have 3 numbers, not \(v.count)") }
            return Vector3(v[0], v[1], v[2])
        }
        guard let bias = try vector(file.gyroBias, "gyroBias"), let sigma = try vector(file.gyroBiasSigma, "gyroBiasSigma") else {
            throw DeviceCalibrationError(path: path, message: "gyroBias and gyroBiasSigma are required")
        }
        guard let accuracy = MagneticCalibrationAccuracy.allCases.first(where: { DeviceCalibrationRecord.accuracyName($0) == file.magnetometerAccuracy }) else {
            throw DeviceCalibrationError(path: path, message: "magnetometerAccuracy '\(file.magnetometerAccuracy)' is not one of uncalibrated, low, medium, high")
        }
        var learned = LearnedCalibration(gyroBias: bias, gyroBiasVariance: Vector3(sigma.x * sigma.x, sigma.y * sigma.y, sigma.z * sigma.z))
        if accuracy > .uncalibrated {
            guard let offset = try vector(file.magnetometerOffset, "magnetometerOffset") else {
                throw DeviceCalibrationError(path: path, message: "magnetometerOffset is required with accuracy \(file.magnetometerAccuracy)")
            }
            learned.magneticOffset = offset
            learned.magneticGains = try vector(file.magnetometerGains, "magnetometerGains") ?? Vector3(1, 1, 1)
            learned.magneticFieldStrength = file.magneticFieldStrength ?? 0
            learned.magneticAccuracy = accuracy
        }
        guard sigma.x >= 0, sigma.y >= 0, sigma.z >= 0 else {
            throw DeviceCalibrationError(path: path, message: "gyroBiasSigma must not be negative")
        }
        if let problem = learned.problem { throw DeviceCalibrationError(path: path, message: problem) }
        return LearnedCalibrationRecord(identity: file.identity, updated: file.updated, basis: file.basis, learned: learned)
    }

    /// The file's layout. Units: rad/s for the bias and its standard deviation, µT for the field.
    private struct File: Codable {
        var version: Int
        var identity: String
        var updated: String
        var basis: String?
        var gyroBias: [Double]?
        var gyroBiasSigma: [Double]?
        var magnetometerOffset: [Double]?
        var magnetometerGains: [Double]?
        var magneticFieldStrength: Double?
        var magnetometerAccuracy: String
    }
}

extension DeviceCalibrationStore {
    /// The file of an identity's learned state: `learned/` in the store's directory, named like the
    /// explicit calibration's file (``path(for:)``).
    package func learnedPath(for identity: String) -> String {
        let explicit = path(for: identity)
        let name = explicit.dropFirst(directory.count + 1)
        return directory + "/learned/" + name
    }

    /// The learned state of an identity: `nil` when there is no file.
    /// - Throws: ``DeviceCalibrationError`` when the file cannot be read or used, or belongs to another identity.
    package func loadLearned(_ identity: String) throws(DeviceCalibrationError) -> LearnedCalibrationRecord? {
        let path = learnedPath(for: identity)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DeviceCalibrationError(path: path, message: "cannot be read: \(error.localizedDescription)")
        }
        guard data.count <= 1 << 16 else { throw DeviceCalibrationError(path: path, message: "too large for a learned-calibration file") }
        let record = try LearnedCalibrationRecord.decode(data, path: path)
        guard record.identity == identity else {
            throw DeviceCalibrationError(path: path, message: "holds the learned calibration of '\(record.identity)', not '\(identity)'")
        }
        return record
    }

    /// Stores learned state (replacing the identity's learned file atomically), creating the directory.
    /// - Returns: the file's path.
    @discardableResult
    package func saveLearned(_ record: LearnedCalibrationRecord) throws(DeviceCalibrationError) -> String {
        let path = learnedPath(for: record.identity)
        if let problem = record.learned.problem { throw DeviceCalibrationError(path: path, message: problem) }
        do {
            try FileManager.default.createDirectory(atPath: directory + "/learned", withIntermediateDirectories: true)
            try record.encoded().write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw DeviceCalibrationError(path: path, message: "cannot be written: \(error.localizedDescription)")
        }
        return path
    }

    /// Whether the process chose the directory explicitly (`COREMOTION_CALIBRATION_DIR`, or a
    /// ``ProcessOverride/directory(_:)``) rather than taking the user's default.
    package static var directoryIsExplicit: Bool {
        if case .directory = processOverride.withLock({ $0 }) { return true }
        if let d = ProcessInfo.processInfo.environment["COREMOTION_CALIBRATION_DIR"], !d.isEmpty { return true }
        return false
    }

    /// Whether fusion saves what it learns about a source. With the directory chosen explicitly
    /// (``directoryIsExplicit``): always. In the user's default directory: only for sources that are
    /// hardware (not the simulator `sim:`, replays `replay:`, test sources `test:`, `manual:`,
    /// `scripted`), and never in a test runner (``isTestProcess``), whose sources run on injected clocks
    /// and emulated devices: tests and demonstrations never write into the user's directory.
    package static func learnsPersistently(_ info: SourceInfo) -> Bool {
        if directoryIsExplicit { return true }
        let synthetic = ["sim:", "replay:", "test:", "manual:", "scripted", "none"].contains { info.identifier.hasPrefix($0) }
        return !synthetic && !isTestProcess
    }

    /// Whether this process is a test runner (an `.xctest` bundle's executable or SwiftPM's testing
    /// helper), read once.
    package static let isTestProcess: Bool = {
        let name = ProcessInfo.processInfo.processName
        return name.hasSuffix(".xctest") || name.hasSuffix("PackageTests") || name == "swiftpm-testing-helper"
    }()
}
