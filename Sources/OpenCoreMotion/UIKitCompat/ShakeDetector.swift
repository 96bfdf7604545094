import MotionFusion

/// Recognises shakes in accelerometer readings, reporting began, ended and cancelled as UIKit does.
///
/// Gravity is tracked with a low-pass filter (time constant 0.4 s); what remains is the hand's
/// acceleration. A reading is *violent* when that exceeds ``threshold`` (0.8 g). A shake **begins**
/// when violent readings swing back and forth — at least ``reversals`` (2) sign reversals along the
/// first swing's direction within ``window`` (0.6 s); a single bump or a step does not. It **ends**
/// once no violent reading has come for ``quietTime`` (0.4 s), and is **cancelled** instead if it has
/// gone on for longer than ``maximumDuration`` (5 s), as UIKit cancels a motion that does not finish.
///
/// A value type with no I/O; feed it from one thread.
public struct ShakeDetector: Sendable {
    /// What a reading changed.
    public enum Event: Sendable, Hashable {
        /// A shake began, at this time (seconds, the readings' clock).
        case began(timestamp: Double)
        /// The shake ended.
        case ended(timestamp: Double)
        /// The shake went on too long and was cancelled.
        case cancelled(timestamp: Double)
    }

    /// Hand acceleration, in g, that counts as violent. Default 0.8.
    public var threshold = 0.8
    /// Sign reversals needed to begin. Default 2.
    public var reversals = 2
    /// Seconds within which the reversals must happen. Default 0.6.
    public var window = 0.6
    /// Seconds without a violent reading that end a shake. Default 0.4.
    public var quietTime = 0.4
    /// Seconds after which a shake is cancelled rather than ended. Default 5.
    public var maximumDuration = 5.0

    /// `true` between began and ended/cancelled.
    public private(set) var isShaking = false

    private var gravity: Vector3?
    private var lastTime: Double?
    private var axis: Vector3?
    private var lastSign = 0
    private var flips: [Double] = []
    private var lastViolent = -Double.infinity
    private var began = 0.0

    /// Creates a detector.
    public init() {}

    /// Feeds one reading (g, Core Motion's sign) taken at `timestamp` seconds.
    public mutating func update(_ a: Vector3, timestamp t: Double) -> Event? {
        guard a.isFinite else { return nil }
        guard let g = gravity, let last = lastTime, t > last else {
            gravity = a
            lastTime = t
            return nil
        }
        let dt = min(t - last, 0.5)
        lastTime = t
        let alpha = dt / (0.4 + dt)
        gravity = g + (a - g) * alpha
        let hand = a - gravity!
        if hand.length > threshold {
            lastViolent = t
            if axis == nil { axis = hand.normalized }
            let s = hand.dot(axis!) >= 0 ? 1 : -1
            if lastSign != 0 && s != lastSign { flips.append(t) }
            lastSign = s
        }
        flips.removeAll { t - $0 > window }
        if !isShaking {
            if t - lastViolent > window { axis = nil; lastSign = 0 }
            if flips.count >= reversals {
                isShaking = true
                began = t
                return .began(timestamp: t)
            }
            return nil
        }
        if t - began > maximumDuration {
            endShake()
            return .cancelled(timestamp: t)
        }
        if t - lastViolent > quietTime {
            endShake()
            return .ended(timestamp: t)
        }
        return nil
    }

    private mutating func endShake() {
        isShaking = false
        flips = []
        axis = nil
        lastSign = 0
    }
}
