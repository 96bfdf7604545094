/// The trajectories of each ``SimulationScenario``. All amplitudes and bands are documented on the
/// scenario cases; the seed picks values inside them.
extension MotionModel {
    private static let degree = Double.pi / 180

    mutating func buildScenario(_ scenario: SimulationScenario, rng: inout SplitMix64) {
        let heading = rng.uniform(0, 2 * .pi)
        switch scenario {
        case .still:
            yaw.offset = heading
        case .handheld:
            buildHandheld(heading: heading, rng: &rng)
        case .rotate:
            buildRotate(heading: heading, rng: &rng)
        case .walk:
            buildWalk(rng: &rng)
        case .run:
            buildWalk(rng: &rng, gait: .running)
        case .cycle:
            buildCycle(rng: &rng)
        case .drive:
            buildDrive(heading: heading, rng: &rng)
        case .shake:
            buildShake(heading: heading, rng: &rng)
        }
    }

    /// Physiological tremor: 8–12 Hz, tiny angles (≈0.02°) and displacements (≈0.03 mm rms).
    private mutating func addTremor(angle: Double, displacement: Double, rng: inout SplitMix64) {
        yaw.addBand(rms: angle * 0.7, low: 8, high: 12, count: 3, rng: &rng)
        pitch.addBand(rms: angle, low: 8, high: 12, count: 3, rng: &rng)
        roll.addBand(rms: angle, low: 8, high: 12, count: 3, rng: &rng)
        px.addBand(rms: displacement, low: 8, high: 12, count: 3, rng: &rng)
        py.addBand(rms: displacement, low: 8, high: 12, count: 3, rng: &rng)
        pz.addBand(rms: displacement, low: 8, high: 12, count: 3, rng: &rng)
    }

    private mutating func buildHandheld(heading: Double, rng: inout SplitMix64) {
        let d = Self.degree
        yaw.offset = heading
        yaw.addBand(rms: 8 * d, low: 0.01, high: 0.1, count: 4, rng: &rng)
        pitch.offset = 35 * d
        pitch.addBand(rms: 3 * d, low: 0.03, high: 0.3, count: 4, slope: 0.5, rng: &rng)
        roll.addBand(rms: 3 * d, low: 0.03, high: 0.3, count: 4, slope: 0.5, rng: &rng)
        for i in 0..<3 {
            var s = Signal()
            s.addBand(rms: 0.015, low: 0.1, high: 1, count: 4, slope: 1, rng: &rng)
            switch i {
            case 0: px = s
            case 1: py = s
            default: pz = s
            }
        }
        addTremor(angle: 0.02 * d, displacement: 3e-5, rng: &rng)
    }

    private mutating func buildRotate(heading: Double, rng: inout SplitMix64) {
        let d = Self.degree
        yaw.offset = heading
        yaw.addPulsedSpin(peakRate: rng.uniform(1.8, 2.2), period: rng.uniform(4, 5), phase: rng.uniform(0, .pi))
        pitch.addPulsedSpin(peakRate: rng.uniform(2.7, 3.0), period: rng.uniform(2.5, 3.5), phase: rng.uniform(0, .pi))
        roll.addPulsedSpin(peakRate: rng.uniform(2.2, 2.6), period: rng.uniform(3, 4.5), phase: rng.uniform(0, .pi))
        yaw.addBand(rms: 2 * d, low: 0.2, high: 2, count: 3, slope: 1, rng: &rng)
        pitch.addBand(rms: 2 * d, low: 0.2, high: 2, count: 3, slope: 1, rng: &rng)
        roll.addBand(rms: 2 * d, low: 0.2, high: 2, count: 3, slope: 1, rng: &rng)
        px.addBand(rms: 0.02, low: 0.2, high: 2, count: 4, slope: 1, rng: &rng)
        py.addBand(rms: 0.02, low: 0.2, high: 2, count: 4, slope: 1, rng: &rng)
        pz.addBand(rms: 0.02, low: 0.2, high: 2, count: 4, slope: 1, rng: &rng)
        addTremor(angle: 0.02 * d, displacement: 3e-5, rng: &rng)
    }

