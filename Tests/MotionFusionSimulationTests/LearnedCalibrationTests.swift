import MotionFusion
import MotionSources
import Testing

/// What a filter learned in one run (``LearnedCalibration``) seeds the next: a restart starts with the
/// bias and magnetometer calibration of the previous run, and a seed that is wrong (the device's bias
/// changed since) is corrected, because it enters as prior knowledge with its uncertainty.
@Suite struct LearnedCalibrationTests {
    /// Runs `options` for `seconds` on `filter`, calling `check` after every gyro sample with the time
    /// since the start, the filter and the truth.
    static func run(_ options: SimulationOptions, seconds: Double, filter: inout AttitudeFilter,
                    check: (Double, AttitudeFilter, SimulatedTruth) -> Void = { _, _, _ in }) {
        var sim = MotionSimulator(options: options)
        var last: [SensorKind: Double] = [:]
        while true {
            let s = sim.next()
            let t = s.timestamp - sim.startTime
            if t > seconds { break }
            let dt = last[s.sensor].map { s.timestamp - $0 } ?? 0.01
            last[s.sensor] = s.timestamp
            switch s.sensor {
            case .gyro:
                filter.updateGyro(s.value, dt: dt)
                check(t, filter, sim.truth(at: s.timestamp))
            case .accelerometer: filter.updateAccelerometer(s.value, dt: dt)
            case .magnetometer: filter.updateMagnetometer(s.value, dt: dt)
            case .pressure: break
            }
        }
    }

    static let bias = Vector3(0.012, -0.009, 0.006) // ≈ 0.69, −0.52, 0.34 °/s

    static func worstAxis(_ v: Vector3) -> Double { max(abs(v.x), abs(v.y), abs(v.z)) }

    /// A hand-held device with a constant gyro bias and the simulator's hard iron (14, −9, 22 µT): after a
    /// first run of two minutes, a filter seeded with what it learned starts with that bias and a
    /// calibrated field from its first samples, where a fresh filter starts at zero bias and uncalibrated.
    @Test func aSeededFilterStartsWhereThePreviousRunEnded() {
        let o = SimulationOptions.constantGyroBias(Self.bias, scenario: .handheld, seed: 5)
        var first = AttitudeFilter()
        Self.run(o, seconds: 120, filter: &first)
        let learned = first.learnedCalibration
        #expect(Self.worstAxis(learned.gyroBias - Self.bias) < 1e-3, "\(learned.gyroBias)")
        #expect(learned.magneticAccuracy >= .medium, "\(learned.magneticAccuracy)")
        #expect((learned.magneticOffset - o.hardIron).length < 3, "\(learned.magneticOffset)")

        var second = AttitudeFilter()
        let used = second.seed(from: learned)
        #expect(used)
        var fresh = AttitudeFilter()
        var seededAccuracy: MagneticCalibrationAccuracy?
        var freshAccuracy: MagneticCalibrationAccuracy?
        var seededWorst = 0.0, freshWorst = 0.0
        let next = SimulationOptions.constantGyroBias(Self.bias, scenario: .handheld, seed: 6)
        Self.run(next, seconds: 1, filter: &second) { _, f, truth in
            seededWorst = max(seededWorst, Self.worstAxis(f.estimate.gyroBias - truth.gyroBias))
            if seededAccuracy == nil, f.estimate.hasMagneticField { seededAccuracy = f.estimate.magneticFieldAccuracy }
        }
        Self.run(next, seconds: 1, filter: &fresh) { _, f, truth in
            freshWorst = max(freshWorst, Self.worstAxis(f.estimate.gyroBias - truth.gyroBias))
            if freshAccuracy == nil, f.estimate.hasMagneticField { freshAccuracy = f.estimate.magneticFieldAccuracy }
        }
        #expect(seededWorst < 1.5e-3, "seeded bias error in the first second \(seededWorst) rad/s")
        #expect(freshWorst > 5e-3, "fresh bias error in the first second \(freshWorst) rad/s")
        #expect(seededAccuracy == .medium)
        #expect(freshAccuracy == .uncalibrated)
        // The calibrated field of the first magnetometer sample is the Earth's (no hard iron left).
        #expect(second.state.calibrator.offset == learned.magneticOffset)
    }

