/// Finds the intervals in which a device lies still, from its gyroscope and accelerometer, and the
/// gyroscope's bias and the accelerometer's pose in each.
///
/// A window of ``window`` seconds is at rest when, over it, each gyroscope axis varies by at most
/// ``gyroDeviation`` (standard deviation), each accelerometer axis by at most ``accelerometerDeviation``,
/// the accelerometer's mean magnitude lies within 1 g ± ``gravityTolerance`` and the gyroscope's mean is at
/// most ``maximumBias``. This is the moving-variance stationarity test (I. Skog et al., "Zero-velocity
/// detection—an algorithm evaluation", IEEE Trans. Biomed. Eng. 57(11), 2010, the "MV" and "MAG"
/// detectors) on fixed windows. Consecutive rest windows form one ``Segment``; the gyroscope's bias is
/// the mean rate over the rest (IEEE Std 952-1997, *Specification format guide and test procedure for
/// single-axis interferometric fiber optic gyros*, bias as the average output at zero input).
///
/// Feed samples in time order per sensor (as a recording merge or a live source delivers them). Values
/// only; O(1) per sample except for the list of segments.
public struct RestDetector: Sendable {
    /// Window length, seconds. Default 0.5 s.
    public var window: Double = 0.5
    /// Largest standard deviation of each gyroscope axis at rest, rad/s. Default 0.02 rad/s (≈ 1.1 °/s:
    /// a phone's gyroscope noise at 100 Hz is ≈ 0.005 rad/s; a hand holding it still moves more).
    public var gyroDeviation: Double = 0.02
    /// Largest standard deviation of each accelerometer axis at rest, g. Default 0.02 g.
    public var accelerometerDeviation: Double = 0.02
    /// Largest distance of the accelerometer's mean magnitude from 1 g at rest, g. Default 0.2 g (room
    /// for an uncalibrated scale).
    public var gravityTolerance: Double = 0.2
    /// Largest mean gyroscope rate at rest, rad/s: a steady slow turn is not rest. Default 0.2 rad/s
    /// (≈ 11 °/s, above the 4–6 °/s biases of cheap phone gyroscopes).
    public var maximumBias: Double = 0.2
    /// Fewest samples of each sensor a window needs. Default 5.
    public var minimumSamples: Int = 5

    /// A run of consecutive rest windows.
    public struct Segment: Sendable, Hashable {
        /// Start and end, seconds (the timestamps' base).
        public var start: Double
        /// End, seconds.
        public var end: Double
        /// Mean gyroscope rate, rad/s: the bias during the segment.
        public var gyroMean: Vector3
        /// Mean accelerometer reading, g: the pose.
        public var accelerometerMean: Vector3
        /// Gyroscope samples in the segment.
        public var gyroSamples: Int
        /// Standard deviation of the gyroscope over the segment, per axis, rad/s.
        public var gyroDeviation: Vector3
    }

    /// The rest segments found so far, in time order (the last one may still grow).
    public private(set) var segments: [Segment] = []

    private var windowStart = Double.nan
    private var gyro = Moments()
    private var accelerometer = Moments()
    private var lastWindowWasRest = false

    /// Creates a detector with the default thresholds.
    public init() {}

    /// Feeds a gyroscope sample, rad/s, at `timestamp` seconds. Non-finite samples are ignored.
    public mutating func addGyro(_ value: Vector3, timestamp: Double) {
        guard value.isFinite, timestamp.isFinite else { return }
        advance(to: timestamp)
        gyro.add(value)
    }

    /// Feeds an accelerometer sample, g, at `timestamp` seconds. Non-finite samples are ignored.
    public mutating func addAccelerometer(_ value: Vector3, timestamp: Double) {
        guard value.isFinite, timestamp.isFinite else { return }
        advance(to: timestamp)
        accelerometer.add(value)
    }

    /// Closes the current window (call once at the end of the data).
    public mutating func finish() {
        closeWindow(end: windowStart + window)
        windowStart = .nan
    }

