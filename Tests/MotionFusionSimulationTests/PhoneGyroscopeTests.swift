import MotionFusion
import MotionSources
import Testing

/// A phone's raw gyroscope: several °/s of bias (iPhone 5, Nexus 5: 4–6 °/s), more than the rest
/// detector once allowed a device at rest to read (3 °/s) and the estimator to report (2 °/s per axis).
@Suite struct PhoneGyroscopeTests {
    /// Lying still, the gyro reads its bias: the filter must take it for rest and measure it. Before, the
    /// device never counted as at rest and the estimate stayed near zero (at most the 2 °/s clip).
    /// Seeds and biases, rad/s.
    static let cases: [(UInt64, Vector3)] = [(3, Vector3(0.07, -0.05, 0.09)), (13, Vector3(-0.1, 0.03, -0.06))]

    @Test(arguments: Self.cases)
    func aBiasOfSeveralDegreesPerSecondIsMeasuredAtRest(seed: UInt64, bias: Vector3) {
        var o = SimulationOptions(scenario: .still, seed: seed)
        o.gyroBias = bias // ≈ 4–6 °/s per axis
        o.gyroBiasInstability = 0
        let f = SimulatedFusionTests.run(o, seconds: 15, usesMagnetometer: false)
        #expect(f.estimate.isAtRest)
        let error = (f.estimate.gyroBias - bias).length * 180 / .pi
        #expect(error < 0.05, "seed \(seed): bias error \(error) °/s")
    }

    /// Once the bias is known, a slow steady turn is not rest even though it is below the largest
    /// possible bias: 4 °/s about the vertical, started after a rest that measured a small bias.
    @Test func aSlowTurnAfterARestIsNotRest() {
        var f = AttitudeFilter(usesMagnetometer: false)
        let dt = 0.01
        let down = Vector3(0, 0, -1)
        for _ in 0..<500 {
            f.updateGyro(Vector3(0.001, -0.002, 0.001), dt: dt)
            f.updateAccelerometer(down, dt: dt)
        }
        #expect(f.estimate.isAtRest)
        var rested = false
        for i in 0..<1000 {
            f.updateGyro(Vector3(0.001, -0.002, 0.001 + 4 * .pi / 180), dt: dt)
            f.updateAccelerometer(down, dt: dt)
            if i > 300, f.estimate.isAtRest { rested = true }
        }
        #expect(!rested)
        #expect(f.estimate.gyroBias.z * 180 / .pi < 0.5)
    }
}
