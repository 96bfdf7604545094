/// One term `amplitude · sin(omega · τ + phase)` of a trajectory.
struct Sinusoid: Sendable, Hashable {
    var amplitude: Double
    /// Angular frequency, rad/s.
    var omega: Double
    /// Phase, rad.
    var phase: Double
}

/// A scalar function of time with exact first and second derivatives:
/// `offset + rate · τ + Σ aᵢ sin(ωᵢ τ + φᵢ)`, τ in seconds since the simulation start.
///
/// Everything the scenarios need (band-limited wander, tremor, pulsed spins, a circle walked at
/// constant speed, gait oscillations in a turning frame) reduces to this form, so every derivative
/// the sensors need is analytic.
struct Signal: Sendable {
    var offset: Double = 0
    var rate: Double = 0
    var terms: [Sinusoid] = []

    /// Value, first and second derivative at τ. No allocation.
    @inline(__always)
    func evaluate(_ tau: Double) -> (value: Double, d1: Double, d2: Double) {
        var v = offset + rate * tau
        var d1 = rate
        var d2 = 0.0
        for t in terms {
            let a = t.omega * tau + t.phase
            let s = _sine(a)
            let c = _cosine(a)
            v += t.amplitude * s
            d1 += t.amplitude * t.omega * c
            d2 -= t.amplitude * t.omega * t.omega * s
        }
        return (v, d1, d2)
    }

    mutating func add(amplitude: Double, hertz: Double, phase: Double) {
        terms.append(Sinusoid(amplitude: amplitude, omega: 2 * .pi * hertz, phase: phase))
    }

    /// Adds a seeded band-limited random signal of root-mean-square value `rms` made of `count`
    /// sinusoids with frequencies log-uniform in `low…high` Hz, random phases, and amplitudes
    /// proportional to `f^(−slope)` (0: flat, 1: each term's derivative flat).
    mutating func addBand(rms: Double, low: Double, high: Double, count: Int, slope: Double = 0, rng: inout SplitMix64) {
        guard rms > 0, count > 0 else { return }
        var raw: [Sinusoid] = []
        var power = 0.0
        for _ in 0..<count {
            let f = low * _power(high / low, rng.nextUnit())
            let a = _power(f / low, -slope)
            raw.append(Sinusoid(amplitude: a, omega: 2 * .pi * f, phase: rng.uniform(0, 2 * .pi)))
            power += a * a / 2
        }
        let k = rms / power.squareRoot()
        for var s in raw {
            s.amplitude *= k
            terms.append(s)
        }
    }

    /// Adds a rotation about one axis whose rate pulses as `peakRate · sin²(π τ / period + phase)`
    /// rad/s (always ≥ 0 for positive `peakRate`): a net spin of `peakRate / 2` on average.
    mutating func addPulsedSpin(peakRate: Double, period: Double, phase: Double) {
        // ∫ P sin²(πτ/T + φ) dτ = P τ/2 − P T/(4π) sin(2πτ/T + 2φ)
        rate += peakRate / 2
        terms.append(Sinusoid(amplitude: -peakRate * period / (4 * .pi), omega: 2 * .pi / period, phase: 2 * phase))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline func _power(_ x: Double, _ y: Double) -> Double { pow(x, y) }
