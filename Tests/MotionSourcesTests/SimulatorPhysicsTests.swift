import MotionFusion
@testable import MotionSources
import Testing

/// Ground truth is self-consistent: rates integrate to attitudes, accelerations are second
/// derivatives of positions, signs follow Core Motion.
@Suite struct SimulatorPhysicsTests {
    @Test(arguments: SimulationScenario.allCases)
    func trueRotationRateIsTheDerivativeOfTheAttitude(_ scenario: SimulationScenario) {
        let sim = MotionSimulator(options: .init(scenario: scenario, seed: 7))
        let h = 1e-5
        for t in stride(from: 0.13, to: 10, by: 0.71) {
            let q0 = sim.truth(at: t - h).attitude
            let q1 = sim.truth(at: t + h).attitude
            // Body rate from the relative rotation q0* ⊗ q1 over 2h (sign-aligned).
            var d = q0.conjugate * q1
            if d.w < 0 { d = Quaternion(w: -d.w, x: -d.x, y: -d.y, z: -d.z) }
            let numeric = d.vector * (2 / (2 * h))
            let analytic = sim.truth(at: t).rotationRate
            #expect((numeric - analytic).length < 1e-5 * max(1, analytic.length), "t=\(t)")
        }
    }

    @Test(arguments: SimulationScenario.allCases)
    func integratingTheTrueRateReproducesTheAttitude(_ scenario: SimulationScenario) {
        let sim = MotionSimulator(options: .init(scenario: scenario, seed: 3))
        let dt = 1e-3
        var q = sim.truth(at: 0).attitude
        var previous = sim.truth(at: 0).rotationRate
        for k in 1...5000 {
            let now = sim.truth(at: Double(k) * dt).rotationRate
            q = (q * Quaternion(rotationVector: (previous + now) * (dt / 2))).normalized
            previous = now
        }
        let error = angle(between: q, sim.truth(at: 5).attitude)
        #expect(error < 2e-3, "\(scenario): \(error) rad after 5 s")
    }

    @Test(arguments: SimulationScenario.allCases)
    func userAccelerationIsMinusTheSecondDerivativeOfPositionInG(_ scenario: SimulationScenario) {
        var options = SimulationOptions(scenario: scenario, seed: 11)
        options.accelerationBursts = [AccelerationBurst(start: 2, duration: 1, peak: Vector3(0.3, -0.2, 0.4))]
        let sim = MotionSimulator(options: options)
        let h = 1e-4
        for t in stride(from: 0.05, to: 6, by: 0.37) {
            let p0 = sim.truth(at: t - h).position
            let p1 = sim.truth(at: t).position
            let p2 = sim.truth(at: t + h).position
            let secondDerivative = (p2 - p1 * 2 + p0) / (h * h)
            let truth = sim.truth(at: t)
            let scale = max(1, truth.acceleration.length)
            #expect((secondDerivative - truth.acceleration).length < 1e-3 * scale, "t=\(t)")
            let velocity = (p2 - p0) / (2 * h)
            #expect((velocity - truth.velocity).length < 1e-5 * max(1, truth.velocity.length))
            let expected = truth.attitude.inverseRotate(truth.acceleration * (-1 / SimulationOptions.standardGravity))
            #expect((truth.userAcceleration - expected).length < 1e-12)
            #expect(abs(truth.gravity.length - 1) < 1e-12)
        }
    }

    @Test func upwardAccelerationOfAFaceUpDeviceReadsMoreNegativeZ() {
        var options = SimulationOptions.ideal(scenario: .still)
        options.accelerationBursts = [AccelerationBurst(start: 1, duration: 1, peak: Vector3(0, 0, 0.5))]
        let sim = MotionSimulator(options: options)
        let middle = sim.truth(at: 1.5)
        #expect(abs(middle.userAcceleration.z + 0.5) < 1e-12)
        #expect(abs(middle.gravity.z + 1) < 1e-12)
        // Free fall would read 0; an elevator accelerating up reads more than 1 g, with Apple's sign.
        #expect(abs(middle.gravity.z + middle.userAcceleration.z + 1.5) < 1e-12)
        // After the burst the device coasts at constant velocity: no user acceleration.
        let after = sim.truth(at: 3)
        #expect(after.userAcceleration.length < 1e-12)
        #expect(abs(after.velocity.z - 0.5 * SimulationOptions.standardGravity * 0.5) < 1e-9)
    }

