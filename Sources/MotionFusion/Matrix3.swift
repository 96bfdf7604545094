/// A 3×3 matrix of `Double`, stored by rows, used for rotation matrices and small covariances.
///
/// Values only, no allocation; safe to use from any thread.
@frozen
public struct Matrix3: Hashable, Sendable {
    /// First row.
    public var r0: Vector3
    /// Second row.
    public var r1: Vector3
    /// Third row.
    public var r2: Vector3

    /// Creates a matrix from its rows.
    @inlinable
    public init(rows r0: Vector3, _ r1: Vector3, _ r2: Vector3) {
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
    }

    /// The identity matrix.
    public static let identity = Matrix3(rows: Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))

    /// The zero matrix.
    public static let zero = Matrix3(rows: .zero, .zero, .zero)

    /// A diagonal matrix with `d` on its diagonal.
    @inlinable
    public static func diagonal(_ d: Vector3) -> Matrix3 {
        Matrix3(rows: Vector3(d.x, 0, 0), Vector3(0, d.y, 0), Vector3(0, 0, d.z))
    }

    /// The rotation matrix of a unit quaternion: `R · v == q.rotate(v)` (device → reference for an attitude).
    @inlinable @inline(__always)
    public init(_ q: Quaternion) {
        let (w, x, y, z) = (q.w, q.x, q.y, q.z)
        r0 = Vector3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y))
        r1 = Vector3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x))
        r2 = Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
    }

    /// The transpose.
    @inlinable
    public var transposed: Matrix3 {
        Matrix3(rows: Vector3(r0.x, r1.x, r2.x), Vector3(r0.y, r1.y, r2.y), Vector3(r0.z, r1.z, r2.z))
    }

    /// The diagonal `(m00, m11, m22)`.
    @inlinable public var diagonalVector: Vector3 { Vector3(r0.x, r1.y, r2.z) }

    /// `true` when every element is finite.
    @inlinable public var isFinite: Bool { r0.isFinite && r1.isFinite && r2.isFinite }

    /// Matrix–vector product.
    @inlinable
    public static func * (m: Matrix3, v: Vector3) -> Vector3 {
        Vector3(m.r0.dot(v), m.r1.dot(v), m.r2.dot(v))
    }

    /// Matrix product.
    @inlinable
    public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        let t = b.transposed
        return Matrix3(
            rows: Vector3(a.r0.dot(t.r0), a.r0.dot(t.r1), a.r0.dot(t.r2)),
            Vector3(a.r1.dot(t.r0), a.r1.dot(t.r1), a.r1.dot(t.r2)),
            Vector3(a.r2.dot(t.r0), a.r2.dot(t.r1), a.r2.dot(t.r2))
        )
    }

    /// Element-wise sum.
    @inlinable
    public static func + (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(rows: a.r0 + b.r0, a.r1 + b.r1, a.r2 + b.r2) }

    /// Element-wise difference.
    @inlinable
    public static func - (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(rows: a.r0 - b.r0, a.r1 - b.r1, a.r2 - b.r2) }

    /// Scaling by a scalar.
    @inlinable
    public static func * (a: Matrix3, s: Double) -> Matrix3 { Matrix3(rows: a.r0 * s, a.r1 * s, a.r2 * s) }
}

extension Matrix3 {
    /// The determinant.
    @inlinable
    public var determinant: Double { r0.dot(r1.cross(r2)) }

    /// The inverse, or `nil` when the matrix is singular or not finite.
    @inlinable
    public var inverse: Matrix3? {
        let det = determinant
        guard det.isFinite, abs(det) > 1e-300 else { return nil }
        // Rows of the inverse are the columns of the adjugate: (r1×r2, r2×r0, r0×r1) transposed.
        let c0 = r1.cross(r2), c1 = r2.cross(r0), c2 = r0.cross(r1)
        return Matrix3(rows: c0, c1, c2).transposed * (1 / det)
    }
}
