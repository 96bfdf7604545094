@testable import MotionFusion
import Testing

/// The smoother's information-weighted (Fraser–Potter) combination of the forward and backward gyro bias.
@Suite struct AttitudeSmootherBiasTests {
    @Test func equalCovariancesGiveTheMean() {
        let p = Matrix3.diagonal(Vector3(1e-6, 2e-6, 3e-6))
        let b = AttitudeSmoother.combinedBias(Vector3(0.01, -0.02, 0.03), p, Vector3(0.03, 0, 0.01), p)
        #expect((b - Vector3(0.02, -0.01, 0.02)).length < 1e-12)
    }

    @Test func theBetterKnownEstimateCountsForMore() {
        // Forward variance 1e-8 (rad/s)², backward 1e-6: weights 100 : 1 per axis.
        let bf = Vector3(0.01, 0.01, 0.01), bb = Vector3(0.02, 0.02, 0.02)
        let b = AttitudeSmoother.combinedBias(bf, .diagonal(Vector3(1e-8, 1e-8, 1e-8)),
                                              bb, .diagonal(Vector3(1e-6, 1e-6, 1e-6)))
        let expected = (0.01 * 100 + 0.02) / 101
        #expect(abs(b.x - expected) < 1e-12 && abs(b.y - expected) < 1e-12 && abs(b.z - expected) < 1e-12)
        // Per axis: the backward pass is better known about z only.
        let c = AttitudeSmoother.combinedBias(bf, .diagonal(Vector3(1e-8, 1e-8, 1e-6)),
                                              bb, .diagonal(Vector3(1e-6, 1e-6, 1e-8)))
        #expect(c.x < 0.0101 && c.z > 0.0199)
    }

    @Test func singularCovarianceFallsBackToTheMean() {
        let b = AttitudeSmoother.combinedBias(Vector3(0.01, 0, 0), .zero, Vector3(0.03, 0, 0),
                                              .diagonal(Vector3(1e-6, 1e-6, 1e-6)))
        #expect((b - Vector3(0.02, 0, 0)).length < 1e-12)
    }
}
