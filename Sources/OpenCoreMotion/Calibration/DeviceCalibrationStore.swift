import Foundation
import MotionFusion
import MotionSources

/// A device's stored calibration: the numbers (``SensorCalibration``), whose they are, when and from what
/// they were made. Stored as a small JSON file per device by ``DeviceCalibrationStore``.
package struct DeviceCalibrationRecord: Sendable, Hashable {
    /// The file format's version; a file of another version is refused.
    package static let formatVersion = 1

    /// The device identity (see ``DeviceCalibrationStore/identity(of:)``).
    package var identity: String
    /// When the calibration was made, ISO 8601 UTC (`2026-11-27T21:50:00Z`).
    package var created: String
    /// What it was made from: `recording PATH` or `live SOURCE`.
    package var origin: String
    /// The calibration.
    package var calibration: SensorCalibration

    package init(identity: String, created: String, origin: String, calibration: SensorCalibration) {
        self.identity = identity
        self.created = created
        self.origin = origin
        self.calibration = calibration
    }

    /// The current time as ISO 8601 UTC, seconds (`2026-11-28T10:15:00Z`).
    ///
    /// Formatted from `gmtime_r`, not `ISO8601DateFormatter`: Foundation's formatter loads ICU's calendar
    /// and time-zone data the first time it runs, a step of about 6 MB of resident memory in the middle of
    /// a long run (the learned calibration is saved every minute; `bench soak` saw it).
    package static func now() -> String {
        var t = time(nil)
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return "1970-01-01T00:00:00Z" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// The JSON file: pretty-printed, keys sorted, ending with a newline.
    package func encoded() -> Data {
        let c = calibration
        let file = File(
            version: Self.formatVersion, identity: identity, created: created, origin: origin,
            gyroBias: c.gyroBias.map(File.vector), accelerometerOffset: c.accelerometerOffset.map(File.vector),
            accelerometerScale: c.accelerometerScale.map(File.vector),
            magnetometerOffset: c.magnetometerOffset.map(File.vector),
            magnetometerSoftIron: c.magnetometerSoftIron.map { [File.vector($0.r0), File.vector($0.r1), File.vector($0.r2)] },
            magneticFieldStrength: c.magneticFieldStrength,
            magnetometerAccuracy: c.magnetometerOffset == nil ? nil : Self.accuracyName(c.magnetometerAccuracy)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Every value was checked finite by `problem` before storing; a non-finite one fails to encode.
        var data = (try? encoder.encode(file)) ?? Data()
        data.append(0x0A)
        return data
    }

    /// Decodes a file's bytes.
    /// - Throws: ``DeviceCalibrationError`` naming what is wrong: not JSON, a missing or mistyped field, a
    ///   version other than ``formatVersion``, a non-finite number, an unusable value.
    package static func decode(_ data: Data, path: String) throws(DeviceCalibrationError) -> DeviceCalibrationRecord {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let error as DecodingError {
            throw DeviceCalibrationError(path: path, message: "not a calibration file: \(Self.describe(error))")
        } catch {
            throw DeviceCalibrationError(path: path, message: "not a calibration file: \(error)")
        }
        guard file.version == formatVersion else {
            throw DeviceCalibrationError(path: path, message: "calibration format version \(file.version) is not supported (this build reads version \(formatVersion))")
        }
        func vector(_ v: [Double]?, _ name: String) throws(DeviceCalibrationError) -> Vector3? {
            guard let v else { return nil }
            guard v.count == 3 else { throw DeviceCalibrationError(path: path, message: "\(name) must have 3 numbers, not \(v.count)") }
            return Vector3(v[0], v[1], v[2])
        }
        var c = SensorCalibration()
        c.gyroBias = try vector(file.gyroBias, "gyroBias")
        c.accelerometerOffset = try vector(file.accelerometerOffset, "accelerometerOffset")
        c.accelerometerScale = try vector(file.accelerometerScale, "accelerometerScale")
        c.magnetometerOffset = try vector(file.magnetometerOffset, "magnetometerOffset")
        if let rows = file.magnetometerSoftIron {
            guard rows.count == 3 else { throw DeviceCalibrationError(path: path, message: "magnetometerSoftIron must have 3 rows, not \(rows.count)") }
            c.magnetometerSoftIron = Matrix3(rows: try vector(rows[0], "magnetometerSoftIron row 1")!,
                                             try vector(rows[1], "magnetometerSoftIron row 2")!,
                                             try vector(rows[2], "magnetometerSoftIron row 3")!)
        }
        c.magneticFieldStrength = file.magneticFieldStrength
        if let name = file.magnetometerAccuracy {
            guard let a = MagneticCalibrationAccuracy.allCases.first(where: { accuracyName($0) == name }) else {
                throw DeviceCalibrationError(path: path, message: "magnetometerAccuracy '\(name)' is not one of uncalibrated, low, medium, high")
            }
            c.magnetometerAccuracy = a
        } else if c.magnetometerOffset != nil {
            c.magnetometerAccuracy = .low
        }
        if let problem = c.problem { throw DeviceCalibrationError(path: path, message: problem) }
        return DeviceCalibrationRecord(identity: file.identity, created: file.created, origin: file.origin, calibration: c)
    }

    /// `uncalibrated`, `low`, `medium` or `high`.
    package static func accuracyName(_ a: MagneticCalibrationAccuracy) -> String {
        switch a {
        case .uncalibrated: "uncalibrated"
        case .low: "low"
        case .medium: "medium"
        case .high: "high"
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "the field '\(key.stringValue)' is missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c):
            "the field '\(c.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        case .dataCorrupted(let c):
            c.codingPath.isEmpty ? "malformed JSON" : "the field '\(c.codingPath.map(\.stringValue).joined(separator: "."))' is malformed"
        @unknown default: "\(error)"
        }
    }

    /// The file's layout.
    private struct File: Codable {
        var version: Int
        var identity: String
        var created: String
        var origin: String
        var gyroBias: [Double]?
        var accelerometerOffset: [Double]?
        var accelerometerScale: [Double]?
        var magnetometerOffset: [Double]?
        var magnetometerSoftIron: [[Double]]?
        var magneticFieldStrength: Double?
        var magnetometerAccuracy: String?

        static func vector(_ v: Vector3) -> [Double] { [v.x, v.y, v.z] }
    }
}

/// A calibration file that cannot be used.
package struct DeviceCalibrationError: Error, Sendable, CustomStringConvertible {
    /// The file.
    package var path: String
    /// What is wrong.
    package var message: String

    package var description: String { "\(path): \(message)" }
}

/// Where device calibrations live: one JSON file per device identity in a directory, by default
/// `$XDG_DATA_HOME/opencoremotion/calibration/` (else `~/.local/share/opencoremotion/calibration/`);
/// `COREMOTION_CALIBRATION_DIR` overrides it, and `COREMOTION_CALIBRATION=off` turns stored calibration off
/// for sources opened through `CMMotionManager`.
///
/// Safe to use from any thread (each call reads or writes the file system anew).
package struct DeviceCalibrationStore: Sendable {
    /// The directory.
    package var directory: String

    package init(directory: String) {
        self.directory = directory
    }

    /// A choice for the whole process that replaces the environment's (a command's `--no-calibration`,
    /// a test's directory).
    package enum ProcessOverride: Sendable {
        /// Use this directory.
        case directory(String)
        /// Apply no stored calibration.
        case off
    }

    /// The process's override, read each time a source is opened; `nil`: the environment decides.
    package static let processOverride = Locked<ProcessOverride?>(nil)

    /// The store sources opened now use (see the type's discussion), or `nil` when stored calibration is off.
    package static var current: DeviceCalibrationStore? {
        switch processOverride.withLock({ $0 }) {
        case .directory(let d): return DeviceCalibrationStore(directory: d)
        case .off: return nil
        case nil: break
        }
        let env = ProcessInfo.processInfo.environment
        if env["COREMOTION_CALIBRATION"] == "off" { return nil }
        return DeviceCalibrationStore(directory: defaultDirectory(environment: env))
    }

    /// The default directory for an environment.
    package static func defaultDirectory(environment env: [String: String]) -> String {
        if let d = env["COREMOTION_CALIBRATION_DIR"], !d.isEmpty { return d }
        let base: String
        if let x = env["XDG_DATA_HOME"], x.hasPrefix("/") {
            base = x
        } else {
            base = (env["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        }
        return base + "/opencoremotion/calibration"
    }

    /// The identity a source's calibration is stored under: for IIO devices `iio:` and the device's name
    /// (stable across boots, unlike `iio:deviceN`); for every other source its identifier
    /// (`i2c:/dev/i2c-1:0x68`, `evdev:/dev/input/event3`, a phone's `sensorlogger://HOST:PORT`, …).
    package static func identity(of info: SourceInfo) -> String {
        info.identifier.hasPrefix("iio:") ? "iio:" + info.name : info.identifier
    }

    /// The file of an identity: the identity with every byte other than `A–Z a–z 0–9 . _ -` percent-encoded,
    /// and `.json`.
    package func path(for identity: String) -> String {
        var name = ""
        for b in identity.utf8 {
            let c = Character(Unicode.Scalar(b))
            if b < 0x80, c.isLetter || c.isNumber || c == "." || c == "_" || c == "-" {
                name.append(c)
            } else {
                name += "%" + String(b, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return directory + "/" + name + ".json"
    }

    /// The stored calibration of an identity: `nil` when there is no file.
    /// - Throws: ``DeviceCalibrationError`` when the file cannot be read or used, or belongs to another identity.
    package func load(_ identity: String) throws(DeviceCalibrationError) -> DeviceCalibrationRecord? {
        let path = path(for: identity)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DeviceCalibrationError(path: path, message: "cannot be read: \(error.localizedDescription)")
        }
        guard data.count <= 1 << 20 else { throw DeviceCalibrationError(path: path, message: "too large for a calibration file") }
        let record = try DeviceCalibrationRecord.decode(data, path: path)
        guard record.identity == identity else {
            throw DeviceCalibrationError(path: path, message: "holds the calibration of '\(record.identity)', not '\(identity)'")
        }
        return record
    }

    /// Stores a record (replacing the identity's file atomically), creating the directory.
    /// - Returns: the file's path.
    @discardableResult
    package func save(_ record: DeviceCalibrationRecord) throws(DeviceCalibrationError) -> String {
        let path = path(for: record.identity)
        if let problem = record.calibration.problem { throw DeviceCalibrationError(path: path, message: problem) }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try record.encoded().write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw DeviceCalibrationError(path: path, message: "cannot be written: \(error.localizedDescription)")
        }
        return path
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
