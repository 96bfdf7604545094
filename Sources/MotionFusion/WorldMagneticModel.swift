/// The World Magnetic Model: evaluates a spherical-harmonic main-field model (NOAA NCEI / BGS coefficient
/// format, e.g. WMM2025) at a place and time.
///
/// Pure maths on given coefficients, following the equations of the WMM technical report (Chulliat et
/// al., "The US/UK World Magnetic Model for 2020–2025", NOAA NCEI, 2020, §1.2): geodetic → geocentric
/// coordinates on WGS-84, secular variation applied linearly from the epoch, Schmidt semi-normalised
/// associated Legendre functions by the standard recursions, and the field rotated back to geodetic
/// north–east–down. Values only; safe from any thread.
public struct WorldMagneticModel: Sendable, Hashable {
    /// Model epoch, decimal years (e.g. 2025.0).
    public var epoch: Double
    /// Model name from the header (e.g. `WMM-2025`).
    public var name: String
    /// Maximum degree.
    public var maximumDegree: Int
    /// Gauss coefficients g(n, m), nT, indexed by ``index(_:_:)``.
    public var g: [Double]
    /// Gauss coefficients h(n, m), nT.
    public var h: [Double]
    /// Secular variation of g, nT/year.
    public var gDot: [Double]
    /// Secular variation of h, nT/year.
    public var hDot: [Double]

    /// Storage index of coefficient (n, m).
    @inlinable
    public static func index(_ n: Int, _ m: Int) -> Int { n * (n + 1) / 2 + m }

    /// Parses a `.COF` file's text. Returns `nil` when the header or the coefficient lines are malformed.
    public init?(cof text: String) {
        var epoch: Double? = nil
        var name = ""
        var rows: [(Int, Int, Double, Double, Double, Double)] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if f.isEmpty { continue }
            if f[0].hasPrefix("9999") { break }
            if epoch == nil {
                guard let e = Double(f[0]) else { return nil }
                epoch = e
                name = f.count > 1 ? String(f[1]) : ""
                continue
            }
            guard f.count >= 6, let n = Int(f[0]), let m = Int(f[1]), let gv = Double(f[2]), let hv = Double(f[3]),
                  let gd = Double(f[4]), let hd = Double(f[5]), n >= 1, m >= 0, m <= n, n <= 100 else { return nil }
            rows.append((n, m, gv, hv, gd, hd))
        }
        guard let epoch, let maxN = rows.map(\.0).max() else { return nil }
        self.epoch = epoch
        self.name = name
        self.maximumDegree = maxN
        let count = Self.index(maxN, maxN) + 1
        g = Array(repeating: 0, count: count)
        h = g
        gDot = g
        hDot = g
        for (n, m, gv, hv, gd, hd) in rows {
            let i = Self.index(n, m)
            g[i] = gv; h[i] = hv; gDot[i] = gd; hDot[i] = hd
        }
    }

    /// The field at a place and time.
    public struct Field: Sendable, Hashable {
        /// North component, nT.
        public var north: Double
        /// East component, nT.
        public var east: Double
        /// Down component, nT.
        public var down: Double
        /// Horizontal intensity, nT.
        public var horizontal: Double { (north * north + east * east).squareRoot() }
        /// Total intensity, nT.
        public var total: Double { (north * north + east * east + down * down).squareRoot() }
        /// Declination, degrees, positive east of true north.
        public var declination: Double { _atan2(east, north) * 180 / Double.pi }
        /// Inclination (dip), degrees, positive down.
        public var inclination: Double { _atan2(down, horizontal) * 180 / Double.pi }
    }

    /// Evaluates the model.
    /// - Parameters:
    ///   - latitude: geodetic latitude, degrees.
    ///   - longitude: longitude, degrees east.
    ///   - height: height above the WGS-84 ellipsoid, km. Default 0.
    ///   - year: decimal year (e.g. 2026.5).
    public func field(latitude: Double, longitude: Double, height: Double = 0, year: Double) -> Field {
        let deg = Double.pi / 180
        let a = 6378.137, f = 1 / 298.257223563
        let e2 = f * (2 - f)
        let re = 6371.2
        let phi = latitude * deg, lambda = longitude * deg
        let sinPhi = _sin(phi), cosPhi = _cos(phi)
        let rc = a / (1 - e2 * sinPhi * sinPhi).squareRoot()
        let p = (rc + height) * cosPhi
        let z = (rc * (1 - e2) + height) * sinPhi
        let r = (p * p + z * z).squareRoot()
        let phiC = _asin(z / r)
        let dt = year - epoch
        let x = _sin(phiC) // cos θ
        let s = _cos(phiC) // sin θ
        let nMax = maximumDegree
        let count = Self.index(nMax, nMax) + 1
        var pnm = [Double](repeating: 0, count: count)
        var dpnm = [Double](repeating: 0, count: count)
        pnm[0] = 1
        for n in 1...nMax {
            for m in 0...n {
                let i = Self.index(n, m)
                if n == m {
                    let k = n == 1 ? 1 : ((2 * Double(n) - 1) / (2 * Double(n))).squareRoot()
                    let j = Self.index(n - 1, n - 1)
                    pnm[i] = k * s * pnm[j]
                    dpnm[i] = k * (x * pnm[j] + s * dpnm[j])
                } else {
                    let j1 = Self.index(n - 1, m)
                    let nn = Double(n), mm = Double(m)
                    let k2 = n - 2 >= m ? ((nn - 1) * (nn - 1) - mm * mm).squareRoot() : 0
                    let p2 = n - 2 >= m ? pnm[Self.index(n - 2, m)] : 0
                    let d2 = n - 2 >= m ? dpnm[Self.index(n - 2, m)] : 0
                    let den = (nn * nn - mm * mm).squareRoot()
                    pnm[i] = ((2 * nn - 1) * x * pnm[j1] - k2 * p2) / den
                    dpnm[i] = ((2 * nn - 1) * (x * dpnm[j1] - s * pnm[j1]) - k2 * d2) / den
                }
            }
        }
        var bx = 0.0, by = 0.0, bz = 0.0
        var ratio = (re / r) * (re / r)
        for n in 1...nMax {
            ratio *= re / r
            var sx = 0.0, sy = 0.0, sz = 0.0
            for m in 0...n {
                let i = Self.index(n, m)
                let gv = g[i] + dt * gDot[i], hv = h[i] + dt * hDot[i]
                let cm = _cos(Double(m) * lambda), sm = _sin(Double(m) * lambda)
                let t = gv * cm + hv * sm
                sx += t * dpnm[i]
                sy += Double(m) * (gv * sm - hv * cm) * pnm[i]
                sz += t * pnm[i]
            }
            bx += ratio * sx
            by += ratio * sy
            bz -= Double(n + 1) * ratio * sz
        }
        if s > 1e-12 { by /= s } else { by = 0 }
        let psi = phiC - phi
        let north = bx * _cos(psi) - bz * _sin(psi)
        let down = bx * _sin(psi) + bz * _cos(psi)
        return Field(north: north, east: by, down: down)
    }
}
