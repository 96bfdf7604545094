import MotionFusion
import MotionSources
import Testing

/// The gyroscope bias estimate under a known constant bias (`SimulationOptions.constantGyroBias`) through
/// minutes of continuous hand-held motion, walking and a long rest: after convergence it must stay within
/// 1 mrad/s per axis wherever the data shows the bias (the in-motion update must not chase the motion),
/// the unbiased rate must be closer to the truth than the raw gyro at every gyro sample, and a gyro
/// without bias must keep the estimate near zero.
@Suite struct SteadyBiasTests {
    struct Outcome {
        /// Largest per-axis bias error after convergence, rad/s.
        var worstAxisError = 0.0
        /// Gyro samples after convergence where the unbiased rate was not closer to the truth than the raw one.
        var notCloser = 0
        /// Gyro samples checked.
        var checked = 0
        /// The world's up direction in the device frame, averaged over the checked samples (unit vector).
        var meanUp = Vector3.zero
        /// First time the heading used a calibrated field, seconds (`nil`: never).
        var calibratedAt: Double? = nil
    }

    /// Runs `scenario` for `seconds` with constant bias `bias` and checks every gyro sample from `converged` on.
    static func run(_ scenario: SimulationScenario, bias: Vector3, seconds: Double, converged: Double,
                    seed: UInt64, usesMagnetometer: Bool,
                    parameters: AttitudeFilterParameters = AttitudeFilterParameters()) -> Outcome {
        run(SimulationOptions.constantGyroBias(bias, scenario: scenario, seed: seed), seconds: seconds,
            converged: converged, usesMagnetometer: usesMagnetometer, parameters: parameters)
    }

    /// Runs `o` for `seconds` and checks every gyro sample from `converged` on.
    static func run(_ o: SimulationOptions, seconds: Double, converged: Double, usesMagnetometer: Bool,
                    parameters: AttitudeFilterParameters = AttitudeFilterParameters()) -> Outcome {
        var outcome = Outcome()
        var upSum = Vector3.zero
        _ = SimulatedFusionTests.run(o, seconds: seconds, usesMagnetometer: usesMagnetometer, parameters: parameters) { t, f, truth in
            if outcome.calibratedAt == nil, f.state.usesCalibratedField { outcome.calibratedAt = t }
            guard t >= converged else { return }
            let e = f.estimate
            let err = e.gyroBias - truth.gyroBias
            outcome.worstAxisError = max(outcome.worstAxisError, abs(err.x), abs(err.y), abs(err.z))
            let unbiased = (e.rotationRate - truth.rotationRate).length
            let raw = (f.state.lastGyro - truth.rotationRate).length
            if unbiased >= raw { outcome.notCloser += 1 }
            outcome.checked += 1
            upSum += truth.attitude.inverseRotate(Vector3(0, 0, 1))
        }
        outcome.meanUp = upSum.length > 0 ? upSum * (1 / upSum.length) : .zero
        return outcome
    }

    static let bias = Vector3(0.012, -0.009, 0.006) // ≈ 0.69, −0.52, 0.34 °/s
    /// A bias mostly along the hand-held device's up direction (it is held about 35–40° from flat): the
    /// component that inclination corrections cannot see.
    static let verticalBias = Vector3(0, 0.009, 0.012)

    /// `options` with a magnetometer that needs no calibration (no hard or soft iron), and parameters
    /// that say so: the field is used for heading, and its corrections observe the vertical bias, at once.
    static func calibratedField(_ options: SimulationOptions) -> (SimulationOptions, AttitudeFilterParameters) {
        var o = options
        o.hardIron = .zero
        o.softIron = .identity
        var p = AttitudeFilterParameters()
        p.calibratesMagnetometer = false
        return (o, p)
    }

    /// With a calibrated magnetometer (9D) every bias component is observable in motion: inclination
    /// corrections see the two horizontal ones, heading corrections the vertical one. Hand-held and
    /// walking never rest. Measured worst per-axis errors from 200 s to 360 s over seeds 11–81 with either
    /// bias: hand-held 0.04–0.06 mrad/s, walking 0.09–0.37 mrad/s.
    @Test(arguments: [SimulationScenario.handheld, .walk], [bias, verticalBias])
    func constantBiasInContinuousMotionStaysWithinOneMilliradianPerSecond(scenario: SimulationScenario, bias: Vector3) {
        for seed: UInt64 in [11, 21] {
            let (o, p) = Self.calibratedField(SimulationOptions.constantGyroBias(bias, scenario: scenario, seed: seed))
            let out = Self.run(o, seconds: 360, converged: 200, usesMagnetometer: true, parameters: p)
            #expect(out.checked > 15_000)
            #expect(out.worstAxisError < 1e-3, "\(scenario) \(bias) seed \(seed): \(out.worstAxisError) rad/s")
            #expect(out.notCloser == 0, "\(scenario) \(bias) seed \(seed): \(out.notCloser) of \(out.checked)")
        }
    }