    /// The ranges of a gait scenario (documented on ``SimulationScenario/walk`` and ``SimulationScenario/run``).
    struct Gait {
        var step: ClosedRange<Double>, speed: ClosedRange<Double>, radius: ClosedRange<Double>
        var surge: Double, sway: Double, bounce: ClosedRange<Double>, tilt: Double
        static let walking = Gait(step: 1.8...2.0, speed: 1.2...1.5, radius: 40...80, surge: 0.012, sway: 0.02,
                                  bounce: 0.022...0.028, tilt: 1)
        static let running = Gait(step: 2.6...3.0, speed: 2.8...3.5, radius: 60...100, surge: 0.02, sway: 0.03,
                                  bounce: 0.04...0.05, tilt: 2.5)
    }

    private mutating func buildWalk(rng: inout SplitMix64, gait: Gait = .walking) {
        let d = Self.degree
        let step = rng.uniform(gait.step.lowerBound, gait.step.upperBound) // Hz
        stepFrequency = step
        let stepOmega = 2 * Double.pi * step
        let speed = rng.uniform(gait.speed.lowerBound, gait.speed.upperBound) // m/s
        let radius = rng.uniform(gait.radius.lowerBound, gait.radius.upperBound) // m
        let turn: Double = rng.nextUnit() < 0.5 ? 1 : -1
        let omega = turn * speed / radius // rad/s, rate of heading change
        let start = rng.uniform(0, 2 * .pi) // angle on the circle
        // The path: a circle about the origin; heading h = ωτ + start + turn·π/2.
        px.terms.append(Sinusoid(amplitude: radius, omega: omega, phase: start + .pi / 2))
        py.terms.append(Sinusoid(amplitude: radius, omega: omega, phase: start))
        let headingPhase = start + turn * .pi / 2
        // Forward surge at the step frequency (walking ±1.2 cm, ≈0.17 g), lateral sway at half of it (±2 cm).
        addAlongPath(amplitude: gait.surge, omega: stepOmega, phase: rng.uniform(0, 2 * .pi),
                     headingRate: omega, headingPhase: headingPhase, lateral: false)
        addAlongPath(amplitude: gait.sway, omega: stepOmega / 2, phase: rng.uniform(0, 2 * .pi),
                     headingRate: omega, headingPhase: headingPhase, lateral: true)
        // Vertical bounce: fundamental (walking ≈2.5 cm) plus a small second harmonic.
        let bounce = rng.uniform(0, 2 * .pi)
        pz.terms.append(Sinusoid(amplitude: rng.uniform(gait.bounce.lowerBound, gait.bounce.upperBound),
                                 omega: stepOmega, phase: bounce))
        pz.terms.append(Sinusoid(amplitude: 0.1 * gait.bounce.lowerBound, omega: 2 * stepOmega, phase: rng.uniform(0, 2 * .pi)))
        // Phone held in front, top along the walking direction: yaw = h − π/2.
        yaw.offset = headingPhase - .pi / 2
        yaw.rate = omega
        yaw.addBand(rms: 5 * d, low: 0.02, high: 0.2, count: 4, rng: &rng)
        yaw.terms.append(Sinusoid(amplitude: gait.tilt * d, omega: stepOmega / 2, phase: rng.uniform(0, 2 * .pi)))
        pitch.offset = 40 * d
        pitch.addBand(rms: 2 * d, low: 0.05, high: 0.5, count: 3, slope: 0.5, rng: &rng)
        pitch.terms.append(Sinusoid(amplitude: 1.5 * gait.tilt * d, omega: stepOmega, phase: bounce + rng.uniform(-0.5, 0.5)))
        roll.addBand(rms: 2 * d, low: 0.05, high: 0.5, count: 3, slope: 0.5, rng: &rng)
        roll.terms.append(Sinusoid(amplitude: 2 * gait.tilt * d, omega: stepOmega / 2, phase: rng.uniform(0, 2 * .pi)))
        addTremor(angle: 0.02 * d, displacement: 3e-5, rng: &rng)
    }

