import MotionFusion
@testable import MotionSources
import Testing

/// The simulated sensors: signs, magnitudes, noise levels, rates and determinism.
@Suite struct SimulatorSensorTests {
    @Test func faceUpAtRestReadsMinusOneG() {
        var sim = MotionSimulator(options: .init(scenario: .still, seed: 1))
        let acc = samples(.accelerometer, from: collect(&sim, until: 1)).map(\.value)
        #expect(acc.count == 101)
        let m = mean(acc)
        #expect(abs(m.x) < 0.002 && abs(m.y) < 0.002 && abs(m.z + 1) < 0.002, "\(m)")
        for a in acc { #expect(abs(a.length - 1) < 0.01) }
    }

    @Test func whiteNoiseMatchesTheDatasheetDensity() {
        var options = SimulationOptions(scenario: .still, seed: 21)
        options.gyroBiasInstability = 0
        options.quantizesOutput = false
        options.rates = [.accelerometer: 200, .gyro: 200]
        var sim = MotionSimulator(options: options)
        let stream = collect(&sim, until: 10)
        func sigma(_ vs: [Double]) -> Double {
            let m = vs.reduce(0, +) / Double(vs.count)
            return (vs.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(vs.count - 1)).squareRoot()
        }
        let gyroX = samples(.gyro, from: stream).map(\.value.x)
        let accelZ = samples(.accelerometer, from: stream).map(\.value.z)
        let expectedGyro = 0.007 * Double.pi / 180 * 10 // density · √(200/2)
        let expectedAccel = 180e-6 * 10
        #expect(abs(sigma(gyroX) / expectedGyro - 1) < 0.1, "\(sigma(gyroX)) vs \(expectedGyro)")
        #expect(abs(sigma(accelZ) / expectedAccel - 1) < 0.1, "\(sigma(accelZ)) vs \(expectedAccel)")
    }

    @Test func gyroIntegratesToTheTrueAttitudeWithPerfectSensors() {
        for scenario in [SimulationScenario.handheld, .rotate, .walk, .shake] {
            var options = SimulationOptions.ideal(scenario: scenario, seed: 8)
            options.rates = [.gyro: 1000]
            var sim = MotionSimulator(options: options)
            var q = sim.truth(at: 0).attitude
            var previous = sim.next()
            while previous.timestamp < 4 {
                let current = sim.next()
                let dt = current.timestamp - previous.timestamp
                q = (q * Quaternion(rotationVector: (previous.value + current.value) * (dt / 2))).normalized
                previous = current
            }
            let error = angle(between: q, sim.truth(at: previous.timestamp).attitude)
            #expect(error < 2e-3, "\(scenario): \(error) rad")
        }
    }

    @Test func realisticGyroDriftsOnlyByItsBias() {
        // Default (noisy, biased, quantised) gyro: after removing the true bias, integration stays
        // within a few tenths of a degree of the truth over 4 s of handheld motion.
        var options = SimulationOptions(scenario: .handheld, seed: 8)
        options.rates = [.gyro: 200]
        var sim = MotionSimulator(options: options)
        var q = sim.truth(at: 0).attitude
        var previous = sim.next()
        while previous.timestamp < 4 {
            let current = sim.next()
            let dt = current.timestamp - previous.timestamp
            let bias = sim.truth(at: current.timestamp).gyroBias
            q = (q * Quaternion(rotationVector: ((previous.value + current.value) / 2 - bias) * dt)).normalized
            previous = current
        }
        let error = angle(between: q, sim.truth(at: previous.timestamp).attitude)
        #expect(error < 0.01, "\(error) rad")
    }

    @Test func gyroBiasWandersSlowly() {
        let sim = MotionSimulator(options: .init(scenario: .still, seed: 13))
        let b0 = sim.truth(at: 0).gyroBias
        let b1 = sim.truth(at: 1).gyroBias
        let b300 = sim.truth(at: 300).gyroBias
        #expect(b0 == sim.options.gyroBias + (b0 - sim.options.gyroBias))
        #expect((b1 - b0).length < 2e-5, "barely moves in a second")
        #expect((b300 - b0).length > 1e-5, "but wanders over minutes")
        #expect((b300 - b0).length < 0.01)
        #expect(sim.options.gyroBias.length > 0 && sim.options.gyroBias.length < 0.05)
    }

    @Test func magnetometerIsTheEarthFieldPlusHardIron() {
        var options = SimulationOptions(scenario: .rotate, seed: 6)
        options.rates = [.magnetometer: 100]
        var sim = MotionSimulator(options: options)
        let readings = collect(&sim, count: 500)
        for r in readings {
            let truth = sim.truth(at: r.timestamp)
            let external = r.value - options.hardIron
            #expect(abs(external.length - 48) < 2.5, "|m − hardIron| ≈ |earth|")
            #expect((external - truth.magneticField).length < 2.5)
        }
        // The raw norm is not |earth|: the hard iron shifts it.
        let raw = readings.map { $0.value.length }
        #expect(raw.max()! - raw.min()! > 20)
    }

    @Test func softIronAppliesBeforeHardIron() {
        var options = SimulationOptions.ideal(scenario: .handheld, seed: 6)
        options.softIron = Matrix3(rows: Vector3(1.1, 0.05, 0), Vector3(0.05, 0.9, 0), Vector3(0, 0, 1))
        options.hardIron = Vector3(10, 20, 30)
        options.rates = [.magnetometer: 50]
        var sim = MotionSimulator(options: options)
        for r in collect(&sim, count: 50) {
            let expected = options.softIron * sim.truth(at: r.timestamp).magneticField + options.hardIron
            #expect((r.value - expected).length < 1e-9)
        }
    }

    @Test func sameSeedIsBitIdenticalAndOtherSeedsDiffer() {
        var a = MotionSimulator(options: .init(scenario: .walk, seed: 42), startTime: 3)
        var b = MotionSimulator(options: .init(scenario: .walk, seed: 42), startTime: 3)
        var c = MotionSimulator(options: .init(scenario: .walk, seed: 43), startTime: 3)
        let sa = collect(&a, count: 900), sb = collect(&b, count: 900), sc = collect(&c, count: 900)
        #expect(sa == sb)
        #expect(sa.map(\.timestamp) == sc.map(\.timestamp))
        #expect(zip(sa, sc).filter { $0.value == $1.value }.count < 10)
    }

    @Test func oneSensorsStreamDoesNotDependOnTheOthers() {
        var both = SimulationOptions(scenario: .shake, seed: 5)
        both.rates = [.accelerometer: 100, .gyro: 400]
        var alone = both
        alone.rates = [.accelerometer: 100]
        var a = MotionSimulator(options: both), b = MotionSimulator(options: alone)
        #expect(samples(.accelerometer, from: collect(&a, until: 2)) == collect(&b, until: 2))
    }

    @Test func ratesAreHonouredAndTiesFollowSensorOrder() {
        var options = SimulationOptions(scenario: .handheld, seed: 1)
        options.rates = [.accelerometer: 200, .gyro: 100, .magnetometer: 50]
        var sim = MotionSimulator(options: options, startTime: 10)
        let stream = collect(&sim, until: 11 - 1e-9)
        for (kind, rate) in options.rates {
            let s = samples(kind, from: stream)
            #expect(s.count == Int(rate))
            for (i, sample) in s.enumerated() {
                #expect(abs(sample.timestamp - (10 + Double(i) / rate)) < 1e-9)
            }
        }
        for (p, n) in zip(stream, stream.dropFirst()) {
            #expect(p.timestamp <= n.timestamp)
            if p.timestamp == n.timestamp {
                #expect(SensorKind.motion.firstIndex(of: p.sensor)! < SensorKind.motion.firstIndex(of: n.sensor)!)
            }
        }
        #expect(stream.prefix(3).map(\.sensor) == [.accelerometer, .gyro, .magnetometer])
    }

    @Test func reratingKeepsTimestampsMonotonic() {
        var sim = MotionSimulator(options: .init(scenario: .handheld, seed: 1))
        var stream = collect(&sim, until: 0.5)
        sim.setRates([.accelerometer: 30, .gyro: 250], from: 0.5)
        stream += collect(&sim, until: 1.0)
        for (p, n) in zip(stream, stream.dropFirst()) { #expect(p.timestamp <= n.timestamp) }
        let gyro = samples(.gyro, from: stream).filter { $0.timestamp > 0.5 }
        #expect(gyro.count == 125)
        #expect(samples(.magnetometer, from: stream).allSatisfy { $0.timestamp <= 0.5 })
    }

    @Test(arguments: SimulationScenario.allCases)
    func outputsAreFiniteAndWithinRange(_ scenario: SimulationScenario) {
        var options = SimulationOptions(scenario: scenario, seed: 99)
        options.accelerationBursts = [AccelerationBurst(start: 0.5, duration: 0.3, peak: Vector3(30, 0, 0))]
        var sim = MotionSimulator(options: options)
        for s in collect(&sim, until: 2) {
            #expect(s.value.isFinite && s.timestamp.isFinite)
            let range = SimulatedDevice.defaultCapabilities[s.sensor]!.range!
            #expect(abs(s.value.x) <= range && abs(s.value.y) <= range && abs(s.value.z) <= range)
        }
    }
}
