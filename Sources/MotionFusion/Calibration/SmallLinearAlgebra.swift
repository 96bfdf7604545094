/// Small dense linear algebra for the batch calibrations: symmetric 3×3 eigen-decomposition and the
/// normal equations of small least-squares problems. Pure Swift, values only.

/// The eigen-decomposition of a symmetric 3×3 matrix by the cyclic Jacobi method (G. H. Golub and
/// C. F. Van Loan, *Matrix Computations*, 4th ed., 2013, §8.5): `m = V · diag(values) · Vᵀ`.
public struct SymmetricEigen3: Sendable, Hashable {
    /// The eigenvalues, in ascending order.
    public var values: Vector3
    /// The eigenvectors as the columns of an orthogonal matrix, in the order of ``values``.
    public var vectors: Matrix3

    /// Decomposes `m`, which must be symmetric (only its upper triangle is read). A matrix that is not
    /// finite gives NaN values.
    public init(_ m: Matrix3) {
        var a: [[Double]] = [[m.r0.x, m.r0.y, m.r0.z], [m.r0.y, m.r1.y, m.r1.z], [m.r0.z, m.r1.z, m.r2.z]]
        var v: [[Double]] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        guard m.isFinite else {
            values = Vector3(.nan, .nan, .nan)
            vectors = .identity
            return
        }
        for _ in 0..<50 {
            let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2]
            let diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2]
            if off <= 1e-30 * max(diag, 1e-300) { break }
            for (p, q) in [(0, 1), (0, 2), (1, 2)] where a[p][q] != 0 {
                // The rotation that zeroes a[p][q] (Golub & Van Loan, Algorithm 8.5.1).
                let tau = (a[q][q] - a[p][p]) / (2 * a[p][q])
                let t = (tau >= 0 ? 1 : -1) / (abs(tau) + (1 + tau * tau).squareRoot())
                let c = 1 / (1 + t * t).squareRoot(), s = t * c
                for k in 0..<3 {
                    let akp = a[k][p], akq = a[k][q]
                    a[k][p] = c * akp - s * akq
                    a[k][q] = s * akp + c * akq
                }
                for k in 0..<3 {
                    let apk = a[p][k], aqk = a[q][k]
                    a[p][k] = c * apk - s * aqk
                    a[q][k] = s * apk + c * aqk
                }
                for k in 0..<3 {
                    let vkp = v[k][p], vkq = v[k][q]
                    v[k][p] = c * vkp - s * vkq
                    v[k][q] = s * vkp + c * vkq
                }
            }
        }
        let order = [0, 1, 2].sorted { a[$0][$0] < a[$1][$1] }
        values = Vector3(a[order[0]][order[0]], a[order[1]][order[1]], a[order[2]][order[2]])
        vectors = Matrix3(rows: Vector3(v[0][order[0]], v[0][order[1]], v[0][order[2]]),
                          Vector3(v[1][order[0]], v[1][order[1]], v[1][order[2]]),
                          Vector3(v[2][order[0]], v[2][order[1]], v[2][order[2]]))
    }

    /// `V · diag(f(values)) · Vᵀ`: a function of the matrix (its square root, its inverse …).
    public func map(_ f: (Double) -> Double) -> Matrix3 {
        let d = Matrix3.diagonal(Vector3(f(values.x), f(values.y), f(values.z)))
        return vectors * d * vectors.transposed
    }
}

/// Accumulates the normal equations `Σ φ φᵀ θ = Σ φ y` of a linear least-squares problem with `n`
/// unknowns and solves them by Gaussian elimination with partial pivoting.
struct NormalEquations {
    let n: Int
    private var ata: [Double]
    private var aty: [Double]
    private(set) var rows = 0

    init(unknowns n: Int) {
        self.n = n
        ata = [Double](repeating: 0, count: n * n)
        aty = [Double](repeating: 0, count: n)
    }

    /// Adds one equation `φ · θ = y`.
    mutating func add(_ phi: [Double], _ y: Double) {
        for i in 0..<n {
            let pi = phi[i]
            aty[i] += pi * y
            for j in i..<n { ata[i * n + j] += pi * phi[j] }
        }
        rows += 1
    }

    /// The least-squares solution, or `nil` when the equations are (numerically) singular: a pivot
    /// below `relativeTolerance` times the largest diagonal element.
    func solve(relativeTolerance: Double = 1e-10) -> [Double]? {
        var m = ata
        for i in 0..<n { for j in 0..<i { m[i * n + j] = m[j * n + i] } }
        var b = aty
        var largest = 0.0
        for i in 0..<n { largest = max(largest, abs(m[i * n + i])) }
        guard largest.isFinite, largest > 0 else { return nil }
        for col in 0..<n {
            var pivot = col
            for r in (col + 1)..<max(n, col + 1) where abs(m[r * n + col]) > abs(m[pivot * n + col]) { pivot = r }
            guard abs(m[pivot * n + col]) > relativeTolerance * largest else { return nil }
            if pivot != col {
                for k in 0..<n { m.swapAt(col * n + k, pivot * n + k) }
                b.swapAt(col, pivot)
            }
            let d = m[col * n + col]
            for r in (col + 1)..<max(n, col + 1) {
                let f = m[r * n + col] / d
                if f == 0 { continue }
                for k in col..<n { m[r * n + k] -= f * m[col * n + k] }
                b[r] -= f * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for i in stride(from: n - 1, through: 0, by: -1) {
            var s = b[i]
            for k in (i + 1)..<max(n, i + 1) { s -= m[i * n + k] * x[k] }
            x[i] = s / m[i * n + i]
        }
        return x.allSatisfy(\.isFinite) ? x : nil
    }
}
