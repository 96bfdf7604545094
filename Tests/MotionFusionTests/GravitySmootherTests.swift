@testable import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The offline smoother's gravity stage: a velocity-model fixed-interval smoother with zero-velocity
/// updates at rest.
@Suite struct GravitySmootherTests {
    static let dt = 0.01

    /// Specific force (g, up-pointing) of a device that rests, is moved horizontally away and back once
    /// (0.5 g peak over `burst` seconds: its velocity averages to zero and it ends where it started), and
    /// rests again.
    static func burst(rest: Double = 10, burst: Double = 2) -> (force: [Vector3], rest: [Bool]) {
        let n = Int((2 * rest + burst) / dt)
        var force = [Vector3](), mask = [Bool]()
        for i in 0..<n {
            let t = Double(i) * dt - rest
            let moving = t >= 0 && t < burst
            let a = moving ? 0.5 * cos(2 * Double.pi * t / burst) : 0
            force.append(Vector3(a, 0, 1))
            mask.append(!moving)
        }
        return (force, mask)
    }

    /// Largest angle between the estimates and vertical over the moving samples, degrees.
    static func worstTilt(_ g: [Vector3], _ rest: [Bool]) -> Double {
        var worst = 0.0
        for i in g.indices where !rest[i] { worst = max(worst, angleBetween(g[i], Vector3(0, 0, 1))) }
        return worst
    }

    @Test func constantGravityIsReturnedUnchanged() {
        let f = [Vector3](repeating: Vector3(0.3, -0.2, 0.9), count: 500)
        let g = GravitySmoother.smooth(force: f, rest: [Bool](repeating: false, count: 500),
                                       dt: [Double](repeating: Self.dt, count: 500), timeConstant: 2,
                                       restVelocityRatio: 0.01)
        #expect(g.allSatisfy { ($0 - Vector3(0.3, -0.2, 0.9)).length < 1e-9 })
    }

    @Test func aDriftingGravityIsFollowedWithoutLag() {
        // Gravity turning at 0.5 °/s in the integrated frame (a residual gyro bias), no linear acceleration:
        // followed to within 0.05° although it turns 30° in a minute.
        let n = 6000
        let rate = 0.5 * Double.pi / 180
        let f = (0..<n).map { i -> Vector3 in
            let a = rate * Double(i) * Self.dt
            return Vector3(sin(a), 0, cos(a))
        }
        let g = GravitySmoother.smooth(force: f, rest: [Bool](repeating: false, count: n),
                                       dt: [Double](repeating: Self.dt, count: n), timeConstant: 2,
                                       restVelocityRatio: 0.01)
        var worst = 0.0
        for i in 0..<n { worst = max(worst, angleBetween(g[i], f[i])) }
        #expect(worst < 0.05)
    }

    @Test func aLinearAccelerationBurstIsRejectedBetterThanByASecondOrderLowPass() {
        // The velocity model knows the burst integrates to no velocity change; a zero-phase second-order
        // Butterworth pair of the same time constant only attenuates it.
        let (f, rest) = Self.burst()
        let n = f.count
        let dts = [Double](repeating: Self.dt, count: n)
        let g = GravitySmoother.smooth(force: f, rest: [Bool](repeating: false, count: n), dt: dts,
                                       timeConstant: 2, restVelocityRatio: 1)
        let c = LowPassCoefficients(timeConstant: 2, dt: Self.dt)
        var lp = LowPassVector3(steadyAt: f[0], c)
        var b = f.map { lp.filter($0, c) }
        lp = LowPassVector3(steadyAt: b[n - 1], c)
        for i in stride(from: n - 1, through: 0, by: -1) { b[i] = lp.filter(b[i], c) }
        let smoothed = Self.worstTilt(g, rest), butterworth = Self.worstTilt(b, rest)
        #expect(smoothed < 0.7 * butterworth)
    }

