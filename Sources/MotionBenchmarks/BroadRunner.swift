import MotionFusion

/// Runs ``AttitudeFilter`` (or ``AttitudeSmoother``) over BROAD trials and scores it.
package struct BroadRunner: Sendable {
    /// Filter tuning.
    package var parameters: AttitudeFilterParameters
    /// Fuse the magnetometer (9D) or not (6D).
    package var usesMagnetometer: Bool
    /// Use the non-causal smoother.
    package var offline: Bool

    /// Creates a runner. Without explicit parameters, the causal filter uses ``AttitudeFilterParameters``'
    /// defaults and the offline smoother ``AttitudeSmoother/defaultParameters``.
    package init(parameters: AttitudeFilterParameters? = nil, usesMagnetometer: Bool = true, offline: Bool = false) {
        self.parameters = parameters ?? (offline ? AttitudeSmoother.defaultParameters : AttitudeFilterParameters())
        self.usesMagnetometer = usesMagnetometer
        self.offline = offline
    }

    /// Estimates sensor → ENU for every sample of a trial (6D: an arbitrary heading).
    package func estimate(_ trial: BroadTrial) -> [Quaternion] {
        let dt = trial.timeStep
        let toENU = Quaternion.aboutZ(Double.pi / 2)
        if offline {
            return AttitudeSmoother.smooth(
                gyro: trial.gyro, accelerometer: trial.accelerometer,
                magnetometer: usesMagnetometer ? trial.magnetometer : nil,
                parameters: parameters, timeStep: { _ in dt }
            ).map { toENU * $0 }
        }
        var filter = AttitudeFilter(parameters: parameters, usesMagnetometer: usesMagnetometer)
        var out = [Quaternion]()
        out.reserveCapacity(trial.count)
        for i in 0..<trial.count {
            filter.updateGyro(trial.gyro[i], dt: dt)
            filter.updateAccelerometer(trial.accelerometer[i], dt: dt)
            if usesMagnetometer { filter.updateMagnetometer(trial.magnetometer[i], dt: dt) }
            out.append(toENU * filter.quaternion)
        }
        return out
    }

    /// Scores one trial.
    package func score(_ trial: BroadTrial) throws -> BroadErrors {
        try BroadErrors(estimates: estimate(trial), trial: trial)
    }
}
