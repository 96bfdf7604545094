/// Step length (m) from cadence and the walker's height: `L = h · (slope · f + intercept)`.
///
/// The form, step length proportional to height times a linear function of step frequency `f`
/// (steps/s), is the one of V. Renaudin, M. Susi and G. Lachapelle, "Step length estimation using
/// handheld inertial sensors", *Sensors* 12(7):8507–8525, 2012. The coefficients are ours, set from the
/// common anthropometric rule that a normal walking step (about 1.8 steps/s) is about 0.415 × height, and
/// a slope giving 0.36 × height at 1.5 steps/s and 0.49 × height at 2.2 steps/s. It has not been validated
/// on distance-labelled data in this project (the step data set has no distances); set ``height`` for
/// the walker. The cadence is clamped to [0.5, 4] steps/s so a glitch cannot give an absurd length.
///
/// Values only; safe from any thread.
@frozen
public struct StepLengthModel: Hashable, Sendable {
    /// The walker's height (m). Default 1.70 m.
    public var height: Double
    /// Slope (s): step length per height per step/s. Default 0.18.
    public var slope: Double
    /// Intercept: step length per height at zero cadence. Default 0.091.
    public var intercept: Double

    /// A model for a walker of `height` metres.
    public init(height: Double = 1.70, slope: Double = 0.18, intercept: Double = 0.091) {
        self.height = height
        self.slope = slope
        self.intercept = intercept
    }

    /// The length (m) of one step taken at `cadence` steps/s. A non-finite cadence gives the length at
    /// 1.8 steps/s.
    @inlinable
    public func stepLength(cadence: Double) -> Double {
        let f = cadence.isFinite ? min(max(cadence, 0.5), 4.0) : 1.8
        return max(height * (slope * f + intercept), 0)
    }
}
