/// Polynomial approximations of inverse trigonometric functions for the per-sample paths, from
/// M. Abramowitz and I. A. Stegun, *Handbook of Mathematical Functions*, 1964, formulas 4.4.46 and 4.4.49.
/// Maximum absolute error about 2·10⁻⁸ rad (≈ 10⁻⁶ degrees), far below sensor noise.

/// arcsin(x) for x in [−1, 1] (clamped), radians, |error| ≤ 2.2·10⁻⁸.
@inline(__always)
func fastAsin(_ x: Double) -> Double {
    let a = min(abs(x), 1)
    // acos(a) = √(1 − a) · P(a) (A&S 4.4.46), asin = π/2 − acos.
    var p = -0.0012624911
    p = p * a + 0.0066700901
    p = p * a - 0.0170881256
    p = p * a + 0.0308918810
    p = p * a - 0.0501743046
    p = p * a + 0.0889789874
    p = p * a - 0.2145988016
    p = p * a + 1.5707963050
    let r = Double.pi / 2 - (1 - a).squareRoot() * p
    return x < 0 ? -r : r
}

/// atan2(y, x), radians in (−π, π], |error| ≤ 1.4·10⁻⁸ (0 for x = y = 0).
@inline(__always)
func fastAtan2(_ y: Double, _ x: Double) -> Double {
    let ax = abs(x), ay = abs(y)
    let big = max(ax, ay)
    guard big > 0 else { return 0 }
    let t = min(ax, ay) / big
    let t2 = t * t
    // atan(t) = t · Q(t²) on [0, 1] (A&S 4.4.49).
    var q = 0.0028662257
    q = q * t2 - 0.0161657367
    q = q * t2 + 0.0429096138
    q = q * t2 - 0.0752896400
    q = q * t2 + 0.1065626393
    q = q * t2 - 0.1420889944
    q = q * t2 + 0.1999355085
    q = q * t2 - 0.3333314528
    q = q * t2 + 1
    var r = t * q
    if ay > ax { r = Double.pi / 2 - r }
    if x < 0 { r = Double.pi - r }
    return y < 0 ? -r : r
}
