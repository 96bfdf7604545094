/// Counts floors climbed and descended on foot from barometric pressure, one reading per call.
///
/// Readings are averaged over ``averagingTime`` (1 s), converted to altitude by the International
/// Standard Atmosphere (`h = 44330.8 m · (1 − (p/101.325 kPa)^0.190263)`: 1 Pa ≈ 8.3 cm near sea level)
/// and compared with a reference level:
/// - a floor up is counted when the altitude is at least ``countingFraction`` × ``floorHeight`` above the
///   reference, which then moves up by one ``floorHeight``; a floor down likewise below it. The reference
///   moves by whole floors, so the band of ± ``countingFraction`` floor around it is the hysteresis: noise
///   (a phone barometer's 2–3 Pa, 20–25 cm) and the sway of a landing never count twice;
/// - while the user is not walking (standing, a lift, an escalator ridden standing) the reference follows
///   the altitude, so height gained without steps is not counted (as Core Motion counts only floors
///   walked) and the slow drift of the weather (about 1 hPa, 8 m, in 3 hours) is removed whenever the user
///   stops.
///
/// Floors are ``floorHeight`` (3 m, the usual storey height) by default, as Core Motion's are about 3 m.
///
/// No Foundation, no allocation per reading. A value type: one per stream, not shared between threads
/// while it is updated.
@frozen
public struct FloorCounter: Sendable {
    /// The height of one floor (m). Default 3 m.
    public var floorHeight: Double
    /// The fraction of a floor the altitude must pass beyond the reference to count it. Default 0.8.
    public var countingFraction: Double
    /// The averaging time (s) of the readings. Default 1 s.
    public var averagingTime: Double

    /// Floors walked up so far.
    public private(set) var ascended = 0
    /// Floors walked down so far.
    public private(set) var descended = 0
    /// The latest averaged altitude (m, ISA) or `nil` before the first average.
    public private(set) var altitude: Double?

    @usableFromInline var reference: Double?
    @usableFromInline var sum = 0.0
    @usableFromInline var count = 0
    @usableFromInline var windowStart = -Double.infinity
    @usableFromInline var walkingInWindow = false

    /// A counter with floors of `floorHeight` metres.
    public init(floorHeight: Double = 3, countingFraction: Double = 0.8, averagingTime: Double = 1) {
        self.floorHeight = floorHeight.isFinite && floorHeight > 0 ? floorHeight : 3
        self.countingFraction = countingFraction.isFinite ? min(max(countingFraction, 0.5), 1) : 0.8
        self.averagingTime = averagingTime.isFinite && averagingTime > 0 ? averagingTime : 1
    }

    /// ISA altitude (m) of pressure `p` (kPa) for the standard sea-level pressure.
    @inlinable
    public static func altitude(pressure p: Double) -> Double {
        (1 - _pow(p / 101.325, 0.190263)) * 44330.8
    }

    /// Feeds one pressure reading (kPa) at `timestamp` (s) and whether the user is walking then; returns
    /// the floors newly counted (up, down). Non-finite or non-positive pressures are ignored.
    @discardableResult
    public mutating func process(timestamp t: Double, pressure: Double, walking: Bool) -> (up: Int, down: Int) {
        guard t.isFinite, pressure.isFinite, pressure > 0 else { return (0, 0) }
        if !windowStart.isFinite || t < windowStart { windowStart = t }
        sum += pressure
        count += 1
        walkingInWindow = walkingInWindow || walking
        guard t - windowStart >= averagingTime else { return (0, 0) }
        let h = Self.altitude(pressure: sum / Double(count))
        let walked = walkingInWindow
        sum = 0
        count = 0
        walkingInWindow = false
        windowStart = t
        altitude = h
        guard var ref = reference, walked else {
            reference = h
            return (0, 0)
        }
        var up = 0, down = 0
        let threshold = countingFraction * floorHeight
        while h - ref >= threshold {
            ref += floorHeight
            up += 1
        }
        while ref - h >= threshold {
            ref -= floorHeight
            down += 1
        }
        reference = ref
        ascended += up
        descended += down
        return (up, down)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline func _pow(_ x: Double, _ y: Double) -> Double { pow(x, y) }
