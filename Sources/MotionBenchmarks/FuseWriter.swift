import Foundation
import MotionFusion

/// Formats `coremotion fuse` output rows as CSV into a reusable buffer.
///
/// Columns: `t,q_w,q_x,q_y,q_z,roll,pitch,yaw,gravity_x,gravity_y,gravity_z,user_acceleration_x,
/// user_acceleration_y,user_acceleration_z,rotation_rate_x,rotation_rate_y,rotation_rate_z,heading`.
/// Units: s, unit quaternion device → reference, radians, g, g, rad/s, degrees in [0, 360) (−1 in the
/// arbitrary frames).
public struct FuseWriter {
    /// The CSV header line (with newline).
    public static let header = "t,q_w,q_x,q_y,q_z,roll,pitch,yaw,gravity_x,gravity_y,gravity_z,"
        + "user_acceleration_x,user_acceleration_y,user_acceleration_z,"
        + "rotation_rate_x,rotation_rate_y,rotation_rate_z,heading\n"

    /// Pending text.
    public var buffer = ""
    private let write: (String) throws -> Void

    /// Creates a writer that flushes through `write`.
    public init(write: @escaping (String) throws -> Void) {
        self.write = write
        buffer.reserveCapacity(1 << 20)
        buffer += Self.header
    }

    /// Appends one row.
    public mutating func row(t: Double, attitude q: Quaternion, acceleration: Vector3, rotationRate: Vector3,
                             northReferenced: Bool, frame: FuseReferenceFrame) throws {
        let e = q.eulerAngles
        let g = q.inverseRotate(Vector3(0, 0, -1))
        let u = acceleration - g
        var heading = -1.0
        if northReferenced, let n = frame.northWestUp(from: q) {
            let r = n.rotate(Vector3(0, 1, 0))
            heading = atan2(-r.y, r.x) * 180 / Double.pi
            if heading < 0 { heading += 360 }
            if heading >= 360 { heading -= 360 }
        }
        let values = [t, q.w, q.x, q.y, q.z, e.roll, e.pitch, e.yaw, g.x, g.y, g.z, u.x, u.y, u.z,
                      rotationRate.x, rotationRate.y, rotationRate.z, heading]
        for (i, v) in values.enumerated() {
            if i > 0 { buffer += "," }
            buffer += v.description
        }
        buffer += "\n"
        if buffer.utf8.count > 1 << 20 { try flush() }
    }

    /// Writes pending text.
    public mutating func flush() throws {
        if !buffer.isEmpty {
            try write(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }
}

/// A progress bar on standard error, shown only when it is a terminal.
public struct ProgressBar {
    private let total: Int
    private var lastPercent = -1
    private let enabled: Bool

    /// A bar for `total` steps; disabled for short jobs or when stderr is not a terminal.
    public init(total: Int, minimum: Int = 100_000) {
        self.total = total
        self.enabled = total >= minimum && isatty(2) != 0
    }

    /// Reports progress.
    public mutating func update(_ done: Int) {
        guard enabled, total > 0 else { return }
        let p = done * 100 / total
        guard p != lastPercent else { return }
        lastPercent = p
        let filled = p * 30 / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(p)%".utf8))
        if done >= total { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