    /// The device's bias changed since the run that learned it (by 0.6 °/s per axis), and the saved
    /// variance claims it was known to 0.01 °/s: the seeded filter still converges to the new bias, at
    /// rest and in hand-held motion (9D with a clean field, so every axis is observable).
    @Test(arguments: [SimulationScenario.still, .handheld])
    func aWrongSeedIsCorrected(scenario: SimulationScenario) {
        var o = SimulationOptions.constantGyroBias(Self.bias, scenario: scenario, seed: 7)
        o.hardIron = .zero
        o.softIron = .identity
        var p = AttitudeFilterParameters()
        p.calibratesMagnetometer = false
        let stale = Self.bias + Vector3(0.0105, -0.0105, 0.0105)
        let tiny = (0.01 * Double.pi / 180) * (0.01 * Double.pi / 180)
        var filter = AttitudeFilter(parameters: p)
        let used = filter.seed(from: LearnedCalibration(gyroBias: stale, gyroBiasVariance: Vector3(tiny, tiny, tiny)))
        #expect(used)
        #expect(filter.state.bias == stale)
        let seconds = scenario == .still ? 20.0 : 240.0
        var worstLate = 0.0
        Self.run(o, seconds: seconds, filter: &filter) { t, f, truth in
            if t > seconds * 0.75 { worstLate = max(worstLate, Self.worstAxis(f.estimate.gyroBias - truth.gyroBias)) }
        }
        #expect(worstLate < 1.5e-3, "\(scenario): bias error in the last quarter \(worstLate) rad/s (seeded 10.5 mrad/s off)")
    }

    /// A magnetometer calibration learned before that no longer fits (the hard iron moved by 40 µT) is
    /// replaced by the online calibration once that reaches the same grade.
    @Test func aWrongMagnetometerSeedGivesWayToTheOnlineCalibration() {
        let o = SimulationOptions.constantGyroBias(Self.bias, scenario: .handheld, seed: 8)
        var filter = AttitudeFilter()
        let wrong = o.hardIron + Vector3(40, 0, 0)
        filter.seed(from: LearnedCalibration(gyroBias: Self.bias, gyroBiasVariance: Vector3(1e-8, 1e-8, 1e-8),
                                             magneticOffset: wrong, magneticFieldStrength: 48, magneticAccuracy: .high))
        #expect(filter.state.calibrator.accuracy == .medium, "a seeded calibration is graded at most medium")
        #expect(filter.state.calibrator.offset == wrong)
        Self.run(o, seconds: 120, filter: &filter)
        #expect((filter.state.calibrator.offset - o.hardIron).length < 3, "\(filter.state.calibrator.offset)")
        #expect((filter.learnedCalibration.magneticOffset - o.hardIron).length < 3)
    }

    /// Values that are not usable are refused whole; a calibration applied beforehand (a stored explicit
    /// one) keeps precedence over a learned magnetometer calibration.
    @Test func unusableOrOverriddenSeeds() {
        var filter = AttitudeFilter()
        let before = filter.state.bias
        let nan = filter.seed(from: LearnedCalibration(gyroBias: Vector3(.nan, 0, 0), gyroBiasVariance: .zero))
        let negative = filter.seed(from: LearnedCalibration(gyroBias: .zero, gyroBiasVariance: Vector3(-1, 0, 0)))
        let zeroGain = filter.seed(from: LearnedCalibration(gyroBias: .zero, gyroBiasVariance: .zero,
                                                            magneticGains: Vector3(0, 1, 1), magneticAccuracy: .low))
        #expect(!nan && !negative && !zeroGain)
        #expect(filter.state.bias == before)
        #expect(filter.state.calibrator.accuracy == .uncalibrated)

        var explicit = AttitudeFilter()
        explicit.state.calibrator.priorAccuracy = .high
        let used = explicit.seed(from: LearnedCalibration(gyroBias: Self.bias, gyroBiasVariance: .zero,
                                                          magneticOffset: Vector3(5, 5, 5), magneticAccuracy: .medium))
        #expect(used)
        #expect(explicit.state.calibrator.offset == .zero)
        #expect(explicit.state.calibrator.accuracy == .high)
        #expect(explicit.state.bias == Self.bias)
        #expect(explicit.learnedCalibration.magneticAccuracy == .uncalibrated)
    }
}