    /// Adds to `signal` a seeded band of `count` sinusoids at `low…high` Hz (log-uniform) whose
    /// acceleration (second derivative) is flat across the band with RMS `g` (in g).
    private static func addAccelerationBand(_ signal: inout Signal, g: Double, low: Double, high: Double, count: Int,
                                            rng: inout SplitMix64) {
        var band = Signal()
        band.addBand(rms: 1, low: low, high: high, count: count, slope: 2, rng: &rng)
        var power = 0.0
        for t in band.terms { power += (t.amplitude * t.omega * t.omega) * (t.amplitude * t.omega * t.omega) / 2 }
        guard power > 0 else { return }
        let k = g * SimulationOptions.standardGravity / power.squareRoot()
        for var t in band.terms {
            t.amplitude *= k
            signal.terms.append(t)
        }
    }

    private mutating func buildCycle(rng: inout SplitMix64) {
        let d = Self.degree
        let cadence = rng.uniform(1.0, 1.5) // pedal revolutions per second
        let w = 2 * Double.pi * cadence
        let speed = rng.uniform(4, 7)
        let radius = rng.uniform(80, 150)
        let turn: Double = rng.nextUnit() < 0.5 ? 1 : -1
        let omega = turn * speed / radius
        let start = rng.uniform(0, 2 * .pi)
        px.terms.append(Sinusoid(amplitude: radius, omega: omega, phase: start + .pi / 2))
        py.terms.append(Sinusoid(amplitude: radius, omega: omega, phase: start))
        let headingPhase = start + turn * .pi / 2
        // The bicycle rocks from side to side once per revolution.
        addAlongPath(amplitude: 0.01, omega: w, phase: rng.uniform(0, 2 * .pi),
                     headingRate: omega, headingPhase: headingPhase, lateral: true)
        // A push per pedal stroke (twice per revolution), ≈0.02 g.
        pz.terms.append(Sinusoid(amplitude: 0.02 * SimulationOptions.standardGravity / (4 * w * w), omega: 2 * w,
                                 phase: rng.uniform(0, 2 * .pi)))
        // Road vibration through stiff tyres.
        Self.addAccelerationBand(&pz, g: 0.1, low: 8, high: 24, count: 8, rng: &rng)
        Self.addAccelerationBand(&px, g: 0.04, low: 8, high: 24, count: 6, rng: &rng)
        Self.addAccelerationBand(&py, g: 0.04, low: 8, high: 24, count: 6, rng: &rng)
        // Handlebar mount: screen up and tilted towards the rider, top forward.
        yaw.offset = headingPhase - .pi / 2
        yaw.rate = omega
        yaw.addBand(rms: 2 * d, low: 0.05, high: 0.5, count: 3, rng: &rng)
        yaw.terms.append(Sinusoid(amplitude: 1.5 * d, omega: w, phase: rng.uniform(0, 2 * .pi)))
        pitch.offset = 20 * d
        pitch.addBand(rms: 0.3 * d, low: 5, high: 15, count: 4, rng: &rng)
        roll.terms.append(Sinusoid(amplitude: rng.uniform(2, 4) * d, omega: w, phase: rng.uniform(0, 2 * .pi)))
        roll.addBand(rms: 0.3 * d, low: 5, high: 15, count: 4, rng: &rng)
    }

    private mutating func buildDrive(heading: Double, rng: inout SplitMix64) {
        let d = Self.degree
        // Accelerating, braking and cornering: horizontal, 0.02–0.2 Hz, ≈0.08 g.
        Self.addAccelerationBand(&px, g: 0.08, low: 0.02, high: 0.2, count: 6, rng: &rng)
        Self.addAccelerationBand(&py, g: 0.05, low: 0.02, high: 0.2, count: 6, rng: &rng)
        // Suspension bounce and engine/road vibration.
        Self.addAccelerationBand(&pz, g: 0.02, low: 1, high: 2, count: 4, rng: &rng)
        Self.addAccelerationBand(&pz, g: 0.05, low: 6, high: 25, count: 10, rng: &rng)
        Self.addAccelerationBand(&px, g: 0.02, low: 6, high: 25, count: 6, rng: &rng)
        Self.addAccelerationBand(&py, g: 0.02, low: 6, high: 25, count: 6, rng: &rng)
        // Lying in a holder, screen up; the car turns slowly and rolls and pitches a little.
        yaw.offset = heading
        yaw.addBand(rms: 20 * d, low: 0.005, high: 0.05, count: 4, rng: &rng)
        pitch.addBand(rms: 0.3 * d, low: 0.3, high: 2, count: 3, rng: &rng)
        roll.addBand(rms: 0.3 * d, low: 0.3, high: 2, count: 3, rng: &rng)
    }

