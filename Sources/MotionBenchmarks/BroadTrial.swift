import Foundation
import MotionFusion

/// One trial of the BROAD benchmark (D. Laidig, M. Caruso, A. Cereatti, T. Seel, "BROAD—A Benchmark for
/// Robust Inertial Orientation Estimation", *Data* 6(7):72, 2021, doi:10.3390/data6070072, CC-BY-4.0),
/// converted to Core Motion's units and signs on load.
///
/// Values only; safe to share between threads once loaded.
public struct BroadTrial: Sendable {
    /// Trial name (the file name without `.csv`).
    public var name: String
    /// Sampling rate, Hz (285.714… Hz in BROAD).
    public var sampleRate: Double
    /// Accelerometer, g, Core Motion sign: `−specific force / 9.80665` (face up at rest: z ≈ −1).
    public var accelerometer: [Vector3]
    /// Gyroscope, rad/s.
    public var gyro: [Vector3]
    /// Magnetometer, µT.
    public var magnetometer: [Vector3]
    /// Ground truth sensor → ENU; components are NaN where the optical system lost the markers.
    public var truth: [Quaternion]
    /// `true` in the movement phases that the metric scores.
    public var movement: [Bool]

    /// Number of samples.
    public var count: Int { gyro.count }
    /// Time step, seconds.
    public var timeStep: Double { 1 / sampleRate }

    /// Standard gravity used to convert m/s² to g.
    public static let standardGravity = 9.80665

    /// Creates a trial from arrays (all of the same length).
    public init(name: String, sampleRate: Double, accelerometer: [Vector3], gyro: [Vector3],
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
    /// - Throws: ``BroadError`` when the file cannot be read or lacks a column.
    public init(contentsOf url: URL) throws {
        let table = try CSVTable(contentsOf: url)
        func col(_ n: String) throws -> [Double] {
            guard let c = table.column(n) else { throw BroadError.missingColumn(url.path, n) }
            return c
        }
        let ax = try col("acc_x"), ay = try col("acc_y"), az = try col("acc_z")
        let gx = try col("gyr_x"), gy = try col("gyr_y"), gz = try col("gyr_z")
        let mx = try col("mag_x"), my = try col("mag_y"), mz = try col("mag_z")
        let qw = try col("q_w"), qx = try col("q_x"), qy = try col("q_y"), qz = try col("q_z")
        let mv = try col("movement")
        let n = table.rowCount
        var rate = 285.7142857142857
        if let r = table.comment.range(of: "sampling_rate_hz=") {
            let rest = table.comment[r.upperBound...]
            let s = rest.prefix { $0 != ";" && !$0.isWhitespace }
            if let v = Double(s), v > 0 { rate = v }
        }
        let g = Self.standardGravity
        self.init(
            name: url.deletingPathExtension().lastPathComponent,
            sampleRate: rate,
            accelerometer: (0..<n).map { Vector3(-ax[$0] / g, -ay[$0] / g, -az[$0] / g) },
            gyro: (0..<n).map { Vector3(gx[$0], gy[$0], gz[$0]) },
            magnetometer: (0..<n).map { Vector3(mx[$0], my[$0], mz[$0]) },
            truth: (0..<n).map { Quaternion(w: qw[$0], x: qx[$0], y: qy[$0], z: qz[$0]) },
            movement: mv.map { $0 == 1 }
        )
    }

    /// The trials of a directory (`*.csv`, sorted by name).
    public static func loadDirectory(_ url: URL) throws -> [BroadTrial] {
        let files = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "csv" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        return try files.map { try BroadTrial(contentsOf: $0) }
    }
}

/// Errors reading benchmark data.
public enum BroadError: Error, CustomStringConvertible, Sendable {
    /// The file could not be read.
    case unreadable(String)
    /// A required column is missing.
    case missingColumn(String, String)
    /// An estimate's length does not match its trial.
    case lengthMismatch(String, Int, Int)
    /// A parameter override (`name=value`) names no parameter or has a bad value.
    case badOverride(String)

    /// A human-readable message.
    public var description: String {
        switch self {
        case .unreadable(let p): "cannot read \(p)"
        case .missingColumn(let p, let c): "\(p): no column \(c)"
        case .lengthMismatch(let n, let a, let b): "\(n): \(a) estimates for \(b) samples"
        case .badOverride(let o): "unknown parameter or bad value: \(o)"
        }
    }
}
