import Foundation
import MotionFusion

/// How sure the classifier is of a ``CMMotionActivity``; raw values are Apple's.
@frozen
public enum CMMotionActivityConfidence: Int, Sendable, Hashable {
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
open class CMMotionActivity: CMLogItem, @unchecked Sendable {
    // Sendable: Apple's shape makes this an `open` NSObject subclass, which cannot be checked for
    // Sendable; its properties are `private(set)` and written only by its initialiser.
    /// The activity could not be decided.
    open private(set) var unknown: Bool
    /// The device is at rest or only held.
    open private(set) var stationary: Bool
    /// The user is walking.
    open private(set) var walking: Bool
    /// The user is running.
    open private(set) var running: Bool
    /// The user is in a car or another motor vehicle.
    open private(set) var automotive: Bool
    /// The user is cycling (needs a gyroscope).
    open private(set) var cycling: Bool
    /// How sure the classifier is.
    open private(set) var confidence: CMMotionActivityConfidence
    /// When this activity began.
    open private(set) var startDate: Date

    /// The classifier's class (beyond Apple).
    public let kind: ActivityKind

    /// Creates a record (beyond Apple: for tests and tools). `timestamp` in seconds since boot (or the
    /// recording's clock for history).
    public init(kind: ActivityKind, confidence: CMMotionActivityConfidence, startDate: Date, timestamp: TimeInterval) {
        self.kind = kind
        unknown = kind == .unknown
        stationary = kind == .stationary
        walking = kind == .walking
        running = kind == .running
        automotive = kind == .automotive
        cycling = kind == .cycling
        self.confidence = confidence
        self.startDate = startDate
        super.init(timestamp: timestamp)
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
