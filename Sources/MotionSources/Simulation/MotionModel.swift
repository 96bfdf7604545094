import MotionFusion

/// The immutable, deterministic part of a simulation: trajectories, bias wander and magnetic
/// environment as pure functions of time. Built once from ``SimulationOptions``; evaluating it does
/// not allocate.
struct MotionModel: Sendable {
    let options: SimulationOptions
    /// The instant (seconds since boot) at which the trajectory's time τ is 0.
    let startTime: Double

    // Attitude as yaw (about world z), then pitch (about device x), then roll (about device y):
    // q = Rz(yaw) · Rx(pitch) · Ry(roll), Core Motion's Euler order. Radians.
    var yaw = Signal()
    var pitch = Signal()
    var roll = Signal()
    // Position, metres, world frame.
    var px = Signal()
    var py = Signal()
    var pz = Signal()
    // Wandering part of the gyro bias, rad/s, device frame.
    var bx = Signal()
    var by = Signal()
    var bz = Signal()
    /// The step frequency (Hz) of a walking scenario, `nil` for the others.
    var stepFrequency: Double?

    init(options: SimulationOptions, startTime: Double) {
        self.options = options
        self.startTime = startTime
        var rng = SplitMix64(seed: options.seed ^ 0x3C6E_F372_FE94_F82B)
        buildScenario(options.scenario, rng: &rng)
        var biasRng = SplitMix64(seed: options.seed ^ 0xA54F_F53A_5F1D_36F1)
        bx = Self.gaussMarkov(sigma: options.gyroBiasInstability, tau: options.gyroBiasCorrelationTime, rng: &biasRng)
        by = Self.gaussMarkov(sigma: options.gyroBiasInstability, tau: options.gyroBiasCorrelationTime, rng: &biasRng)
        bz = Self.gaussMarkov(sigma: options.gyroBiasInstability, tau: options.gyroBiasCorrelationTime, rng: &biasRng)
    }

    /// A stationary Gauss–Markov process (autocovariance σ² e^{−|Δt|/τ}) approximated by random
    /// Fourier features: angular frequencies drawn from its Lorentzian spectrum (a Cauchy law of
    /// scale 1/τ), limited to 0.05 Hz so the bias only wanders slowly, with random phases.
    static func gaussMarkov(sigma: Double, tau: Double, rng: inout SplitMix64, count: Int = 8) -> Signal {
        var s = Signal()
        guard sigma > 0, tau > 0, tau.isFinite else { return s }
        let limit = 2 * Double.pi * 0.05
        let amplitude = sigma * (2.0 / Double(count)).squareRoot()
        for _ in 0..<count {
            var omega = limit
            for _ in 0..<16 {
                let w = abs(_tangent(.pi * (rng.nextUnit() - 0.5))) / tau
                if w <= limit { omega = w; break }
            }
            s.terms.append(Sinusoid(amplitude: amplitude, omega: omega, phase: rng.uniform(0, 2 * .pi)))
        }
        return s
    }

    /// The ground truth at `t` seconds since boot.
    func truth(at t: Double) -> SimulatedTruth {
        let tau = t - startTime
        let (a, r) = attitudeAndRate(tau)
        var (p, v, acc) = kinematics(tau)
        for burst in options.accelerationBursts {
            let (bp, bv, ba) = Self.burst(burst, tau)
            p += bp; v += bv; acc += ba
        }
        let gravity = a.inverseRotate(Vector3(0, 0, -1))
        let user = a.inverseRotate(acc * (-1 / SimulationOptions.standardGravity))
        let earth = a.inverseRotate(options.earthField)
        var field = earth
        for d in options.magneticDisturbances {
            let w = Self.envelope(d, tau)
            if w > 0 {
                field += (d.frame == .world ? a.inverseRotate(d.field) : d.field) * w
            }
        }
        return SimulatedTruth(
            timestamp: t, attitude: a, rotationRate: r, gravity: gravity, userAcceleration: user,
            gyroBias: gyroBias(tau), magneticField: field, earthMagneticField: earth,
            position: p, velocity: v, acceleration: acc
        )
    }

    /// The gyro bias at τ seconds after the start, rad/s.
    @inline(__always)
    func gyroBias(_ tau: Double) -> Vector3 {
        options.gyroBias + Vector3(bx.evaluate(tau).value, by.evaluate(tau).value, bz.evaluate(tau).value)
    }

    /// Attitude (device → world) and its exact body rate at τ.
    ///
    /// For q = A(ψ)·B(θ)·C(φ) with fixed unit axes a, b, c, differentiating gives
    /// ω = (B·C)ᵀ a ψ̇ + Cᵀ b θ̇ + c φ̇, with ω the body rate of q̇ = ½ q ⊗ (0, ω).
    func attitudeAndRate(_ tau: Double) -> (Quaternion, Vector3) {
        let psi = yaw.evaluate(tau)
        let theta = pitch.evaluate(tau)
        let phi = roll.evaluate(tau)
        let qa = Quaternion(w: _cosine(psi.value / 2), x: 0, y: 0, z: _sine(psi.value / 2))
        let qb = Quaternion(w: _cosine(theta.value / 2), x: _sine(theta.value / 2), y: 0, z: 0)
        let qc = Quaternion(w: _cosine(phi.value / 2), x: 0, y: _sine(phi.value / 2), z: 0)
        let bc = qb * qc
        let q = qa * bc
        let rate = bc.inverseRotate(Vector3(0, 0, 1)) * psi.d1
            + qc.inverseRotate(Vector3(1, 0, 0)) * theta.d1
            + Vector3(0, phi.d1, 0)
        return (q, rate)
    }

    /// Position (m), velocity (m/s) and acceleration (m/s²) of the scenario's own trajectory, world frame.
    func kinematics(_ tau: Double) -> (Vector3, Vector3, Vector3) {
        let x = px.evaluate(tau), y = py.evaluate(tau), z = pz.evaluate(tau)
        return (Vector3(x.value, y.value, z.value), Vector3(x.d1, y.d1, z.d1), Vector3(x.d2, y.d2, z.d2))
    }

    /// The contribution of one burst: Hann-shaped acceleration, its exact integrals afterwards.
    static func burst(_ b: AccelerationBurst, _ tau: Double) -> (Vector3, Vector3, Vector3) {
        let s = tau - b.start
        let d = b.duration
        guard s > 0, d > 0 else { return (.zero, .zero, .zero) }
        let peak = b.peak * SimulationOptions.standardGravity
        if s < d {
            let w = 2 * Double.pi / d
            let a = peak * (0.5 * (1 - _cosine(w * s)))
            let v = peak * (s / 2 - _sine(w * s) / (2 * w))
            let p = peak * (s * s / 4 + (_cosine(w * s) - 1) / (2 * w * w))
            return (p, v, a)
        }
        let v = peak * (d / 2)
        return (peak * (d * d / 4) + v * (s - d), v, .zero)
    }

    /// The strength (0…1) of a disturbance at τ: a window with raised-cosine ramps.
    static func envelope(_ d: MagneticDisturbance, _ tau: Double) -> Double {
        let s = tau - d.start
        guard s >= 0, s <= d.duration else { return 0 }
        let ramp = min(max(d.ramp, 0), d.duration / 2)
        guard ramp > 0 else { return 1 }
        if s < ramp { return 0.5 * (1 - _cosine(Double.pi * s / ramp)) }
        let e = d.duration - s
        if e < ramp { return 0.5 * (1 - _cosine(Double.pi * e / ramp)) }
        return 1
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline func _tangent(_ x: Double) -> Double { tan(x) }
