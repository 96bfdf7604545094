import Foundation

/// Walking data over a time range, as Core Motion's `CMPedometerData`: steps, distance, pace,
/// cadence and floors. Delivered by ``CMPedometer``; immutable.
///
/// Units are Apple's: distance in metres, pace in seconds per metre, cadence in steps per second.
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMPedometerData: NSObject, NSCopying, NSSecureCoding {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    private let storedStartDate: Date
    private let storedEndDate: Date
    private let storedNumberOfSteps: NSNumber
    private let storedDistance: NSNumber?
    private let storedFloorsAscended: NSNumber?
    private let storedFloorsDescended: NSNumber?
    private let storedCurrentPace: NSNumber?
    private let storedCurrentCadence: NSNumber?
    private let storedAverageActivePace: NSNumber?

    /// The start of the range the data covers.
    open var startDate: Date { storedStartDate }
    /// The end of the range the data covers.
    open var endDate: Date { storedEndDate }
    /// Steps taken in the range.
    open var numberOfSteps: NSNumber { storedNumberOfSteps }
    /// Estimated distance walked (m) in the range, from the step-length model (see ``CMPedometer``);
    /// `nil` when distance is not available.
    open var distance: NSNumber? { storedDistance }
    /// Floors climbed (about 3 m each) in the range; `nil` without an altimeter.
    open var floorsAscended: NSNumber? { storedFloorsAscended }
    /// Floors descended in the range; `nil` without an altimeter.
    open var floorsDescended: NSNumber? { storedFloorsDescended }
    /// The current pace (s/m) during live updates; `nil` for history queries and while not walking.
    open var currentPace: NSNumber? { storedCurrentPace }
    /// The current cadence (steps/s) during live updates; `nil` for history queries and while not walking.
    open var currentCadence: NSNumber? { storedCurrentCadence }
    /// The average pace (s/m) while walking in the range (time in walking bouts over distance);
    /// `nil` before any distance.
    open var averageActivePace: NSNumber? { storedAverageActivePace }

    /// Creates an empty record, as Apple's `init()`: both dates the reference date (2001-01-01 UTC),
    /// 0 steps, every optional `nil`. Tests subclass it and override the properties they need.
    public override init() {
        storedStartDate = zeroDate
        storedEndDate = zeroDate
        storedNumberOfSteps = 0
        storedDistance = nil
        storedFloorsAscended = nil
        storedFloorsDescended = nil
        storedCurrentPace = nil
        storedCurrentCadence = nil
        storedAverageActivePace = nil
        super.init()
    }

    /// Creates a record (beyond Apple: Core Motion creates them; for tests and tools).
    public init(startDate: Date, endDate: Date, numberOfSteps: Int, distance: Double?,
                floorsAscended: Int? = nil, floorsDescended: Int? = nil, currentPace: Double? = nil,
                currentCadence: Double? = nil, averageActivePace: Double? = nil) {
        storedStartDate = startDate
        storedEndDate = endDate
        storedNumberOfSteps = NSNumber(value: numberOfSteps)
        storedDistance = distance.map { NSNumber(value: $0) }
        storedFloorsAscended = floorsAscended.map { NSNumber(value: $0) }
        storedFloorsDescended = floorsDescended.map { NSNumber(value: $0) }
        storedCurrentPace = currentPace.map { NSNumber(value: $0) }
        storedCurrentCadence = currentCadence.map { NSNumber(value: $0) }
        storedAverageActivePace = averageActivePace.map { NSNumber(value: $0) }
        super.init()
    }

    /// Decodes a record written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedStartDate = coder.decodeDate(forKey: "startDate")
        storedEndDate = coder.decodeDate(forKey: "endDate")
        storedNumberOfSteps = NSNumber(value: coder.decodeInteger(forKey: "numberOfSteps"))
        storedDistance = coder.decodeNumber(forKey: "distance")
        storedFloorsAscended = coder.decodeNumber(forKey: "floorsAscended").map { NSNumber(value: $0.intValue) }
        storedFloorsDescended = coder.decodeNumber(forKey: "floorsDescended").map { NSNumber(value: $0.intValue) }
        storedCurrentPace = coder.decodeNumber(forKey: "currentPace")
        storedCurrentCadence = coder.decodeNumber(forKey: "currentCadence")
        storedAverageActivePace = coder.decodeNumber(forKey: "averageActivePace")
        super.init()
    }

    /// `true`: records decode with `NSSecureCoding`.
    open class var supportsSecureCoding: Bool { true }

    /// Writes the record through its accessors (so a subclass's overrides are what is written).
    open func encode(with coder: NSCoder) {
        coder.encodeDate(startDate, forKey: "startDate")
        coder.encodeDate(endDate, forKey: "endDate")
        coder.encode(numberOfSteps.intValue, forKey: "numberOfSteps")
        coder.encodeNumber(distance, forKey: "distance")
        coder.encodeNumber(floorsAscended, forKey: "floorsAscended")
        coder.encodeNumber(floorsDescended, forKey: "floorsDescended")
        coder.encodeNumber(currentPace, forKey: "currentPace")
        coder.encodeNumber(currentCadence, forKey: "currentCadence")
        coder.encodeNumber(averageActivePace, forKey: "averageActivePace")
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
public enum CMPedometerEventType: Int, Sendable {
    /// The user stopped walking.
    case pause = 0
    /// The user started or resumed walking.
    case resume = 1
}

/// A change in the user's walking: paused or resumed, with its date.
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMPedometerEvent: NSObject, NSCopying, NSSecureCoding {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    private let storedDate: Date
    private let storedType: CMPedometerEventType

    /// When the change happened: for a resume the first step of the new bout; for a pause the last
    /// step before it.
    open var date: Date { storedDate }
    /// Pause or resume.
    open var type: CMPedometerEventType { storedType }

    /// Creates an event at the reference date (2001-01-01 UTC) of type ``CMPedometerEventType/pause``
    /// (raw value 0), as Apple's `init()`.
    public override init() {
        storedDate = zeroDate
        storedType = .pause
        super.init()
    }

    /// Creates an event (beyond Apple: for tests and tools).
    public init(date: Date, type: CMPedometerEventType) {
        storedDate = date
        storedType = type
        super.init()
    }

    /// Decodes an event written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedDate = coder.decodeDate(forKey: "date")
        storedType = CMPedometerEventType(rawValue: coder.decodeInteger(forKey: "type")) ?? .pause
        super.init()
    }

    /// `true`: events decode with `NSSecureCoding`.
    open class var supportsSecureCoding: Bool { true }

    /// Writes the event through its accessors.
    open func encode(with coder: NSCoder) {
        coder.encodeDate(date, forKey: "date")
        coder.encode(type.rawValue, forKey: "type")
    }

    /// Events are immutable, so a copy is the event itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// Handler of pedometer data: a record, or an error in ``CMErrorDomain``.
public typealias CMPedometerHandler = (CMPedometerData?, (any Error)?) -> Void
/// Handler of pedometer events: an event, or an error in ``CMErrorDomain``.
public typealias CMPedometerEventHandler = (CMPedometerEvent?, (any Error)?) -> Void
