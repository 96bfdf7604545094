import MotionFusion

/// The one device-motion format, written by `coremotion stream --sensor device-motion` and
/// `coremotion fuse`: CSV with a header line, or JSON Lines whose keys are the CSV header's names.
///
/// Fields (``fields``), in Core Motion's units: `timestamp` (s), `q_w,q_x,q_y,q_z` (unit quaternion
/// device → reference frame), `roll,pitch,yaw` (rad, Core Motion's Euler angles), `gravity_*` and
/// `user_acceleration_*` (g, device frame), `rotation_rate_*` (rad/s, bias removed),
/// `magnetic_field_*` (µT, calibrated) and `magnetic_field_accuracy` (−1 uncalibrated … 2 high),
/// `heading` (degrees [0, 360) clockwise from north; −1 when there is none). Numbers are written by
/// ``NumberFormatting`` (at most 9 decimals, `.` separator).
///
/// Rows are appended to an in-memory buffer; ``flush()`` (or a full buffer) writes them out.
/// Not thread-safe: one writer per thread.
package struct DeviceMotionWriter {
    /// The line format.
    package enum Format: String, Sendable, CaseIterable {
        /// A header line, then comma-separated rows.
        case csv
        /// One JSON object per line, keys as the CSV header.
        case jsonl
    }

    /// The field names: the CSV header and the JSONL keys.
    package static let fields = [
        "timestamp", "q_w", "q_x", "q_y", "q_z", "roll", "pitch", "yaw",
        "gravity_x", "gravity_y", "gravity_z",
        "user_acceleration_x", "user_acceleration_y", "user_acceleration_z",
        "rotation_rate_x", "rotation_rate_y", "rotation_rate_z",
        "magnetic_field_x", "magnetic_field_y", "magnetic_field_z", "magnetic_field_accuracy",
        "heading",
    ]

    /// The CSV header line, without newline.
    package static let header = fields.joined(separator: ",")

    /// Pre-encoded `{"name":` / `,"name":` prefixes for JSONL.
    private static let jsonKeys: [[UInt8]] = fields.enumerated().map { i, name in
        Array(((i == 0 ? "{\"" : ",\"") + name + "\":").utf8)
    }

    /// The format written.
    package let format: Format
    private var buffer: [UInt8] = []
    private let output: (inout [UInt8]) throws(RecordingError) -> Void
    private let flushSize: Int

    /// Creates a writer; for CSV the header line is written first.
    /// - Parameters:
    ///   - format: CSV or JSONL.
    ///   - flushSize: bytes buffered before ``output`` is called; default 1 MiB.
    ///   - output: receives the pending bytes and must empty the array (it may keep its capacity).
    package init(format: Format, flushSize: Int = 1 << 20,
                output: @escaping (inout [UInt8]) throws(RecordingError) -> Void) {
        self.format = format
        self.output = output
        self.flushSize = max(flushSize, 1)
        buffer.reserveCapacity(self.flushSize + 1024)
        if format == .csv {
            buffer.append(contentsOf: Self.header.utf8)
            buffer.append(UInt8(ascii: "\n"))
        }
    }

    /// Appends one row.
    /// - Throws: ``RecordingError`` when the output cannot be written.
    package mutating func write(_ m: FusedMotion) throws(RecordingError) {
        Self.append(m, format: format, to: &buffer)
        if buffer.count >= flushSize { try flush() }
    }

    /// Writes out every pending byte.
    package mutating func flush() throws(RecordingError) {
        guard !buffer.isEmpty else { return }
        try output(&buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Appends one row of `m` in `format`, with its newline, to `bytes`.
    package static func append(_ m: FusedMotion, format: Format, to bytes: inout [UInt8]) {
        let q = m.attitude
        let e = q.eulerAngles
        let g = m.gravity, u = m.userAcceleration, r = m.rotationRate, f = m.magneticField
        let values = (
            m.timestamp, q.w, q.x, q.y, q.z, e.roll, e.pitch, e.yaw, g.x, g.y, g.z, u.x, u.y, u.z,
            r.x, r.y, r.z, f.x, f.y, f.z, Double(m.magneticFieldAccuracy.rawValue), m.heading
        )
        withUnsafeBytes(of: values) { raw in
            let doubles = raw.bindMemory(to: Double.self)
            for i in 0..<doubles.count {
                switch format {
                case .csv:
                    if i > 0 { bytes.append(UInt8(ascii: ",")) }
                case .jsonl:
                    bytes.append(contentsOf: jsonKeys[i])
                }
                NumberFormatting.append(doubles[i], to: &bytes)
            }
        }
        if format == .jsonl { bytes.append(UInt8(ascii: "}")) }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// One row of `m` in `format`, without newline.
    package static func line(_ m: FusedMotion, format: Format) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        append(m, format: format, to: &bytes)
        bytes.removeLast()
        return String(decoding: bytes, as: UTF8.self)
    }
}
