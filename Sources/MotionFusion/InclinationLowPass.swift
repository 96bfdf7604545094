/// Second-order Butterworth low-pass filter on a ``Vector3`` whose time constant may change from one sample
/// to the next, used for the specific force of the inclination correction.
///
/// It is the trapezoidal (bilinear, pre-warped) discretisation of the state-variable filter
/// `τ² ÿ + √2 τ ẏ + y = x`, in the form of A. Simper, "Linear trapezoidal integrated state variable filter
/// with low noise optimisation" (Cytomic technical paper, 2013; see also V. Zavalishin, *The Art of VA
/// Filter Design*, 2018, ch. 4). For a constant time constant it has the transfer function of
/// ``LowPassCoefficients`` (the same bilinear Butterworth filter); unlike that direct form, its state is
/// the output and (scaled) derivative of the continuous filter, so changing `τ` changes how fast the
/// output moves, never where it is: no jump, no transient.
///
/// Values only; safe to copy between threads, not to share while mutated.
@frozen
public struct InclinationLowPass: Hashable, Sendable {
    /// First integrator state (band-pass memory), same unit as the input.
    public var s1: Vector3
    /// Second integrator state (low-pass memory), same unit as the input.
    public var s2: Vector3
    /// The last output.
    public var value: Vector3

    /// A filter at rest on `x` (its steady state for a constant input `x`).
    @inlinable
    public init(steadyAt x: Vector3) {
        s1 = .zero
        s2 = x
        value = x
    }

    /// Filters one sample.
    /// - Parameters:
    ///   - x: the input sample.
    ///   - halfStepRate: `dt / (2τ)` for time step `dt` and time constant `τ` (both seconds),
    ///     dimensionless, positive.
    /// - Returns: the output.
    @inlinable @inline(__always) @discardableResult
    public mutating func filter(_ x: Vector3, halfStepRate h: Double) -> Vector3 {
        // Pre-warped integrator gain g = tan(dt/(2τ)) (cut-off 1/(2πτ) Hz), by its series for the
        // usual small arguments (error < 1e-12 relative for h < 0.05), exactly beyond; capped below
        // Nyquist so that the filter stays stable for any step.
        let g: Double
        if h < 0.05 {
            let h2 = h * h
            g = h * (1 + h2 * (1.0 / 3 + h2 * (2.0 / 15 + h2 * (17.0 / 315))))
        } else {
            g = _tan(min(h, 0.45 * Double.pi))
        }
        let a1 = 1 / (1 + g * (g + 2.0.squareRoot()))
        let a2 = g * a1
        let a3 = g * a2
        let v3 = x - s2
        let v1 = s1 * a1 + v3 * a2
        let v2 = s2 + s1 * a2 + v3 * a3
        s1 = v1 * 2 - s1
        s2 = v2 * 2 - s2
        value = v2
        return v2
    }
}