    /// Adds an oscillation `A sin(Ωτ + β)` along the walking direction (or to its left) while that
    /// direction turns as h = ωτ + c, expanded into plain sinusoids (product-to-sum) so derivatives
    /// stay exact.
    private mutating func addAlongPath(amplitude: Double, omega: Double, phase: Double,
                                       headingRate w: Double, headingPhase c: Double, lateral: Bool) {
        let half = amplitude / 2
        // u·cos h = ½ sin((Ω+ω)τ+β+c) + ½ sin((Ω−ω)τ+β−c)
        // u·sin h = ½ sin((Ω−ω)τ+β−c+π/2) − ½ sin((Ω+ω)τ+β+c+π/2)
        let cosTerms = [
            Sinusoid(amplitude: half, omega: omega + w, phase: phase + c),
            Sinusoid(amplitude: half, omega: omega - w, phase: phase - c),
        ]
        let sinTerms = [
            Sinusoid(amplitude: half, omega: omega - w, phase: phase - c + .pi / 2),
            Sinusoid(amplitude: -half, omega: omega + w, phase: phase + c + .pi / 2),
        ]
        if lateral {
            // Left of the path: (−sin h, cos h).
            px.terms += sinTerms.map { Sinusoid(amplitude: -$0.amplitude, omega: $0.omega, phase: $0.phase) }
            py.terms += cosTerms
        } else {
            px.terms += cosTerms
            py.terms += sinTerms
        }
    }

    private mutating func buildShake(heading: Double, rng: inout SplitMix64) {
        let d = Self.degree
        let f = rng.uniform(4.5, 5.5)
        let w = 2 * Double.pi * f
        yaw.offset = heading
        pitch.offset = 30 * d
        // Shaking along the device's x axis as seen from above: direction (cos ψ, sin ψ, 0).
        var along = Signal()
        along.terms.append(Sinusoid(amplitude: rng.uniform(0.03, 0.04), omega: w, phase: rng.uniform(0, 2 * .pi)))
        along.terms.append(Sinusoid(amplitude: 0.007, omega: w - 2 * .pi * 0.3, phase: rng.uniform(0, 2 * .pi)))
        along.terms.append(Sinusoid(amplitude: 0.007, omega: w + 2 * .pi * 0.3, phase: rng.uniform(0, 2 * .pi)))
        along.terms.append(Sinusoid(amplitude: 0.0015, omega: 2 * w, phase: rng.uniform(0, 2 * .pi)))
        let cx = _cosine(heading), cy = _sine(heading)
        for t in along.terms {
            px.terms.append(Sinusoid(amplitude: t.amplitude * cx, omega: t.omega, phase: t.phase))
            py.terms.append(Sinusoid(amplitude: t.amplitude * cy, omega: t.omega, phase: t.phase))
        }
        // Across and vertical: smaller.
        let across = rng.uniform(0, 2 * .pi)
        px.terms.append(Sinusoid(amplitude: -0.005 * cy, omega: w, phase: across))
        py.terms.append(Sinusoid(amplitude: 0.005 * cx, omega: w, phase: across))
        pz.terms.append(Sinusoid(amplitude: 0.008, omega: w, phase: rng.uniform(0, 2 * .pi)))
        // Wrist rotation: mostly about the device's y axis.
        roll.terms.append(Sinusoid(amplitude: rng.uniform(12, 16) * d, omega: w, phase: rng.uniform(0, 2 * .pi)))
        pitch.terms.append(Sinusoid(amplitude: 5 * d, omega: w, phase: rng.uniform(0, 2 * .pi)))
        yaw.terms.append(Sinusoid(amplitude: 4 * d, omega: w, phase: rng.uniform(0, 2 * .pi)))
        // The arm drifts slowly too.
        yaw.addBand(rms: 5 * d, low: 0.05, high: 0.3, count: 3, rng: &rng)
        pitch.addBand(rms: 5 * d, low: 0.05, high: 0.3, count: 3, rng: &rng)
    }
}
