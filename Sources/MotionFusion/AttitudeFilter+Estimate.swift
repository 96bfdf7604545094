extension AttitudeFilter {
    /// Attitude device → E6 (z up, arbitrary heading fixed at start).
    public var quaternion6D: Quaternion {
        (state.inclinationQuaternion * state.gyroQuaternion).normalized
    }

    /// Attitude device → magnetic north–west–up when the magnetometer has set the heading (9D mode),
    /// otherwise ``quaternion6D``.
    public var quaternion: Quaternion {
        let q6 = quaternion6D
        guard usesMagnetometer, state.magnetometerInitialized else { return q6 }
        return Quaternion.aboutZ(state.headingOffset) * q6
    }

    /// The current estimate (computed on demand; O(1), no allocation).
    public var estimate: AttitudeEstimate {
        let q6 = quaternion6D
        let north = usesMagnetometer && state.magnetometerInitialized
        let q = north ? Quaternion.aboutZ(state.headingOffset) * q6 : q6
        let qac = north ? Quaternion.aboutZ(state.headingOffset - state.initialHeadingOffset) * q6 : q6
        let gravity = q.inverseRotate(Vector3(0, 0, -1))
        let calibrated = state.calibrator.accuracy >= .low
        return AttitudeEstimate(
            quaternion: q,
            quaternion6D: q6,
            quaternionArbitraryCorrected: qac,
            isMagneticNorthReferenced: north,
            gravity: gravity,
            userAcceleration: state.lastAcceleration - gravity,
            rotationRate: state.lastGyro - state.bias,
            gyroBias: state.bias,
            magneticField: calibrated ? state.calibrator.calibrate(state.lastMagneticField) : state.lastMagneticField,
            magneticFieldAccuracy: state.hasMagneticField ? state.calibrator.accuracy : .uncalibrated,
            isMagneticallyDisturbed: state.magneticDisturbance,
            isAtRest: state.isAtRest,
            hasMagneticField: state.hasMagneticField
        )
    }
}