    @Test func zeroVelocityUpdatesAtRestPinGravityThroughTheBurst() {
        let (f, rest) = Self.burst()
        let dts = [Double](repeating: Self.dt, count: f.count)
        let anchored = GravitySmoother.smooth(force: f, rest: rest, dt: dts, timeConstant: 2, restVelocityRatio: 0.01)
        let free = GravitySmoother.smooth(force: f, rest: rest, dt: dts, timeConstant: 2, restVelocityRatio: 1)
        let withUpdates = Self.worstTilt(anchored, rest), without = Self.worstTilt(free, rest)
        #expect(withUpdates < 0.05)
        #expect(withUpdates < 0.5 * without)
    }

    @Test func restIsDetectedOnlyWhereTheDeviceIsStill() {
        // Still for 5 s, rotating at 30 °/s for 5 s, still again.
        let m = SyntheticMotion(seconds: 15, noise: 1, rate: { t in t >= 5 && t < 10 ? Vector3(0, 0.52, 0) : .zero })
        let mask = GravitySmoother.restMask(rate: m.gyro, accelerometer: m.accelerometer,
                                            dt: [Double](repeating: m.dt, count: m.count),
                                            parameters: AttitudeFilterParameters())
        for i in 0..<m.count {
            let t = Double(i) * m.dt
            if t < 4 || t > 11 { #expect(mask[i]) }
            if t > 5 && t < 10 { #expect(!mask[i]) }
        }
    }

    @Test func theSmootherFindsAStaticTiltWithinTwoTenthsOfADegree() {
        // 6D, noisy, a 30° tilt about x then 20° about y, held still.
        let start = Quaternion(rotationVector: Vector3(0.52, 0, 0)) * Quaternion(rotationVector: Vector3(0, 0.35, 0))
        let m = SyntheticMotion(seconds: 20, start: start, gyroBias: Vector3(0.01, -0.005, 0.003), noise: 1)
        let q = AttitudeSmoother.smooth(gyro: m.gyro, accelerometer: m.accelerometer, magnetometer: nil,
                                        timeStep: { _ in m.dt })
        for i in q.indices { #expect(inclinationError(q[i], m.truth[i]) < 0.2) }
        // The same with irregular time steps (5 and 15 ms alternately).
        let jittered = AttitudeSmoother.smooth(gyro: m.gyro, accelerometer: m.accelerometer, magnetometer: nil,
                                               timeStep: { $0 % 2 == 0 ? 0.005 : 0.015 })
        for i in jittered.indices { #expect(inclinationError(jittered[i], m.truth[i]) < 0.2) }
    }

    @Test func theSmootherRejectsATranslationBetterWithRestUpdates() {
        // 6D: rest, a tilted device swung along x and back (2 s period) while turning about vertical,
        // rest; the zero-velocity updates lower the inclination error over the motion.
        let m = SyntheticMotion(
            seconds: 30, start: Quaternion(rotationVector: Vector3(0.3, 0, 0)), noise: 1,
            rate: { t in t >= 10 && t < 20 ? Vector3(0, 0, 0.3 * sin(0.6 * (t - 10))) : .zero },
            linearAcceleration: { t in t >= 10 && t < 20 ? Vector3(0.6 * cos(Double.pi * (t - 10)), 0, 0) : .zero })
        func rms(_ ratio: Double) -> Double {
            var p = AttitudeSmoother.defaultParameters
            p.smootherRestVelocityRatio = ratio
            let q = AttitudeSmoother.smooth(gyro: m.gyro, accelerometer: m.accelerometer, magnetometer: nil,
                                            parameters: p, timeStep: { _ in m.dt })
            var s = 0.0, n = 0.0
            for i in 0..<m.count where Double(i) * m.dt >= 10 && Double(i) * m.dt < 20 {
                let e = inclinationError(q[i], m.truth[i])
                s += e * e
                n += 1
            }
            return (s / n).squareRoot()
        }
        let anchored = rms(0.01), free = rms(1)
        #expect(anchored < 0.2)
        #expect(anchored < 0.5 * free)
    }
}
