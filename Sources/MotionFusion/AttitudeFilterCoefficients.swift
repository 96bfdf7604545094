/// Coefficients derived from ``AttitudeFilterParameters`` for one time step, cached by ``AttitudeFilter``
/// and recomputed only when the time step changes.
public struct AttitudeFilterCoefficients: Sendable {
    /// The time step these coefficients were derived for, seconds.
    public var dt: Double
    /// Inclination low-pass filter.
    public var acceleration: LowPassCoefficients
    /// Gain of the first-order rest-detection low-pass filters.
    public var restGain: Double
    /// Heading correction gain per sample.
    public var magnetometerGain: Double
    /// Gain with which the magnetic reference follows an undisturbed field.
    public var magneticReferenceGain: Double
    /// Gain of the candidate-field low-pass filter.
    public var magneticCandidateGain: Double
    /// In-motion bias measurement noise density squared, (rad/s)²·s (variance = this / averaging time).
    public var biasMotionNoiseDensitySquared: Double
    /// Per-sample decay of the held linear-acceleration level.
    public var accelerationDisturbanceDecay: Double
    /// At-rest bias measurement variance, (rad/s)².
    public var biasRestNoise: Double
    /// Gain of the first-order average of the squared rotation rate (inclination time constant).
    public var rateGain: Double
    /// `1/ω₀²` for ``AttitudeFilterParameters/inclinationRateScale`` `ω₀`, (rad/s)⁻²; 0 when disabled.
    public var inverseRateScaleSquared: Double

    /// Derives the coefficients for time step `dt` (s).
    public init(parameters p: AttitudeFilterParameters, dt: Double) {
        let deg = Double.pi / 180
        self.dt = dt
        acceleration = LowPassCoefficients(timeConstant: p.accelerometerTimeConstant, dt: dt)
        restGain = firstOrderGain(timeConstant: p.restFilterTimeConstant, dt: dt)
        magnetometerGain = firstOrderGain(timeConstant: p.magnetometerTimeConstant, dt: dt)
        magneticReferenceGain = firstOrderGain(timeConstant: p.magneticReferenceTimeConstant, dt: dt)
        magneticCandidateGain = firstOrderGain(timeConstant: 1, dt: dt)
        let motion = p.biasMotionNoiseDensity * deg
        biasMotionNoiseDensitySquared = motion * motion
        accelerationDisturbanceDecay = 1 - firstOrderGain(timeConstant: p.accelerometerTimeConstant, dt: dt)
        let rest = p.biasRestNoiseDensity * deg
        biasRestNoise = rest * rest / dt
        rateGain = firstOrderGain(timeConstant: p.inclinationRateTimeConstant, dt: dt)
        let w0 = p.inclinationRateScale * deg
        inverseRateScaleSquared = w0 > 0 && w0.isFinite ? 1 / (w0 * w0) : 0
    }
}
