import MotionFusion

extension AttitudeFilterParameters {
    /// The numeric parameters by name, for command-line overrides (`--parameter name=value`).
    /// Immutable after initialisation (key paths are immutable values), hence safe to share.
    nonisolated(unsafe) package static let numericKeyPaths: [String: WritableKeyPath<AttitudeFilterParameters, Double>] = [
        "accelerometerTimeConstant": \.accelerometerTimeConstant,
        "inclinationRateScale": \.inclinationRateScale,
        "inclinationRateTimeConstant": \.inclinationRateTimeConstant,
        "magnetometerTimeConstant": \.magnetometerTimeConstant,
        "magnetometerInitialTime": \.magnetometerInitialTime,
        "magneticNormThreshold": \.magneticNormThreshold,
        "magneticDipThreshold": \.magneticDipThreshold,
        "magneticMinimumUndisturbedTime": \.magneticMinimumUndisturbedTime,
        "magneticReferenceTimeConstant": \.magneticReferenceTimeConstant,
        "magneticNewFieldTime": \.magneticNewFieldTime,
        "magneticNewFieldFirstTime": \.magneticNewFieldFirstTime,
        "magneticNewFieldMinimumRate": \.magneticNewFieldMinimumRate,
        "magneticMaximumRejectionTime": \.magneticMaximumRejectionTime,
        "magneticRejectionFactor": \.magneticRejectionFactor,
        "biasInitialSigma": \.biasInitialSigma,
        "biasDriftSigma": \.biasDriftSigma,
        "biasForgettingTime": \.biasForgettingTime,
        "biasMotionNoiseDensity": \.biasMotionNoiseDensity,
        "biasRestNoiseDensity": \.biasRestNoiseDensity,
        "smootherZeroPhaseTimeConstant": \.smootherZeroPhaseTimeConstant,
        "smootherRestVelocityRatio": \.smootherRestVelocityRatio,
        "smootherHeadingTimeConstant": \.smootherHeadingTimeConstant,
        "smootherHeadingRestVarianceRatio": \.smootherHeadingRestVarianceRatio,
        "smootherHeadingDisturbanceAngle": \.smootherHeadingDisturbanceAngle,
        "magneticCalibrationInterval": \.magneticCalibrationInterval,
        "biasHeadingNoiseDensity": \.biasHeadingNoiseDensity,
        "biasMotionUpdateInterval": \.biasMotionUpdateInterval,
        "biasMotionAccelerationScale": \.biasMotionAccelerationScale,
        "biasMotionRateNoise": \.biasMotionRateNoise,
        "biasClip": \.biasClip,
        "restFilterTimeConstant": \.restFilterTimeConstant,
        "restGyroThreshold": \.restGyroThreshold,
        "restGyroMagnitudeThreshold": \.restGyroMagnitudeThreshold,
        "restAccelerometerThreshold": \.restAccelerometerThreshold,
        "restMinimumTime": \.restMinimumTime,
        "nominalTimeStep": \.nominalTimeStep,
        "maximumTimeStep": \.maximumTimeStep,
        "hardIronHeadingUncertainty": \.hardIronHeadingUncertainty,
    ]

    /// The boolean parameters by name.
    nonisolated(unsafe) package static let booleanKeyPaths: [String: WritableKeyPath<AttitudeFilterParameters, Bool>] = [
        "estimatesBiasInMotion": \.estimatesBiasInMotion,
        "estimatesBiasAtRest": \.estimatesBiasAtRest,
        "estimatesBiasFromHeading": \.estimatesBiasFromHeading,
        "calibratesMagnetometer": \.calibratesMagnetometer,
        "estimatesHardIronFromRotation": \.estimatesHardIronFromRotation,
    ]

    /// Applies an override `name=value`; returns `false` when the name or value is not recognised.
    package mutating func apply(override text: String) -> Bool {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return false }
        if let kp = Self.numericKeyPaths[parts[0]], let v = Double(parts[1]), v.isFinite {
            self[keyPath: kp] = v
            return true
        }
        if let kp = Self.booleanKeyPaths[parts[0]], let v = Bool(parts[1]) {
            self[keyPath: kp] = v
            return true
        }
        if parts[0] == "minimumAccuracyForCalibratedHeading", let r = Int(parts[1]),
           let a = MagneticCalibrationAccuracy(rawValue: r) {
            minimumAccuracyForCalibratedHeading = a
            return true
        }
        return false
    }
}
