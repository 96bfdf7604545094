import MotionFusion

extension SimulationOptions {
    /// Realistic options for `scenario` whose gyroscope bias is exactly `bias` for the whole run: no
    /// slow wander (``gyroBiasInstability`` 0), the white noise and every other sensor error as in
    /// ``init(scenario:seed:)``. For checking that a bias estimator converges and then stays put.
    /// - Parameters:
    ///   - bias: constant gyro bias, rad/s, device frame (zero for an already unbiased gyro).
    ///   - scenario: the motion; default ``SimulationScenario/handheld``.
    ///   - seed: seed of the trajectory and noise; default 1.
    public static func constantGyroBias(_ bias: Vector3, scenario: SimulationScenario = .handheld,
                                        seed: UInt64 = 1) -> SimulationOptions {
        var o = SimulationOptions(scenario: scenario, seed: seed)
        o.gyroBias = bias
        o.gyroBiasInstability = 0
        return o
    }
}
