/// Coefficients derived from ``AttitudeFilterParameters`` for one time step, cached by ``AttitudeFilter``
/// and recomputed only when the time step changes.
public struct AttitudeFilterCoefficients: Sendable {
    /// The time step these coefficients were derived for, seconds.
    public var dt: Double
    /// Inclination low-pass filter.
    public var acceleration: LowPassCoefficients
    /// Rest-detection low-pass filter.
    public var rest: LowPassCoefficients
    /// Heading correction gain per sample.
    public var magnetometerGain: Double
    /// Gain with which the magnetic reference follows an undisturbed field.
    public var magneticReferenceGain: Double
    /// Gain of the candidate-field low-pass filter.
    public var magneticCandidateGain: Double
    /// Bias process-noise variance per sample, (rad/s)².
    public var biasProcessNoise: Double
    /// In-motion bias measurement variance, (rad/s)².
    public var biasMotionNoise: Double
    /// Per-sample decay of the held linear-acceleration level.
    public var accelerationDisturbanceDecay: Double
    /// At-rest bias measurement variance, (rad/s)².
    public var biasRestNoise: Double

    /// Derives the coefficients for time step `dt` (s).
    public init(parameters p: AttitudeFilterParameters, dt: Double) {
        let deg = Double.pi / 180
        self.dt = dt
        acceleration = LowPassCoefficients(timeConstant: p.accelerometerTimeConstant, dt: dt)
        rest = LowPassCoefficients(timeConstant: p.restFilterTimeConstant, dt: dt)
        magnetometerGain = firstOrderGain(timeConstant: p.magnetometerTimeConstant, dt: dt)
        magneticReferenceGain = firstOrderGain(timeConstant: p.magneticReferenceTimeConstant, dt: dt)
        magneticCandidateGain = firstOrderGain(timeConstant: 1, dt: dt)
        let drift = p.biasDriftSigma * deg
        biasProcessNoise = drift * drift * dt / max(p.biasForgettingTime, 1e-9)
        let motion = p.biasMotionNoiseDensity * deg
        biasMotionNoise = motion * motion / dt
        accelerationDisturbanceDecay = 1 - firstOrderGain(timeConstant: p.accelerometerTimeConstant, dt: dt)
        let rest = p.biasRestNoiseDensity * deg
        biasRestNoise = rest * rest / dt
    }
}
