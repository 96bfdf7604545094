import MotionFusion

/// A pure, deterministic generator of simulated sensor samples: no threads, no clocks.
///
/// Each enabled sensor samples on its own grid `startTime + k / rate` (k = 0, 1, …); ``next()``
/// returns the earliest pending sample of any sensor, ties in the order accelerometer, gyro,
/// magnetometer. The stream is infinite. For equal options, start time and rates, the output is
/// bit-identical on every run; each sensor draws its noise from its own generator, so one sensor's
/// samples do not depend on which other sensors run.
///
/// Generating a sample costs a few microseconds and allocates nothing.
///
/// ## Threading
/// A value type: use each instance from one thread at a time (copies are independent).
/// ``truth(at:)`` is a pure function and may be called from anywhere.
public struct MotionSimulator: Sendable {
    let model: MotionModel
    var channels: [Channel]
    /// Timestamp of the last sample returned by ``next()``, or −∞ before the first.
    public private(set) var lastTimestamp: Double = -.infinity
    private var cachedTruth: SimulatedTruth?

    /// The options this simulator was built from.
    public var options: SimulationOptions { model.options }

    /// The time (seconds since boot) at which the trajectory starts and every sampling grid is
    /// anchored.
    public var startTime: Double { model.startTime }

    /// Creates a simulator sampling at `options.rates`.
    ///
    /// - Parameters:
    ///   - options: the scenario, seed, sensor models and environment.
    ///   - startTime: seconds since boot of the first sample and of trajectory time 0. Default 0.
    public init(options: SimulationOptions, startTime: Double = 0) {
        model = MotionModel(options: options, startTime: startTime)
        channels = SensorKind.motion.enumerated().map { index, kind in
            Channel(kind: kind, seed: options.seed &+ UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15)
        }
        setRates(options.rates, from: startTime, keepUnchanged: false)
    }

    /// The walker's step frequency in Hz (steps per second, one bounce of the phone per step) when the
    /// scenario walks (``SimulationScenario/walk``), `nil` otherwise: the true cadence a pedometer should
    /// report. Fixed for the whole run; the seed picks it in 1.8–2.0 Hz.
    public var stepFrequency: Double? { model.stepFrequency }

    /// The ground truth at `t` seconds since boot (any time, before or after the start).
    public func truth(at t: Double) -> SimulatedTruth {
        model.truth(at: t)
    }

    /// The rate in Hz at which each sensor currently samples; absent sensors are off.
    public var rates: [SensorKind: Double] {
        var r: [SensorKind: Double] = [:]
        for c in channels where c.rate > 0 { r[c.kind] = c.rate }
        return r
    }

    /// The timestamp of the sample ``next()`` will return, or `nil` when no sensor is on.
    public var nextTimestamp: Double? {
        guard let i = nextChannel() else { return nil }
        return channels[i].nextTime(base: model.startTime)
    }

    /// Changes the sampling rates (Hz); a sensor absent from `rates`, or with a rate that is not
    /// positive and finite, stops.
    ///
    /// A sensor whose rate changes, or that starts, resumes on its new grid at the first point at or
    /// after `time` and strictly after the last sample returned, so timestamps never go backwards.
    ///
    /// - Parameters:
    ///   - rates: the new rate of each sensor, Hz.
    ///   - time: seconds since boot from which the new rates apply.
    ///   - keepUnchanged: when `true` (the default), a sensor whose rate is unchanged keeps its
    ///     schedule; when `false` every sensor is rescheduled from `time` (samples before it are skipped).
    public mutating func setRates(_ rates: [SensorKind: Double], from time: Double, keepUnchanged: Bool = true) {
        let base = model.startTime
        var floor = time.isFinite ? time : base
        if lastTimestamp.isFinite { floor = max(floor, lastTimestamp) }
        for i in channels.indices {
            var rate = rates[channels[i].kind] ?? 0
            if !(rate.isFinite && rate > 0) { rate = 0 }
            if keepUnchanged, rate == channels[i].rate { continue }
            channels[i].rate = rate
            guard rate > 0 else { continue }
            channels[i].sigma = Self.whiteNoiseSigma(channels[i].kind, rate: rate, options: model.options)
            var k = ((floor - base) * rate).rounded(.up)
            if !(k >= 0) { k = 0 }
            var index = Int64(min(k, 9e15))
            while base + Double(index) / rate <= lastTimestamp { index += 1 }
            channels[i].index = index
        }
    }

    /// Returns the next sample of any running sensor, in timestamp order (ties: accelerometer, gyro,
    /// magnetometer).
    ///
    /// - Precondition: at least one sensor has a rate (the stream is infinite, so this never runs out).
    public mutating func next() -> RawSample {
        guard let i = nextChannel() else {
            preconditionFailure("MotionSimulator.next(): no sensor is running; give options.rates or call setRates")
        }
        let t = channels[i].nextTime(base: model.startTime)
        channels[i].index += 1
        lastTimestamp = t
        let truth: SimulatedTruth
        if let cached = cachedTruth, cached.timestamp == t {
            truth = cached
        } else {
            truth = model.truth(at: t)
            cachedTruth = truth
        }
        let value = channels[i].read(truth, options: model.options)
        return RawSample(sensor: channels[i].kind, timestamp: t, value: value)
    }

    private func nextChannel() -> Int? {
        var best: Int?
        var bestTime = Double.infinity
        for i in channels.indices where channels[i].rate > 0 {
            let t = channels[i].nextTime(base: model.startTime)
            if best == nil || t < bestTime {
                best = i
                bestTime = t
            }
        }
        return best
    }
}
