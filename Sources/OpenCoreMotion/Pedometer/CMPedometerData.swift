import Foundation

/// Walking data over a time range, as Core Motion's `CMPedometerData`: steps, distance, pace,
/// cadence and floors. Delivered by ``CMPedometer``; immutable.
///
/// Units are Apple's: distance in metres, pace in seconds per metre, cadence in steps per second.
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMPedometerData: NSObject, NSCopying, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its properties are `private(set)` and written only by its initialiser.
    /// The start of the range the data covers.
    open private(set) var startDate: Date
    /// The end of the range the data covers.
    open private(set) var endDate: Date
    /// Steps taken in the range.
    open private(set) var numberOfSteps: NSNumber
    /// Estimated distance walked (m) in the range, from the step-length model (see ``CMPedometer``);
    /// `nil` when distance is not available.
    open private(set) var distance: NSNumber?
    /// Floors climbed (about 3 m each) in the range; `nil` without an altimeter.
    open private(set) var floorsAscended: NSNumber?
    /// Floors descended in the range; `nil` without an altimeter.
    open private(set) var floorsDescended: NSNumber?
    /// The current pace (s/m) during live updates; `nil` for history queries and while not walking.
    open private(set) var currentPace: NSNumber?
    /// The current cadence (steps/s) during live updates; `nil` for history queries and while not walking.
    open private(set) var currentCadence: NSNumber?
    /// The average pace (s/m) while walking in the range (time in walking bouts over distance);
    /// `nil` before any distance.
    open private(set) var averageActivePace: NSNumber?

    /// Creates a record (beyond Apple: Core Motion creates them; for tests and tools).
    public init(startDate: Date, endDate: Date, numberOfSteps: Int, distance: Double?,
                floorsAscended: Int? = nil, floorsDescended: Int? = nil, currentPace: Double? = nil,
                currentCadence: Double? = nil, averageActivePace: Double? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.numberOfSteps = NSNumber(value: numberOfSteps)
        self.distance = distance.map { NSNumber(value: $0) }
        self.floorsAscended = floorsAscended.map { NSNumber(value: $0) }
        self.floorsDescended = floorsDescended.map { NSNumber(value: $0) }
        self.currentPace = currentPace.map { NSNumber(value: $0) }
        self.currentCadence = currentCadence.map { NSNumber(value: $0) }
        self.averageActivePace = averageActivePace.map { NSNumber(value: $0) }
        super.init()
    }

    /// Records are immutable, so a copy is the record itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// A one-line summary.
    open override var description: String {
        "CMPedometerData(\(startDate)–\(endDate): \(numberOfSteps) steps, \(distance.map { "\($0) m" } ?? "no distance"))"
    }
}

/// Kinds of ``CMPedometerEvent``; raw values are Apple's.
@frozen
public enum CMPedometerEventType: Int, Sendable, Hashable {
    /// The user stopped walking.
    case pause = 0
    /// The user started or resumed walking.
    case resume = 1
}

/// A change in the user's walking: paused or resumed, with its date.
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMPedometerEvent: NSObject, NSCopying, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its properties are `private(set)` and written only by its initialiser.
    /// When the change happened: for a resume the first step of the new bout; for a pause the last
    /// step before it.
    open private(set) var date: Date
    /// Pause or resume.
    open private(set) var type: CMPedometerEventType

    /// Creates an event (beyond Apple: for tests and tools).
    public init(date: Date, type: CMPedometerEventType) {
        self.date = date
        self.type = type
        super.init()
    }

    /// Events are immutable, so a copy is the event itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// Handler of pedometer data: a record, or an error in ``CMErrorDomain``.
public typealias CMPedometerHandler = (CMPedometerData?, (any Error)?) -> Void
/// Handler of pedometer events: an event, or an error in ``CMErrorDomain``.
public typealias CMPedometerEventHandler = (CMPedometerEvent?, (any Error)?) -> Void
