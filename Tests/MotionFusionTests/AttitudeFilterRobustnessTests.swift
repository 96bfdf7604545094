import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct AttitudeFilterRobustnessTests {
    static let motion = SyntheticMotion(
        seconds: 20, noise: 1,
        rate: { t in Vector3(0.5 * sin(0.8 * t), 0.4 * sin(0.5 * t + 1), 0.3 * sin(0.3 * t + 2)) },
        linearAcceleration: { t in Vector3(0.2 * sin(3 * t), 0, 0) })

    @Test func savingAndRestoringStateEqualsAnUninterruptedRun() {
        let m = Self.motion
        var uninterrupted = AttitudeFilter()
        uninterrupted.run(m)
        var first = AttitudeFilter()
        first.run(m, range: 0..<(m.count / 2))
        let saved = first.state
        var second = AttitudeFilter()
        second.state = saved
        second.run(m, range: (m.count / 2)..<m.count)
        #expect(second.estimate == uninterrupted.estimate)
    }

    @Test func nonFiniteSamplesAreSkippedWithoutPoisoningTheState() {
        let m = Self.motion
        var clean = AttitudeFilter()
        var dirty = AttitudeFilter()
        for i in 0..<m.count {
            clean.update(gyro: m.gyro[i], accelerometer: m.accelerometer[i], magnetometer: m.magnetometer[i], dt: m.dt)
            if i % 97 == 5 {
                dirty.updateGyro(Vector3(.nan, 0, 0), dt: m.dt)
                dirty.updateAccelerometer(Vector3(0, .infinity, 0), dt: m.dt)
                dirty.updateMagnetometer(Vector3(0, 0, -.infinity), dt: m.dt)
                dirty.updateGyro(m.gyro[i], dt: .nan)
            }
            dirty.update(gyro: m.gyro[i], accelerometer: m.accelerometer[i], magnetometer: m.magnetometer[i], dt: m.dt)
        }
        #expect(dirty.estimate == clean.estimate)
        #expect(dirty.state.skippedSamples == 4 * ((m.count - 6) / 97 + 1))
        #expect(dirty.quaternion.isFinite)
    }

    @Test func backwardsTimestampsAreSkippedAndReported() {
        let m = Self.motion
        var reference = AttitudeFilter()
        var f = AttitudeFilter()
        for i in 0..<m.count {
            let t = 100 + Double(i) * m.dt
            let a = reference.update(gyro: m.gyro[i], accelerometer: m.accelerometer[i], magnetometer: m.magnetometer[i], timestamp: t)
            let b = f.update(gyro: m.gyro[i], accelerometer: m.accelerometer[i], magnetometer: m.magnetometer[i], timestamp: t)
            #expect(a && b)
            if i % 50 == 10 {
                // A stale sample (timestamp going backwards) and a repeated one are both ignored.
                let stale = f.update(gyro: Vector3(5, 5, 5), accelerometer: Vector3(1, 0, 0), magnetometer: nil, timestamp: t - 0.5)
                let repeated = f.update(gyro: Vector3(5, 5, 5), accelerometer: Vector3(1, 0, 0), magnetometer: nil, timestamp: t)
                #expect(!stale && !repeated)
            }
        }
        #expect(f.estimate == reference.estimate)
        #expect(f.state.skippedSamples > 0)
    }

    @Test func aGapIsClampedToTheMaximumTimeStep() {
        var f = AttitudeFilter(usesMagnetometer: false)
        for _ in 0..<300 { f.update(gyro: .zero, accelerometer: Vector3(0, 0, -1), magnetometer: nil, dt: 0.01) }
        // A 10 s gap with a 1 rad/s rate: only maximumTimeStep (0.1 s) is integrated.
        f.updateGyro(Vector3(0, 0, 1), dt: 10)
        let yaw = f.quaternion6D.eulerAngles.yaw
        #expect(abs(abs(yaw) - f.parameters.maximumTimeStep) < 1e-6)
        // Recovers: inclination stays level.
        for _ in 0..<100 { f.update(gyro: .zero, accelerometer: Vector3(0, 0, -1), magnetometer: nil, dt: 0.01) }
        #expect(inclinationError(f.quaternion6D, .identity) < 0.1)
    }

    @Test func zeroAndHugeAccelerationsDoNotBreakTheFilter() {
        var f = AttitudeFilter()
        f.updateAccelerometer(.zero, dt: 0.01)
        for i in 0..<1000 {
            // Taps: a 16 g spike and its rebound (velocity returns to zero), once a second.
            let spike = i % 100 == 0 ? Vector3(16, -16, 10) : i % 100 == 1 ? Vector3(-16, 16, -12) : Vector3(0, 0, -1)
            f.update(gyro: Vector3(0, 0, 0), accelerometer: spike, magnetometer: Vector3(20, 0, -45), dt: 0.01)
        }
        #expect(f.quaternion.isFinite)
        #expect(inclinationError(f.quaternion, .identity) < 2)
    }

    @Test func offlineSmootherTracksTheTruth() {
        let m = Self.motion
        let q = AttitudeSmoother.smooth(gyro: m.gyro, accelerometer: m.accelerometer, magnetometer: m.magnetometer,
                                        timeStep: { _ in m.dt })
        #expect(q.count == m.count)
        // The smoother's inclination beats the causal filter's, and so does its total error (its heading is
        // smoothed from the whole recording).
        var causal = AttitudeFilter()
        var sum = 0.0, sumCausal = 0.0, sumTotal = 0.0, sumCausalTotal = 0.0, n = 0.0
        for i in 0..<m.count {
            causal.update(gyro: m.gyro[i], accelerometer: m.accelerometer[i], magnetometer: m.magnetometer[i], dt: m.dt)
            let e = inclinationError(q[i], m.truth[i]), c = inclinationError(causal.quaternion, m.truth[i])
            let t = angleBetween(q[i], m.truth[i]), ct = angleBetween(causal.quaternion, m.truth[i])
            sum += e * e
            sumCausal += c * c
            sumTotal += t * t
            sumCausalTotal += ct * ct
            n += 1
        }
        let rms = (sum / n).squareRoot(), rmsCausal = (sumCausal / n).squareRoot()
        #expect(rms < 0.8)
        #expect(rms < 0.7 * rmsCausal)
        #expect((sumTotal / n).squareRoot() < 2.5)
        #expect(sumTotal < sumCausalTotal)
        #expect(AttitudeSmoother.smooth(gyro: [], accelerometer: [], magnetometer: nil, timeStep: { _ in 0.01 }).isEmpty)
    }
}
