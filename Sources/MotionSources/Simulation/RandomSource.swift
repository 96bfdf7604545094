#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Libm bindings used by the simulator (the standard library has no trigonometry).
@usableFromInline func _sine(_ x: Double) -> Double { sin(x) }
@usableFromInline func _cosine(_ x: Double) -> Double { cos(x) }

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny, fast generator used to seed others and to draw
/// scenario parameters. Deterministic on every platform.
struct SplitMix64: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 random bits.
    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in [a, b).
    mutating func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * nextUnit() }

    /// Standard normal (Box–Muller; one draw per call, simple rather than fast).
    mutating func nextGaussian() -> Double {
        let u1 = 1 - nextUnit() // (0, 1]
        let u2 = nextUnit()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// xoshiro256** (Blackman & Vigna 2018) with a cached Box–Muller pair: the white-noise generator of
/// one sensor. No allocation; about 20 ns per Gaussian.
struct NoiseGenerator: Sendable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64
    private var spare: Double = 0
    private var hasSpare = false

    init(seed: UInt64) {
        var sm = SplitMix64(seed: seed)
        s0 = sm.next(); s1 = sm.next(); s2 = sm.next(); s3 = sm.next()
    }

    @inline(__always)
    private static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    mutating func next() -> UInt64 {
        let result = Self.rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = Self.rotl(s3, 45)
        return result
    }

    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Standard normal deviate.
    mutating func nextGaussian() -> Double {
        if hasSpare {
            hasSpare = false
            return spare
        }
        let u1 = 1 - nextUnit() // (0, 1], so log is finite
        let u2 = nextUnit()
        let r = (-2 * log(u1)).squareRoot()
        let a = 2 * Double.pi * u2
        spare = r * sin(a)
        hasSpare = true
        return r * cos(a)
    }

    /// A vector of three independent normal deviates scaled by `sigma`.
    mutating func gaussianVector(sigma: Double) -> (Double, Double, Double) {
        guard sigma > 0 else { return (0, 0, 0) }
        return (nextGaussian() * sigma, nextGaussian() * sigma, nextGaussian() * sigma)
    }
}