    @Test func stillLiesFaceUpWithoutMotion() {
        let sim = MotionSimulator(options: .init(scenario: .still, seed: 5))
        for t in [0.0, 1.7, 100.0] {
            let truth = sim.truth(at: t)
            #expect(truth.rotationRate == .zero)
            #expect(truth.userAcceleration.length < 1e-15)
            #expect((truth.gravity - Vector3(0, 0, -1)).length < 1e-12)
        }
    }

    @Test func scenariosHaveTheirDocumentedIntensity() {
        func peaks(_ scenario: SimulationScenario) -> (rate: Double, user: Double) {
            let sim = MotionSimulator(options: .init(scenario: scenario, seed: 2))
            var rate = 0.0, user = 0.0
            for k in 0..<3000 {
                let truth = sim.truth(at: Double(k) * 0.01)
                rate = max(rate, truth.rotationRate.length)
                user = max(user, truth.userAcceleration.length)
            }
            return (rate, user)
        }
        let handheld = peaks(.handheld), rotate = peaks(.rotate), walk = peaks(.walk), shake = peaks(.shake)
        #expect(handheld.rate < 0.5 && handheld.user < 0.15, "handheld \(handheld)")
        #expect(handheld.rate > 0.01 && handheld.user > 0.005, "handheld \(handheld)")
        #expect(rotate.rate > 2.5 && rotate.rate < 6, "rotate \(rotate)")
        #expect(walk.user > 0.2 && walk.user < 1, "walk \(walk)")
        #expect(shake.user > 2.5 && shake.user < 8, "shake \(shake)")
        #expect(shake.rate > 4 && shake.rate < 15, "shake \(shake)")
    }

    @Test func walkingTurnsSlowlyAndKeepsTheTopForward() {
        let sim = MotionSimulator(options: .init(scenario: .walk, seed: 4))
        var total = 0.0
        for k in 0..<60 {
            let truth = sim.truth(at: Double(k))
            let top = truth.attitude.rotate(Vector3(0, 1, 0))
            let v = truth.velocity
            let horizontalTop = Vector3(top.x, top.y, 0).normalized!
            let horizontalV = Vector3(v.x, v.y, 0).normalized!
            total += horizontalTop.dot(horizontalV)
            #expect(Vector3(v.x, v.y, 0).length > 0.9 && Vector3(v.x, v.y, 0).length < 1.8)
        }
        #expect(total / 60 > 0.9, "the phone's top points along the walk")
    }

    @Test func magneticDisturbanceAppearsOnlyInItsWindow() {
        var options = SimulationOptions.ideal(scenario: .handheld)
        options.magneticDisturbances = [MagneticDisturbance(start: 1, duration: 2, field: Vector3(0, 30, 0), ramp: 0.5)]
        let sim = MotionSimulator(options: options)
        let before = sim.truth(at: 0.9), ramping = sim.truth(at: 1.25), inside = sim.truth(at: 2), after = sim.truth(at: 3.1)
        #expect((before.magneticField - before.earthMagneticField).length < 1e-12)
        #expect(abs((inside.magneticField - inside.earthMagneticField).length - 30) < 1e-9)
        let partial = (ramping.magneticField - ramping.earthMagneticField).length
        #expect(partial > 1 && partial < 29)
        #expect((after.magneticField - after.earthMagneticField).length < 1e-12)
        #expect(abs(inside.earthMagneticField.length - 48) < 1e-9)
    }

    @Test(arguments: SimulationScenario.allCases)
    func truthIsFiniteEvenFarFromTheStart(_ scenario: SimulationScenario) {
        let sim = MotionSimulator(options: .init(scenario: scenario, seed: 9), startTime: 12_345)
        for t in [12_345.0, 12_346.5, 1e6, -5.0] {
            let truth = sim.truth(at: t)
            #expect(truth.attitude.isFinite && abs(truth.attitude.length - 1) < 1e-9)
            #expect(truth.rotationRate.isFinite && truth.gravity.isFinite && truth.userAcceleration.isFinite)
            #expect(truth.magneticField.isFinite && truth.gyroBias.isFinite && truth.position.isFinite)
        }
    }
}
