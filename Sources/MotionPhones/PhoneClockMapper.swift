/// Maps a phone's clock onto this machine's monotonic clock (seconds since boot) from arrival times.
///
/// Every reading carries the phone's time `p` of the sample and arrives here at host time `h`, so
/// `h − p = offset + delay` with `delay ≥ 0`. The smallest `h − p` seen over a window is the offset
/// plus the minimum one-way delay: the minimum-delay filter of NTP-style clock synchronisation.
/// Clocks drift (tens of ppm), so the minima are kept per bucket of host time and the offset is the
/// line under all of them that lies closest to them: the linear-programming skew estimate of
/// Moon, Skelly and Towsley, "Estimation and removal of clock skew from network delay measurements",
/// IEEE INFOCOM 1999 (the line supporting the lower convex hull at the mean phone time). That line is
/// re-estimated as buckets slide, so drift is followed.
///
/// Mapped times keep each sample's own spacing (scaled by `1 + skew`, |skew| ≤ ``maximumSkew``) and
/// lie at or before the sample's arrival. A batch of samples arriving at once contributes every
/// sample; the newest gives the tightest bound. What no receiver can see is the minimum one-way
/// delay itself: mapped times are late by it (a few ms on a LAN).
///
/// A phone clock that steps (a new recording session, a reboot) is detected, by a phone time going
/// back more than ``stepTolerance`` or a sample that would map more than ``stepTolerance`` into the
/// future, and the estimate starts afresh (``resets``).
///
/// ## Threading
/// A value type: use it from one thread at a time.
package struct PhoneClockMapper: Sendable {
    /// Host seconds covered by one bucket of minima (default 1).
    package var bucketDuration: Double
    /// How many buckets are kept (default 120, so the window is 2 minutes of host time: long enough
    /// for a good skew estimate from phones that send one batch a second, short enough that drift
    /// is close to linear over it).
    package var bucketCount: Int
    /// The largest drift rate believed, as a fraction (default 1e-3, 1000 ppm).
    package var maximumSkew: Double
    /// Seconds by which a phone clock may go back, or a sample map into the future, before the
    /// estimate restarts (default 1).
    package var stepTolerance: Double
    /// How many times the estimate restarted after a clock step.
    package private(set) var resets = 0

    private struct Point { var phone: Double; var offset: Double }
    private var buckets: [Point] = []
    private var current: Point?
    private var currentStart = 0.0
    private var lastPhone: Double?
    /// The line `offset(p) = a + b (p − x0)`.
    private var x0 = 0.0
    private var a = 0.0
    private var b = 0.0
    private var valid = false

    /// Creates an empty mapper.
    package init(bucketDuration: Double = 1, bucketCount: Int = 120, maximumSkew: Double = 1e-3, stepTolerance: Double = 1) {
        self.bucketDuration = bucketDuration
        self.bucketCount = max(2, bucketCount)
        self.maximumSkew = maximumSkew
        self.stepTolerance = stepTolerance
    }

    /// Whether at least one reading has been observed.
    package var isCalibrated: Bool { valid }

    /// The estimated skew (host seconds per phone second − 1).
    package var skew: Double { b }

    /// Records that a sample stamped `phoneTime` (phone seconds) arrived at host time `arrival`
    /// (seconds since boot). Non-finite input is ignored.
    package mutating func observe(phoneTime: Double, arrival: Double) {
        guard phoneTime.isFinite, arrival.isFinite else { return }
        let offset = arrival - phoneTime
        if valid {
            let stepBack = lastPhone.map { phoneTime < $0 - stepTolerance } ?? false
            let future = offset < estimate(at: phoneTime) - stepTolerance
            if stepBack || future { reset() }
        }
        lastPhone = max(lastPhone ?? phoneTime, phoneTime)
        let point = Point(phone: phoneTime, offset: offset)
        if current == nil {
            current = point
            currentStart = arrival
        } else if arrival - currentStart >= bucketDuration {
            buckets.append(current!)
            if buckets.count >= bucketCount { buckets.removeFirst(buckets.count - bucketCount + 1) }
            current = point
            currentStart = arrival
        } else if offset < current!.offset {
            current = point
        } else if valid {
            return
        }
        refit()
    }

    /// The host time (seconds since boot) of a sample stamped `phoneTime`, or `nil` before any
    /// reading was observed.
    package func hostTime(forPhoneTime phoneTime: Double) -> Double? {
        guard valid, phoneTime.isFinite else { return nil }
        return phoneTime + estimate(at: phoneTime)
    }

    /// Forgets everything observed.
    package mutating func reset() {
        resets += 1
        buckets.removeAll()
        current = nil
        lastPhone = nil
        valid = false
        a = 0; b = 0
    }

    private func estimate(at p: Double) -> Double { a + b * (p - x0) }

    private mutating func refit() {
        var points = buckets
        if let current { points.append(current) }
        guard let first = points.first else { valid = false; return }
        points.sort { $0.phone < $1.phone }
        x0 = first.phone
        valid = true
        let span = points[points.count - 1].phone - points[0].phone
        guard points.count >= 3, span >= 2 * bucketDuration else {
            a = points.map(\.offset).min() ?? first.offset
            b = 0
            return
        }
        // Lower convex hull (monotone chain) of (phone − x0, offset).
        var hull: [(Double, Double)] = []
        for pt in points {
            let q = (pt.phone - x0, pt.offset)
            while hull.count >= 2 {
                let o = hull[hull.count - 2], m = hull[hull.count - 1]
                let cross = (m.0 - o.0) * (q.1 - o.1) - (m.1 - o.1) * (q.0 - o.0)
                if cross <= 0 { hull.removeLast() } else { break }
            }
            hull.append(q)
        }
        let mean = points.reduce(0) { $0 + ($1.phone - x0) } / Double(points.count)
        var slope = 0.0
        var anchor = hull[0]
        for i in 0..<(hull.count - 1) where hull[i].0 <= mean && mean <= hull[i + 1].0 {
            let dx = hull[i + 1].0 - hull[i].0
            if dx > 0 { slope = (hull[i + 1].1 - hull[i].1) / dx }
            anchor = hull[i]
            break
        }
        if abs(slope) > maximumSkew || !slope.isFinite {
            slope = min(max(slope.isFinite ? slope : 0, -maximumSkew), maximumSkew)
            // The highest line of that slope under every point.
            var best = Double.infinity
            for pt in points { best = min(best, pt.offset - slope * (pt.phone - x0)) }
            a = best
        } else {
            a = anchor.1 - slope * anchor.0
        }
        b = slope
    }
}
