@testable import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The offline smoother's heading stage: the offset between a gyro-integrated, levelled frame and
/// magnetic north, estimated by a Kalman filter and Rauch–Tung–Striebel smoother.
@Suite struct HeadingSmootherTests {
    static let dt = 0.01
    /// Earth field in NWU, µT.
    static let field = SyntheticMotion.field

    /// A levelled frame that tumbles (rates of 0.5–1.5 rad/s about changing axes) between rests of
    /// `rest` seconds, and the field it measures when the true heading offset at sample `i` is
    /// `offset(i, turned)` (`turned`: the angle turned about vertical so far, rad) plus the field
    /// disturbance `disturbance(i)` (NWU, µT). Noise: 0.3 µT, deterministic.
    static func recording(seconds: Double = 60, rest: Double = 10,
                          offset: (Int, Double) -> Double = { _, _ in 0.7 },
                          disturbance: (Int) -> Vector3 = { _ in .zero })
        -> (levelled: [Quaternion], field: [Vector3], rate: [Vector3], dt: [Double], rest: [Bool], truth: [Double]) {
        let n = Int(seconds / dt)
        var seed: UInt64 = 7
        func rnd() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(1 << 53) - 0.5
        }
        var q = Quaternion.identity
        var levelled = [Quaternion](), field = [Vector3](), rate = [Vector3](), steps = [Double](), mask = [Bool]()
        var truth = [Double]()
        var turned = 0.0
        for i in 0..<n {
            let t = Double(i) * dt
            let moving = t >= rest && t < seconds - rest
            let w = moving ? Vector3(sin(0.7 * t), cos(0.3 * t), 1.0 + 0.5 * sin(0.11 * t)) : .zero
            q = (q * Quaternion(rotationVector: w * dt)).normalized
            turned += q.rotate(w).z * dt
            let delta = offset(i, turned)
            let device = Quaternion.aboutZ(delta) * q
            let noise = Vector3(rnd(), rnd(), rnd()) * 0.6
            levelled.append(q)
            field.append(device.inverseRotate(Self.field + disturbance(i)) + noise)
            rate.append(w)
            steps.append(dt)
            mask.append(!moving)
            truth.append(delta)
        }
        return (levelled, field, rate, steps, mask, truth)
    }

    static var parameters: AttitudeFilterParameters { AttitudeSmoother.defaultParameters }

    /// Largest error of the estimated offsets over `range`, degrees.
    static func worstError(_ estimate: [Double], _ truth: [Double], _ range: Range<Int>) -> Double {
        range.map { abs(wrapAngle(estimate[$0] - truth[$0])) * 180 / Double.pi }.max() ?? .infinity
    }

    @Test func aConstantOffsetIsRecoveredEverywhere() throws {
        let r = Self.recording()
        let d = try #require(HeadingSmoother.offsets(levelled: r.levelled, field: r.field, rate: r.rate, dt: r.dt,
                                                     rest: r.rest, parameters: Self.parameters))
        #expect(Self.worstError(d, r.truth, 0..<d.count) < 0.5)
    }

    @Test func aGyroScaleFactorErrorIsFollowed() throws {
        // The integrated heading drifts by 1 % of the angle turned about vertical (more than 10° over the
        // recording): the scale-factor state and the turn-driven random walk follow it.
        let r = Self.recording(offset: { _, turned in 0.7 - 0.01 * turned })
        let drift = (r.truth.max() ?? 0) - (r.truth.min() ?? 0)
        try #require(drift * 180 / Double.pi > 10)
        let d = try #require(HeadingSmoother.offsets(levelled: r.levelled, field: r.field, rate: r.rate, dt: r.dt,
                                                     rest: r.rest, parameters: Self.parameters))
        let errors = r.truth.indices.map { wrapAngle(d[$0] - r.truth[$0]) * 180 / Double.pi }
        let rms = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
        // Holding the offset constant would leave errors of half the drift.
        #expect(rms < 1)
        #expect(Self.worstError(d, r.truth, r.truth.indices) < 2)
    }

    @Test func aStrongDisturbanceIsRejected() throws {
        // 20 s of a 25 µT field towards west in the middle of the motion: norm and dip leave their
        // thresholds, and without rejection the heading would follow it by tens of degrees.
        let n = Int(60 / Self.dt)
        let bad = (n / 2 - 1000)..<(n / 2 + 1000)
        let r = Self.recording(disturbance: { bad.contains($0) ? Vector3(0, 25, 0) : .zero })
        let d = try #require(HeadingSmoother.offsets(levelled: r.levelled, field: r.field, rate: r.rate, dt: r.dt,
                                                     rest: r.rest, parameters: Self.parameters))
        #expect(Self.worstError(d, r.truth, bad) < 1)
    }

    @Test func restsAnchorTheHeadingAgainstABiasInMotion() throws {
        // In motion the magnetometer reads the heading 3° off (a motion-dependent error); at rest it is
        // right. With rests weighted as documented the estimate in motion stays near the truth; treating
        // rest like motion, it is pulled towards the biased readings.
        let r = Self.recording(disturbance: { i in
            let t = Double(i) * Self.dt
            guard t >= 10, t < 50 else { return .zero }
            // 3° of heading: a horizontal field of 20 µT turned by 3°.
            return Vector3(20 * (cos(0.0524) - 1), 20 * sin(0.0524), 0)
        })
        let motion = Int(15 / Self.dt)..<Int(45 / Self.dt)
        var p = Self.parameters
        let anchored = try #require(HeadingSmoother.offsets(levelled: r.levelled, field: r.field, rate: r.rate,
                                                            dt: r.dt, rest: r.rest, parameters: p))
        p.smootherHeadingRestVarianceRatio = 1
        let unanchored = try #require(HeadingSmoother.offsets(levelled: r.levelled, field: r.field, rate: r.rate,
                                                              dt: r.dt, rest: r.rest, parameters: p))
        let a = Self.worstError(anchored, r.truth, motion), u = Self.worstError(unanchored, r.truth, motion)
        #expect(a < 0.8)
        #expect(u > 1.5)
        #expect(a < u / 2)
    }

    @Test func noUsableSampleGivesNil() {
        let r = Self.recording(seconds: 2, rest: 1)
        let zero = [Vector3](repeating: .zero, count: r.field.count)
        #expect(HeadingSmoother.offsets(levelled: r.levelled, field: zero, rate: r.rate, dt: r.dt, rest: r.rest,
                                        parameters: Self.parameters) == nil)
        var off = Self.parameters
        off.smootherHeadingTimeConstant = 0
        #expect(HeadingSmoother.offsets(levelled: r.levelled, field: r.field, rate: r.rate, dt: r.dt, rest: r.rest,
                                        parameters: off) == nil)
    }

    @Test func medianMatchesSorting() {
        var seed: UInt64 = 3
        var scratch = [Double]()
        for count in [1, 2, 3, 10, 101, 1000] {
            var values = [Double]()
            for _ in 0..<count {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                values.append(Double(seed >> 40) / 1000)
            }
            values.append(.nan)
            let sorted = values.filter(\.isFinite).sorted()
            #expect(HeadingSmoother.median(of: values, scratch: &scratch) == sorted[sorted.count / 2])
        }
        #expect(HeadingSmoother.median(of: [.nan], scratch: &scratch).isNaN)
        #expect(HeadingSmoother.median(of: [2, 2, 2, 1, 2], scratch: &scratch) == 2)
    }

    @Test func aCalibrationIsAppliedOnlyWhenItClearlySteadiesTheNorm() {
        // A field of constant norm seen from many directions, with and without a 30 µT hard-iron offset.
        var clean = [Vector3](), offset = [Vector3](), nearly = [Vector3]()
        for i in 0..<500 {
            let a = Double(i) * 0.37, b = Double(i) * 0.11
            let v = Vector3(cos(a) * cos(b), sin(a) * cos(b), sin(b)) * 49
            clean.append(v)
            offset.append(v + Vector3(30, -10, 5))
            nearly.append(v * (1 + 0.01 * sin(Double(i))))
        }
        #expect(HeadingSmoother.calibrationSteadiesNorm(raw: offset, calibrated: clean))
        // A calibration that gains little over a sensor calibrated already is not applied.
        #expect(!HeadingSmoother.calibrationSteadiesNorm(raw: nearly, calibrated: nearly.map { $0 * 1.02 }))
        #expect(HeadingSmoother.calibrationSteadiesNorm(raw: nearly, calibrated: clean))
    }
}
