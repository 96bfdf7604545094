import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The inclination low-pass filter and its rotation-rate-dependent time constant
/// (``AttitudeFilterParameters/inclinationRateScale``).
@Suite struct InclinationTimeConstantTests {
    /// Root-mean-square inclination error (degrees) of a 6D filter over `m`, from `from` seconds on.
    static func rmsInclinationError(_ m: SyntheticMotion, _ p: AttitudeFilterParameters, from: Double) -> Double {
        var f = AttitudeFilter(parameters: p, usesMagnetometer: false)
        var sum = 0.0, n = 0.0
        for i in 0..<m.count {
            f.update(gyro: m.gyro[i], accelerometer: m.accelerometer[i], magnetometer: nil, dt: m.dt)
            if Double(i) * m.dt >= from {
                let e = inclinationError(f.quaternion, m.truth[i])
                sum += e * e
                n += 1
            }
        }
        return (sum / max(n, 1)).squareRoot()
    }

    /// The rate-dependent setting the parameter documentation describes (off by default): 2.5 s at slow
    /// rotation, shortened above 50 °/s.
    static let rateDependent: AttitudeFilterParameters = {
        var p = AttitudeFilterParameters()
        p.accelerometerTimeConstant = 2.5
        p.inclinationRateScale = 50
        return p
    }()

    static func fixed(_ tau: Double) -> AttitudeFilterParameters {
        var p = AttitudeFilterParameters()
        p.accelerometerTimeConstant = tau
        p.inclinationRateScale = 0
        return p
    }

    @Test func lowPassIsTheButterworthFilterAtAConstantTimeConstant() {
        let dt = 0.0035, tau = 1.75
        let c = LowPassCoefficients(timeConstant: tau, dt: dt)
        let x0 = Vector3(0.1, -0.2, 1)
        var reference = LowPassVector3(steadyAt: x0, c)
        var filter = InclinationLowPass(steadyAt: x0)
        var worst = 0.0
        for i in 0..<5000 {
            let t = Double(i) * dt
            let x = Vector3(0.1 + 0.5 * sin(3 * t), -0.2 + 0.3 * sin(11 * t + 1), 1 + 0.8 * sin(0.7 * t))
            let a = reference.filter(x, c)
            let b = filter.filter(x, halfStepRate: 0.5 * dt / tau)
            worst = max(worst, (a - b).length)
        }
        #expect(worst < 1e-9) // rounding of the direct form, whose coefficients are ~1e-6 here
    }

    @Test func changingTheTimeConstantMovesNoSteadyOutput() {
        // This filter's state is its output and its scaled derivative, so a new time constant changes how
        // fast the output moves, not where it is.
        let x = Vector3(0.3, -0.1, 0.95)
        var filter = InclinationLowPass(steadyAt: x)
        for _ in 0..<100 { filter.filter(x, halfStepRate: 0.5 * 0.01 / 2.5) }
        for _ in 0..<100 { filter.filter(x, halfStepRate: 0.5 * 0.01 / 0.4) }
        #expect((filter.value - x).length < 1e-14)
        // The direct form with the same switch steps off the steady value: its state holds past inputs
        // weighted by the old coefficients.
        var direct = LowPassVector3(steadyAt: x, LowPassCoefficients(timeConstant: 2.5, dt: 0.01))
        direct.filter(x, LowPassCoefficients(timeConstant: 0.4, dt: 0.01))
        #expect((direct.value - x).length > 1e-5)
    }

    @Test func timeConstantShortensWithTheRotationRateAndRecoversAtRest() {
        let p = Self.rateDependent
        let w0 = p.inclinationRateScale * Double.pi / 180
        let spin = 8 * w0 // about vertical, so the specific force stays put
        var f = AttitudeFilter(parameters: p, usesMagnetometer: false)
        let down = Vector3(0, 0, -1)
        for _ in 0..<1000 { f.update(gyro: .zero, accelerometer: down, magnetometer: nil, dt: 0.01) }
        #expect(abs(f.state.inclinationTimeConstant - p.accelerometerTimeConstant) < 1e-9)
        for _ in 0..<9000 { f.update(gyro: Vector3(0, 0, spin), accelerometer: down, magnetometer: nil, dt: 0.01) }
        let expected = p.accelerometerTimeConstant * pow(1 + 64.0, -1.0 / 6)
        #expect(abs(f.state.inclinationTimeConstant / expected - 1) < 0.01)
        for _ in 0..<12000 { f.update(gyro: .zero, accelerometer: down, magnetometer: nil, dt: 0.01) }
        #expect(abs(f.state.inclinationTimeConstant / p.accelerometerTimeConstant - 1) < 0.01)

        var fixed = AttitudeFilter(parameters: Self.fixed(2), usesMagnetometer: false)
        for _ in 0..<3000 { fixed.update(gyro: Vector3(0, 0, spin), accelerometer: down, magnetometer: nil, dt: 0.01) }
        #expect(fixed.state.inclinationTimeConstant == 2)
    }

    /// Slow turns while the device is carried back and forth: a long time constant rejects the linear
    /// acceleration, and the slow rotation barely shortens it.
    @Test func slowTranslationIsRejectedBetterThanWithTheShortFixedTimeConstant() {
        let m = SyntheticMotion(
            seconds: 60, noise: 1,
            rate: { t in Vector3(0.35 * sin(0.7 * t), 0.3 * sin(0.45 * t + 1), 0.2 * sin(0.3 * t + 2)) },
            linearAcceleration: { t in Vector3(0.25 * sin(2.5 * t), 0.2 * sin(1.9 * t + 0.5), 0.1 * sin(3.1 * t)) })
        let adaptive = Self.rmsInclinationError(m, Self.rateDependent, from: 10)
        let short = Self.rmsInclinationError(m, Self.fixed(1.75), from: 10)
        #expect(adaptive < 0.8 * short)
    }

    /// Fast rotation with a gyroscope scale-factor error of 1 %: the attitude error the gyro accumulates
    /// grows with the rate, and the shortened time constant follows the drift that the long one lags.
    @Test func fastRotationWithAScaleFactorErrorFollowsBetterThanTheLongFixedTimeConstant() {
        var m = SyntheticMotion(
            seconds: 60, noise: 1,
            rate: { t in Vector3(6 * sin(1.3 * t), 5 * sin(0.9 * t + 1), 4 * sin(0.6 * t + 2)) },
            linearAcceleration: { t in Vector3(0.3 * sin(5 * t), 0.3 * sin(4 * t + 1), 0.2 * sin(6 * t)) })
        m.gyro = m.gyro.map { $0 * 1.01 }
        let p = Self.rateDependent
        let adaptive = Self.rmsInclinationError(m, p, from: 10)
        let long = Self.rmsInclinationError(m, Self.fixed(p.accelerometerTimeConstant), from: 10)
        #expect(adaptive < 0.9 * long)
    }
}
