/// Coefficients of a second-order Butterworth low-pass filter, discretised with the bilinear transform.
///
/// The cut-off frequency is `1 / (2π τ)` for a time constant `τ`. See S. Butterworth, "On the theory of
/// filter amplifiers", Wireless Engineer 7, 1930, and any DSP text for the bilinear transform.
/// Values only; safe from any thread.
@frozen
public struct LowPassCoefficients: Hashable, Sendable {
    /// Feed-forward coefficients.
    public var b0: Double, b1: Double, b2: Double
    /// Feedback coefficients (a0 = 1).
    public var a1: Double, a2: Double

    /// Coefficients for time constant `tau` (s) at time step `dt` (s). A non-positive `tau` gives a
    /// pass-through filter.
    public init(timeConstant tau: Double, dt: Double) {
        guard tau > 0, dt > 0, tau.isFinite, dt.isFinite else {
            b0 = 1; b1 = 0; b2 = 0; a1 = 0; a2 = 0
            return
        }
        let fc = 1 / (2 * Double.pi * tau)
        // Keep the cut-off below Nyquist so the bilinear transform stays stable.
        let k = _tan(Double.pi * min(fc * dt, 0.45))
        let k2 = k * k
        let r2 = 2.0.squareRoot()
        let n = 1 / (1 + r2 * k + k2)
        b0 = k2 * n
        b1 = 2 * b0
        b2 = b0
        a1 = 2 * (k2 - 1) * n
        a2 = (1 - r2 * k + k2) * n
    }
}

/// State of a second-order low-pass filter on a ``Vector3`` (direct form II transposed).
@frozen
public struct LowPassVector3: Hashable, Sendable {
    /// Internal delay states.
    public var s1: Vector3, s2: Vector3
    /// The last output.
    public var value: Vector3

    /// A filter at rest on `x` (its steady state for a constant input `x`).
    @inlinable
    public init(steadyAt x: Vector3, _ c: LowPassCoefficients) {
        s2 = x * (c.b2 - c.a2)
        s1 = x * (c.b1 - c.a1) + s2
        value = x
    }

    /// Filters one sample and returns the output.
    @inlinable @inline(__always) @discardableResult
    public mutating func filter(_ x: Vector3, _ c: LowPassCoefficients) -> Vector3 {
        let y = x * c.b0 + s1
        s1 = x * c.b1 - y * c.a1 + s2
        s2 = x * c.b2 - y * c.a2
        value = y
        return y
    }
}

/// State of a second-order low-pass filter on a ``Matrix3``.
@frozen
public struct LowPassMatrix3: Hashable, Sendable {
    /// Row filters.
    public var r0: LowPassVector3, r1: LowPassVector3, r2: LowPassVector3

    /// A filter at rest on `m`.
    @inlinable
    public init(steadyAt m: Matrix3, _ c: LowPassCoefficients) {
        r0 = LowPassVector3(steadyAt: m.r0, c)
        r1 = LowPassVector3(steadyAt: m.r1, c)
        r2 = LowPassVector3(steadyAt: m.r2, c)
    }

    /// The last output.
    @inlinable public var value: Matrix3 { Matrix3(rows: r0.value, r1.value, r2.value) }

    /// Filters one sample.
    @inlinable @inline(__always)
    public mutating func filter(_ m: Matrix3, _ c: LowPassCoefficients) {
        r0.filter(m.r0, c)
        r1.filter(m.r1, c)
        r2.filter(m.r2, c)
    }
}

/// The gain `1 − exp(−dt/τ)` of a first-order low-pass filter (1 when τ ≤ 0).
@inlinable
public func firstOrderGain(timeConstant tau: Double, dt: Double) -> Double {
    guard tau > 0 else { return 1 }
    return 1 - _exp(-dt / tau)
}
