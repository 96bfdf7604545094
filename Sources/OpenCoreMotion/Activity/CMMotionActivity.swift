import Foundation
import MotionFusion

/// How sure the classifier is of a ``CMMotionActivity``; raw values are Apple's.
@frozen
public enum CMMotionActivityConfidence: Int, Sendable {
    /// Just changed, or unknown.
    case low = 0
    /// The activity has held for a while (twice its confirmation time, about 5 s; 16 s for vehicles).
    case medium = 1
    /// The activity has held for long (six times its confirmation time, about 15 s; 48 s for vehicles).
    case high = 2
}

/// What the user was doing from ``startDate`` on, as Core Motion's `CMMotionActivity`. Delivered by
/// ``CMMotionActivityManager``; immutable.
///
/// At most one of the activity flags is set; ``unknown`` is set when none of the others is (not enough
/// data yet, or motion that fits no class). See ``CMMotionActivityManager`` for how each is decided and
/// how well.
///
/// ## Threading
/// Immutable; safe to pass between threads.
open class CMMotionActivity: CMLogItem {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    private let storedKind: ActivityKind
    private let storedConfidence: CMMotionActivityConfidence
    private let storedStartDate: Date

    /// The activity could not be decided.
    open var unknown: Bool { storedKind == .unknown }
    /// The device is at rest or only held.
    open var stationary: Bool { storedKind == .stationary }
    /// The user is walking.
    open var walking: Bool { storedKind == .walking }
    /// The user is running.
    open var running: Bool { storedKind == .running }
    /// The user is in a car or another motor vehicle.
    open var automotive: Bool { storedKind == .automotive }
    /// The user is cycling (needs a gyroscope).
    open var cycling: Bool { storedKind == .cycling }
    /// How sure the classifier is.
    open var confidence: CMMotionActivityConfidence { storedConfidence }
    /// When this activity began.
    open var startDate: Date { storedStartDate }

    /// The classifier's class (beyond Apple), read from the flags' accessors (so a subclass overriding
    /// ``walking`` reads `.walking`); ``ActivityKind/unknown`` when no flag is set.
    public var kind: ActivityKind {
        if walking { return .walking }
        if running { return .running }
        if cycling { return .cycling }
        if automotive { return .automotive }
        if stationary { return .stationary }
        return .unknown
    }

    /// Creates a record with every flag `false` (``unknown`` too, as Apple's zeroed `init()`),
    /// confidence ``CMMotionActivityConfidence/low``, the reference date (2001-01-01 UTC) and timestamp 0.
    public override init() {
        storedKind = .unknown
        storedConfidence = .low
        storedStartDate = zeroDate
        super.init()
    }

    /// Creates a record (beyond Apple: for tests and tools). `timestamp` in seconds since boot (or the
    /// recording's clock for history).
    public init(kind: ActivityKind, confidence: CMMotionActivityConfidence, startDate: Date, timestamp: TimeInterval) {
        storedKind = kind
        storedConfidence = confidence
        storedStartDate = startDate
        super.init(timestamp: timestamp)
    }

    /// Decodes a record written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedKind = ActivityKind(rawValue: UInt8(clamping: coder.decodeInteger(forKey: "kind"))) ?? .unknown
        storedConfidence = CMMotionActivityConfidence(rawValue: coder.decodeInteger(forKey: "confidence")) ?? .low
        storedStartDate = coder.decodeDate(forKey: "startDate")
        super.init(coder: coder)
    }

    /// Writes the record through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(Int(kind.rawValue), forKey: "kind")
        coder.encode(confidence.rawValue, forKey: "confidence")
        coder.encodeDate(startDate, forKey: "startDate")
    }

    /// A one-line summary.
    open override var description: String {
        "CMMotionActivity(\(kind), confidence \(confidence), since \(startDate))"
    }
}

extension CMMotionActivityConfidence {
    init(_ c: ActivityConfidence) {
        switch c {
        case .low: self = .low
        case .medium: self = .medium
        case .high: self = .high
        }
    }
}

/// Handler of live activity updates: the new activity, or `nil` once when updates cannot run (no
/// accelerometer, the source failed); Apple's handler has no error argument (use
/// ``CMMotionActivityManager/activityUpdates()`` for the error).
public typealias CMMotionActivityHandler = (CMMotionActivity?) -> Void
/// Handler of activity history: the activities in the range in time order, or an error in ``CMErrorDomain``.
public typealias CMMotionActivityQueryHandler = ([CMMotionActivity]?, (any Error)?) -> Void
