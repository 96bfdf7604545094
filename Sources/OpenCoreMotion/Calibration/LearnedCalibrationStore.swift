#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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

    /// The JSON file: pretty-printed, keys sorted, ending with a newline; UTF-8.
    ///
    /// Written by hand rather than with `JSONEncoder`: this runs every minute in the middle of a long run,
    /// and the encoder, `Data.write(options: .atomic)` and `FileManager` fault in about 576 kB of
    /// Foundation's code the first time they run (with the rest of the save, a 1 MB step in resident
    /// memory at the first save of `bench soak`). ``decode(_:path:)`` reads it with `JSONDecoder`, once at
    /// start. A non-finite number is written as `null`, which ``decode(_:path:)`` refuses (``saveLearned(_:)``
    /// never writes one: it checks ``LearnedCalibration/problem`` first).
    package func encoded() -> [UInt8] {
        let l = learned
        let v = l.gyroBiasVariance
        var json = JSONText()
        if let basis { json.field("basis", string: basis) }
        json.field("gyroBias", vector: l.gyroBias)
        json.field("gyroBiasSigma", vector: Vector3(v.x.squareRoot(), v.y.squareRoot(), v.z.squareRoot()))
        json.field("identity", string: identity)
        if l.magneticAccuracy != .uncalibrated { json.field("magneticFieldStrength", number: l.magneticFieldStrength) }
        json.field("magnetometerAccuracy", string: DeviceCalibrationRecord.accuracyName(l.magneticAccuracy))
        if l.magneticAccuracy != .uncalibrated {
            json.field("magnetometerGains", vector: l.magneticGains)
            json.field("magnetometerOffset", vector: l.magneticOffset)
        }
        json.field("updated", string: updated)
        json.field("version", integer: Self.formatVersion)
        return json.finished()
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

    /// The file's layout, for decoding (``encoded()`` writes the same fields, in this order: sorted).
    /// Units: rad/s for the bias and its standard deviation, µT for the field.
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

    /// Stores learned state (replacing the identity's learned file atomically: written to a temporary
    /// file beside it, flushed with `fsync`, renamed over it), creating the directories.
    ///
    /// Plain POSIX calls, not `Data.write(options: .atomic)` or `FileManager`: see
    /// ``LearnedCalibrationRecord/encoded()``.
    /// - Returns: the file's path.
    @discardableResult
    package func saveLearned(_ record: LearnedCalibrationRecord) throws(DeviceCalibrationError) -> String {
        let path = learnedPath(for: record.identity)
        if let problem = record.learned.problem { throw DeviceCalibrationError(path: path, message: problem) }
        if let failure = Self.makeDirectories(directory + "/learned") {
            throw DeviceCalibrationError(path: path, message: "cannot be written: \(failure)")
        }
        if let failure = Self.writeAtomically(record.encoded(), to: path) {
            throw DeviceCalibrationError(path: path, message: "cannot be written: \(failure)")
        }
        return path
    }

    /// `mkdir -p`: creates `path` and its missing parents (mode 0755 before the umask).
    /// - Returns: what failed, `nil` on success.
    static func makeDirectories(_ path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                return "cannot create \(prefix): \(String(cString: strerror(errno)))"
            }
        }
        return nil
    }

    /// Writes `bytes` to a temporary file beside `path` (named after this process, so two processes
    /// never share one), `fsync`s it, renames it over `path` and `fsync`s the directory.
    /// - Returns: what failed, `nil` on success (the temporary file is removed on failure).
    static func writeAtomically(_ bytes: [UInt8], to path: String) -> String? {
        let temporary = path + ".\(getpid()).tmp"
        func failure(_ what: String) -> String {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            return "\(what): \(reason)"
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return "cannot create \(temporary): \(String(cString: strerror(errno)))" }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                let message = failure("write failed")
                close(fd)
                return message
            }
            written += n
        }
        if fsync(fd) != 0 {
            let message = failure("fsync failed")
            close(fd)
            return message
        }
        guard close(fd) == 0 else { return failure("close failed") }
        guard rename(temporary, path) == 0 else { return failure("cannot rename \(temporary)") }
        // The rename itself is durable once the directory is flushed; a failure here loses nothing written.
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let dfd = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
        return nil
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
    /// `scripted`): demonstrations never write into the user's directory. Tests that run hardware
    /// sources (an IIO tree on disk, say) choose a directory of their own (`COREMOTION_CALIBRATION_DIR`,
    /// set by the test suite's `coremotion` runner for every run, or ``ProcessOverride/directory(_:)``).
    package static func learnsPersistently(_ info: SourceInfo) -> Bool {
        if directoryIsExplicit { return true }
        return !["sim:", "replay:", "test:", "manual:", "scripted", "none"].contains { info.identifier.hasPrefix($0) }
    }
}

/// A JSON object built as text the way `JSONEncoder` pretty-prints it (two spaces, `"key" : value`,
/// arrays one element a line), for ``LearnedCalibrationRecord/encoded()``. Fields are written in the order
/// given: callers give them sorted.
struct JSONText {
    private var text = "{\n"
    private var first = true

    private mutating func key(_ name: String) {
        text += first ? "  " : ",\n  "
        first = false
        Self.appendString(name, to: &text)
        text += " : "
    }

    /// A number; `null` when not finite (JSON has no NaN or infinity). Shortest text that reads back exactly.
    static func number(_ value: Double) -> String {
        value.isFinite ? value.description : "null"
    }

    /// Appends a JSON string: `"` and `\\` escaped, control characters as `\uXXXX` (or `\n`, `\t`, …), the rest as is.
    static func appendString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    mutating func field(_ name: String, string value: String) {
        key(name)
        Self.appendString(value, to: &text)
    }

    mutating func field(_ name: String, number value: Double) {
        key(name)
        text += Self.number(value)
    }

    mutating func field(_ name: String, integer value: Int) {
        key(name)
        text += String(value)
    }

    mutating func field(_ name: String, vector v: Vector3) {
        key(name)
        text += "[\n    " + Self.number(v.x) + ",\n    " + Self.number(v.y) + ",\n    " + Self.number(v.z) + "\n  ]"
    }

    /// The object's bytes, closed, with a final newline.
    func finished() -> [UInt8] {
        Array((text + (first ? "}\n" : "\n}\n")).utf8)
    }
}
