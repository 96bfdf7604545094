/// Steps, distance and cadence of a walk, from accelerometer samples one at a time.
///
/// Wraps a ``StepDetector`` and a ``StepLengthModel``: each counted step adds the step length at the
/// current cadence. Cadence is the detector's recent step period inverted (steps/s); pace is its
/// inverse speed (s/m). No Foundation, no allocation per sample; a value type, one per stream, not shared
/// between threads while updated.
@frozen
public struct PedometerAccumulator: Sendable {
    /// The step detector.
    public private(set) var detector: StepDetector
    /// The step-length model.
    public var lengthModel: StepLengthModel
    /// Distance walked (m) since the start.
    public private(set) var distance: Double = 0
    /// Time (s, the samples' clock) spent in walking bouts, from the first to the last step of each.
    public private(set) var activeTime: Double = 0
    @usableFromInline var lastBoutStep: Double?

    /// An accumulator with the given detector parameters and step-length model.
    public init(parameters: StepDetectorParameters = StepDetectorParameters(),
                lengthModel: StepLengthModel = StepLengthModel()) {
        detector = StepDetector(parameters: parameters)
        self.lengthModel = lengthModel
    }

    /// Steps counted so far.
    public var steps: Int { detector.steps }
    /// Current cadence (steps/s), or `nil` outside a walking bout.
    public var cadence: Double? { detector.stepPeriod.map { 1 / $0 } }
    /// Current pace (s/m), or `nil` outside a walking bout.
    public var pace: Double? {
        guard let c = cadence else { return nil }
        let speed = c * lengthModel.stepLength(cadence: c)
        return speed > 0 ? 1 / speed : nil
    }
    /// Average pace (s/m) while walking: active time over distance, or `nil` before any distance.
    public var averageActivePace: Double? { distance > 0 && activeTime > 0 ? activeTime / distance : nil }

    /// Feeds one accelerometer sample (g, seconds) and returns the number of steps newly counted.
    /// Non-finite or non-increasing samples are ignored (see ``StepDetector/process(timestamp:x:y:z:)``).
    @discardableResult
    public mutating func process(timestamp: Double, x: Double, y: Double, z: Double) -> Int {
        let wasInBout = detector.inBout
        let n = detector.process(timestamp: timestamp, x: x, y: y, z: z)
        guard n > 0, let period = detector.stepPeriod, let t = detector.lastStepTime else { return n }
        let cadence = 1 / period
        distance += Double(n) * lengthModel.stepLength(cadence: cadence)
        if wasInBout, let last = lastBoutStep {
            activeTime += t - last
        } else {
            activeTime += Double(n - 1) * period
        }
        lastBoutStep = t
        return n
    }
}
