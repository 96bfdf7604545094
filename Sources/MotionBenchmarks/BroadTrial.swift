import Foundation
import MotionFusion
import MotionRecordingFormats

/// One trial of the BROAD benchmark (D. Laidig, M. Caruso, A. Cereatti, T. Seel, "BROAD—A Benchmark for
/// Robust Inertial Orientation Estimation", *Data* 6(7):72, 2021, doi:10.3390/data6070072, CC-BY-4.0),
/// converted to Core Motion's units and signs on load.
///
/// Values only; safe to share between threads once loaded.
package struct BroadTrial: Sendable {
    /// Trial name (the file name without `.csv`).
    package var name: String
    /// Sampling rate, Hz (285.714… Hz in BROAD).
    package var sampleRate: Double
    /// Accelerometer, g, Core Motion sign: `−specific force / 9.80665` (face up at rest: z ≈ −1).
    package var accelerometer: [Vector3]
    /// Gyroscope, rad/s.
    package var gyro: [Vector3]
    /// Magnetometer, µT.
    package var magnetometer: [Vector3]
    /// Ground truth sensor → ENU; components are NaN where the optical system lost the markers.
    package var truth: [Quaternion]
    /// `true` in the movement phases that the metric scores.
    package var movement: [Bool]

    /// Number of samples.
    package var count: Int { gyro.count }
    /// Time step, seconds.
    package var timeStep: Double { 1 / sampleRate }

    /// Standard gravity used to convert m/s² to g.
    package static let standardGravity = 9.80665

    /// Creates a trial from arrays (all of the same length).
    package init(name: String, sampleRate: Double, accelerometer: [Vector3], gyro: [Vector3],
                magnetometer: [Vector3], truth: [Quaternion], movement: [Bool]) {
        self.name = name
        self.sampleRate = sampleRate
        self.accelerometer = accelerometer
        self.gyro = gyro
        self.magnetometer = magnetometer
        self.truth = truth
        self.movement = movement
    }

    /// Loads a BROAD compact CSV (see `shared/data/broad/README.md`).
    /// - Throws: `RecordingError` (MotionRecordingFormats' reader) naming the file and line that cannot be read.
    package init(contentsOf url: URL) throws {
        let table = try BroadTable.read(path: url.path)
        self.init(
            name: url.deletingPathExtension().lastPathComponent,
            sampleRate: table.rate,
            accelerometer: table.accelerometer,
            gyro: table.gyro,
            magnetometer: table.magnetometer,
            truth: table.truth,
            movement: table.movement
        )
    }

    package static func loadDirectory(_ url: URL) throws -> [BroadTrial] {
        let files = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "csv" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        return try files.map { try BroadTrial(contentsOf: $0) }
    }
}

/// Errors reading benchmark data.
package enum BroadError: Error, CustomStringConvertible, Sendable {
    /// An estimate's length does not match its trial.
    case lengthMismatch(String, Int, Int)
    /// A parameter override (`name=value`) names no parameter or has a bad value.
    case badOverride(String)

    /// A human-readable message.
    package var description: String {
        switch self {
        case .lengthMismatch(let n, let a, let b): "\(n): \(a) estimates for \(b) samples"
        case .badOverride(let o): "unknown parameter or bad value: \(o)"
        }
    }
}