    /// Without a heading reference (6D, or 9D with only the ellipsoid fit, which hand-held motion and
    /// walking on a wide circle never complete) the bias about the world vertical shows only in the
    /// device's tilt changes, a few degrees here: in 5 minutes its uncertainty stays at the prior's. The
    /// estimate must then neither invent it nor chase the motion with it: the error stays within
    /// 1 mrad/s of the bias's component along the device's mean up direction (what the data cannot
    /// show), and the unbiased rate is still closer to the truth than the raw gyro at every sample.
    /// (With the default gyro-aided hard-iron estimate, 9D has a heading reference: see
    /// ``UncalibratedMagnetometerSteadyBiasTests``.)
    @Test(arguments: [SimulationScenario.handheld, .walk], [false, true])
    func withoutAHeadingReferenceOnlyTheVerticalComponentIsLeft(scenario: SimulationScenario, nine: Bool) {
        var ellipsoidOnly = AttitudeFilterParameters()
        ellipsoidOnly.estimatesHardIronFromRotation = false
        for (seed, bias): (UInt64, Vector3) in [(11, Self.bias), (21, Self.verticalBias)] {
            let o = SimulationOptions.constantGyroBias(bias, scenario: scenario, seed: seed)
            let out = Self.run(o, seconds: 360, converged: 200, usesMagnetometer: nine, parameters: ellipsoidOnly)
            if nine { #expect(out.calibratedAt == nil, "the ellipsoid fit alone completed: \(scenario) seed \(seed)") }
            #expect(out.checked > 15_000)
            let unobservable = abs(bias.dot(out.meanUp))
            #expect(out.worstAxisError < unobservable + 1e-3,
                    "\(scenario) 9D=\(nine) seed \(seed): \(out.worstAxisError) rad/s, vertical part \(unobservable)")
            #expect(out.notCloser == 0, "\(scenario) 9D=\(nine) seed \(seed): \(out.notCloser) of \(out.checked)")
        }
    }

    /// At rest the bias is measured directly: converged within seconds, then steady for minutes.
    @Test(arguments: [false, true])
    func constantBiasThroughALongRestStaysWithinOneMilliradianPerSecond(nine: Bool) {
        let out = Self.run(.still, bias: Self.bias, seconds: 300, converged: 10, seed: 11, usesMagnetometer: nine)
        #expect(out.checked > 28_000)
        #expect(out.worstAxisError < 1e-3, "9D=\(nine): \(out.worstAxisError) rad/s")
        #expect(out.notCloser == 0, "9D=\(nine): \(out.notCloser) of \(out.checked)")
    }

    /// An unbiased gyro: the estimate must not invent a bias from the motion.
    @Test(arguments: [SimulationScenario.handheld, .walk, .still], [false, true])
    func unbiasedGyroKeepsTheEstimateNearZero(scenario: SimulationScenario, nine: Bool) {
        for seed: UInt64 in [12, 22] {
            let out = Self.run(scenario, bias: .zero, seconds: 300, converged: 20, seed: seed, usesMagnetometer: nine)
            #expect(out.checked > 28_000)
            #expect(out.worstAxisError < 1e-3, "\(scenario) 9D=\(nine) seed \(seed): \(out.worstAxisError) rad/s")
        }
    }
}

/// The same goal with the magnetometer as the simulator makes it: a hard-iron offset of (14, −9, 22) µT
/// (a phone's magnetised parts; the simulator's soft iron is the identity) that nobody calibrated
/// beforehand. Hand-held motion and walking never cover the sphere that the ellipsoid fit needs; the
/// gyro-aided hard-iron estimate (``RotationHardIronEstimator``) needs only the turns about the vertical
/// that they do make, and once its offset is known well enough for the heading (1°), the heading
/// corrections observe the vertical bias. Measured over these 8 seeds: the calibrated field is in use
/// after 7–26 s; worst per-axis errors from 200 s to 360 s 0.04–0.08 mrad/s hand-held and
/// 0.10–0.46 mrad/s walking, for both bias directions, and 0.04–0.05 and 0.10–0.37 mrad/s with an
/// unbiased gyro. Before 200 s the vertical component is still converging (the heading loop's 9 s
/// time constant and the bias filter's measurement noise): from 20 s on, an unbiased gyro's estimate
/// reached up to 0.42 mrad/s hand-held and up to 2.0 mrad/s walking over these seeds.
@Suite struct UncalibratedMagnetometerSteadyBiasTests {
    static let seeds: [UInt64] = [11, 21, 31, 41, 51, 61, 71, 81]

    @Test(arguments: [SimulationScenario.handheld, .walk], [SteadyBiasTests.bias, SteadyBiasTests.verticalBias])
    func constantBiasStaysWithinOneMilliradianPerSecondWithTheSimulatorsHardIron(scenario: SimulationScenario,
                                                                                bias: Vector3) {
        for seed in Self.seeds {
            let o = SimulationOptions.constantGyroBias(bias, scenario: scenario, seed: seed)
            #expect(o.hardIron.length > 20, "the simulator's magnetometer is uncalibrated")
            let out = SteadyBiasTests.run(o, seconds: 360, converged: 200, usesMagnetometer: true)
            #expect(out.checked > 15_000)
            #expect((out.calibratedAt ?? .infinity) < 60, "\(scenario) seed \(seed): calibrated field in use at \(String(describing: out.calibratedAt))")
            #expect(out.worstAxisError < 1e-3, "\(scenario) \(bias) seed \(seed): \(out.worstAxisError) rad/s")
            #expect(out.notCloser == 0, "\(scenario) \(bias) seed \(seed): \(out.notCloser) of \(out.checked)")
        }
    }

    /// An unbiased gyro with the uncalibrated magnetometer: once the vertical component has converged
    /// the estimate stays near zero; the heading corrections of the calibrated field do not invent one.
    @Test(arguments: [SimulationScenario.handheld, .walk])
    func unbiasedGyroKeepsTheEstimateNearZeroWithTheSimulatorsHardIron(scenario: SimulationScenario) {
        for seed in Self.seeds {
            let o = SimulationOptions.constantGyroBias(.zero, scenario: scenario, seed: seed)
            let out = SteadyBiasTests.run(o, seconds: 360, converged: 200, usesMagnetometer: true)
            #expect(out.checked > 15_000)
            #expect((out.calibratedAt ?? .infinity) < 60)
            #expect(out.worstAxisError < 1e-3, "\(scenario) seed \(seed): \(out.worstAxisError) rad/s")
        }
    }
}