    /// The gyroscope bias: the sample-weighted mean over every rest segment, rad/s, with its standard
    /// error per axis (rad/s) and the total rest time (s); `nil` without rest.
    public var gyroBias: (bias: Vector3, standardError: Vector3, restSeconds: Double)? {
        var n = 0, mean = Vector3.zero, seconds = 0.0, variance = Vector3.zero
        for s in segments {
            n += s.gyroSamples
            mean += s.gyroMean * Double(s.gyroSamples)
            let d = s.gyroDeviation
            variance += Vector3(d.x * d.x, d.y * d.y, d.z * d.z) * Double(s.gyroSamples)
            seconds += s.end - s.start
        }
        guard n > 0 else { return nil }
        let sd = variance / Double(n)
        let se = Vector3(sd.x.squareRoot(), sd.y.squareRoot(), sd.z.squareRoot()) / Double(n).squareRoot()
        return (mean / Double(n), se, seconds)
    }

    private mutating func advance(to t: Double) {
        if windowStart.isNaN { windowStart = t }
        if t < windowStart { return }
        if t >= windowStart + window {
            closeWindow(end: windowStart + window)
            if t < windowStart + 2 * window {
                windowStart += window
            } else {
                // A gap: the next window starts at this sample and is not joined to the last segment.
                windowStart = t
                lastWindowWasRest = false
            }
        }
    }

    private mutating func closeWindow(end: Double) {
        defer {
            gyro = Moments()
            accelerometer = Moments()
        }
        guard !windowStart.isNaN, gyro.count >= minimumSamples, accelerometer.count >= minimumSamples else {
            lastWindowWasRest = false
            return
        }
        let g = gyro.deviation, a = accelerometer.deviation
        let rest = max(g.x, g.y, g.z) <= gyroDeviation && max(a.x, a.y, a.z) <= accelerometerDeviation
            && abs(accelerometer.mean.length - 1) <= gravityTolerance && gyro.mean.length <= maximumBias
        defer { lastWindowWasRest = rest }
        guard rest else { return }
        if lastWindowWasRest, var s = segments.last {
            let n0 = Double(s.gyroSamples), n1 = Double(gyro.count), n = n0 + n1
            let mean = (s.gyroMean * n0 + gyro.mean * n1) / n
            // Pooled variance of the two parts about the common mean.
            func pooled(_ d0: Double, _ m0: Double, _ d1: Double, _ m1: Double, _ m: Double) -> Double {
                ((n0 * (d0 * d0 + (m0 - m) * (m0 - m)) + n1 * (d1 * d1 + (m1 - m) * (m1 - m))) / n).squareRoot()
            }
            s.gyroDeviation = Vector3(pooled(s.gyroDeviation.x, s.gyroMean.x, g.x, gyro.mean.x, mean.x),
                                      pooled(s.gyroDeviation.y, s.gyroMean.y, g.y, gyro.mean.y, mean.y),
                                      pooled(s.gyroDeviation.z, s.gyroMean.z, g.z, gyro.mean.z, mean.z))
            let windows = (s.end - s.start) / window
            s.accelerometerMean = (s.accelerometerMean * windows + accelerometer.mean) / (windows + 1)
            s.gyroMean = mean
            s.gyroSamples += gyro.count
            s.end = end
            segments[segments.count - 1] = s
        } else {
            segments.append(Segment(start: windowStart, end: end, gyroMean: gyro.mean, accelerometerMean: accelerometer.mean,
                                    gyroSamples: gyro.count, gyroDeviation: g))
        }
    }
}

/// Mean and standard deviation per axis, accumulated about the first sample (no cancellation for
/// readings with a large constant part).
struct Moments: Sendable {
    private var reference = Vector3.zero
    private var sum = Vector3.zero
    private var sumSquares = Vector3.zero
    private(set) var count = 0

    mutating func add(_ v: Vector3) {
        if count == 0 { reference = v }
        let d = v - reference
        sum += d
        sumSquares += Vector3(d.x * d.x, d.y * d.y, d.z * d.z)
        count += 1
    }

    var mean: Vector3 { count == 0 ? .zero : reference + sum / Double(count) }

    var deviation: Vector3 {
        guard count > 0 else { return .zero }
        let n = Double(count)
        let m = sum / n
        let v = sumSquares / n - Vector3(m.x * m.x, m.y * m.y, m.z * m.z)
        return Vector3(max(v.x, 0).squareRoot(), max(v.y, 0).squareRoot(), max(v.z, 0).squareRoot())
    }
}
