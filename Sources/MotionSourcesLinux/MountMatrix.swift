import MotionFusion

/// A 3×3 mount matrix that turns a sensor's chip axes into the device's axes: `device = M × chip`.
///
/// Text form, as the IIO `mount_matrix` attributes and udev's `ACCEL_MOUNT_MATRIX` print it: rows
/// separated by `;`, entries by `,`, e.g. `0, -1, 0; 1, 0, 0; 0, 0, 1`. Parsing tolerates missing or
/// extra spaces, `-0`, decimal entries such as `0.7071`, and the whitespace-only form some drivers
/// use (`0 -1 0 1 0 0 0 0 1`).
package struct MountMatrix: Sendable, Hashable, CustomStringConvertible {
    /// The rows, each three entries.
    package var rows: [Vector3]

    /// Creates a matrix from three rows.
    package init(_ r0: Vector3, _ r1: Vector3, _ r2: Vector3) { rows = [r0, r1, r2] }

    /// The identity: the chip's axes are the device's.
    package static let identity = MountMatrix(Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))

    /// Parses the text form; `nil` when it does not hold exactly nine finite numbers.
    package init?(parsing text: String) {
        var t = SysfsValue.trimmed(text)
        // A trailing `;` (as some quirks write it) ends the last row; iio-sensor-proxy's sscanf
        // ignores it too.
        if t.hasSuffix(";") { t = SysfsValue.trimmed(String(t.dropLast())) }
        var numbers: [Double] = []
        let rowTexts = t.split(separator: ";", omittingEmptySubsequences: false)
        if rowTexts.count == 3 {
            for row in rowTexts {
                let cells = row.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
                guard cells.count == 3 else { return nil }
                for c in cells {
                    guard let v = SysfsValue.double(String(c)) else { return nil }
                    numbers.append(v)
                }
            }
        } else if rowTexts.count == 1 {
            // A flat list of nine, comma- or space-separated (device-tree style).
            let cells = t.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" || $0 == "\"" })
            for c in cells {
                guard let v = SysfsValue.double(String(c)) else { return nil }
                numbers.append(v)
            }
        } else {
            return nil
        }
        guard numbers.count == 9 else { return nil }
        self.init(Vector3(numbers[0], numbers[1], numbers[2]), Vector3(numbers[3], numbers[4], numbers[5]),
                  Vector3(numbers[6], numbers[7], numbers[8]))
    }

    /// Why this matrix cannot orient a sensor, or `nil` when it can: a non-finite entry, a row of
    /// zeros (iio-sensor-proxy's own check: that axis would always read 0), two equal rows, or any
    /// other matrix that is not invertible (determinant 0: two device axes would read the same
    /// combination of chip axes).
    package var invalidity: String? {
        let names = ["x", "y", "z"]
        for (i, r) in rows.enumerated() where !(r.x.isFinite && r.y.isFinite && r.z.isFinite) {
            return "row \(names[i]) has an entry that is not a finite number"
        }
        for (i, r) in rows.enumerated() where r.x == 0 && r.y == 0 && r.z == 0 {
            return "row \(names[i]) is all zeros"
        }
        for i in 0..<3 {
            for j in (i + 1)..<3 where rows[i] == rows[j] {
                return "rows \(names[i]) and \(names[j]) repeat"
            }
        }
        let scale = rows.map(\.length).reduce(1, *)
        if !(abs(determinant) > 1e-6 * scale) { return "not invertible (determinant 0)" }
        return nil
    }

    /// The matrix a mount-matrix text stands for, as iio-sensor-proxy reads it: an empty text means
    /// the identity; otherwise nine numbers (see ``init(parsing:)``) forming a valid matrix (see
    /// ``invalidity``). The failure says why, for a warning.
    package static func resolving(_ text: String) -> Result<MountMatrix, MountMatrixRejection> {
        if SysfsValue.trimmed(text).isEmpty { return .success(.identity) }
        guard let m = MountMatrix(parsing: text) else {
            return .failure(MountMatrixRejection(reason: "not nine numbers as 'a, b, c; d, e, f; g, h, i'"))
        }
        if let why = m.invalidity { return .failure(MountMatrixRejection(reason: why)) }
        return .success(m)
    }

    /// `M × v`.
    @inlinable
    package func apply(_ v: Vector3) -> Vector3 {
        Vector3(rows[0].dot(v), rows[1].dot(v), rows[2].dot(v))
    }

    /// Every entry times `factor`.
    package func scaled(by factor: Double) -> MountMatrix {
        MountMatrix(rows[0] * factor, rows[1] * factor, rows[2] * factor)
    }

    /// `true` for the identity.
    package var isIdentity: Bool { self == .identity }

    /// The determinant: +1 for a rotation, −1 for a reflection, 0 for a degenerate matrix (a quirk
    /// with a duplicated row).
    package var determinant: Double {
        rows[0].dot(rows[1].cross(rows[2]))
    }

    /// `true` when the rows are orthonormal (a rotation or reflection).
    package var isOrthonormal: Bool {
        func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-3 }
        return near(rows[0].length, 1) && near(rows[1].length, 1) && near(rows[2].length, 1)
            && near(rows[0].dot(rows[1]), 0) && near(rows[0].dot(rows[2]), 0) && near(rows[1].dot(rows[2]), 0)
    }

    /// The canonical text form, `a, b, c; d, e, f; g, h, i` with `-0` printed as `0`.
    package var description: String {
        func f(_ v: Double) -> String {
            let v = v == 0 ? 0 : v
            if v == v.rounded() && abs(v) < 1e15 { return String(Int64(v)) }
            return String(v)
        }
        return rows.map { "\(f($0.x)), \(f($0.y)), \(f($0.z))" }.joined(separator: "; ")
    }
}

/// Why a mount matrix was refused (see ``MountMatrix/resolving(_:)``).
package struct MountMatrixRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// One line: `row z is all zeros`.
    package var reason: String
    /// The reason.
    package var description: String { reason }
}
