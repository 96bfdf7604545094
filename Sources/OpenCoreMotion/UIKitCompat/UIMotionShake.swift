import Foundation
import MotionSources
import MotionFusion

/// An event UIKit delivers to responders, as UIKit's `UIEvent`: here, the motion (shake) events that
/// ``UIShakeMonitor`` produces. Main-actor isolated, as UIKit's.
@MainActor
open class UIEvent: NSObject {
    /// The general type of an event, as UIKit's `UIEvent.EventType` (same raw values).
    public enum EventType: Int, Sendable {
        /// Touches on the screen.
        case touches = 0
        /// Motion of the device, such as a shake.
        case motion = 1
        /// A remote-control event.
        case remoteControl = 2
        /// The press of a physical button.
        case presses = 3
        /// A scroll.
        case scroll = 10
        /// A pointer hovering.
        case hover = 11
        /// A transform (pinch, rotate).
        case transform = 14
    }

    /// The subtype of an event, as UIKit's `UIEvent.EventSubtype` (same raw values).
    public enum EventSubtype: Int, Sendable {
        /// No subtype.
        case none = 0
        /// The device was shaken.
        case motionShake = 1
        /// Play.
        case remoteControlPlay = 100
        /// Pause.
        case remoteControlPause = 101
        /// Stop.
        case remoteControlStop = 102
        /// Toggle play and pause.
        case remoteControlTogglePlayPause = 103
        /// Next track.
        case remoteControlNextTrack = 104
        /// Previous track.
        case remoteControlPreviousTrack = 105
        /// Begin seeking backward.
        case remoteControlBeginSeekingBackward = 106
        /// End seeking backward.
        case remoteControlEndSeekingBackward = 107
        /// Begin seeking forward.
        case remoteControlBeginSeekingForward = 108
        /// End seeking forward.
        case remoteControlEndSeekingForward = 109
    }

    private let storedType: EventType
    private let storedSubtype: EventSubtype
    private let storedTimestamp: TimeInterval

    /// The event's type.
    open var type: EventType { storedType }
    /// The event's subtype.
    open var subtype: EventSubtype { storedSubtype }
    /// When the event happened, in seconds since boot (the clock of `CMLogItem.timestamp`).
    open var timestamp: TimeInterval { storedTimestamp }

    /// A touches event of subtype none at timestamp 0 (a test's subclass overrides what it needs).
    public override init() {
        storedType = .touches
        storedSubtype = .none
        storedTimestamp = 0
        super.init()
    }

    /// Creates an event (beyond Apple, whose events come only from UIKit).
    public init(type: EventType, subtype: EventSubtype, timestamp: TimeInterval) {
        storedType = type
        storedSubtype = subtype
        storedTimestamp = timestamp
        super.init()
    }
}

/// UIKit's old name of ``UIEvent/EventSubtype``.
public typealias UIEventSubtype = UIEvent.EventSubtype

/// An object that responds to events, as UIKit's `UIResponder`, reduced to its motion events:
/// subclass it and override ``motionBegan(_:with:)``, ``motionEnded(_:with:)`` and
/// ``motionCancelled(_:with:)``, then set it as a ``UIShakeMonitor``'s responder (UIKit's first
/// responder). The default implementations pass the event to ``next``, as UIKit's do.
/// Main-actor isolated, as UIKit's.
@MainActor
open class UIResponder: NSObject {
    /// Creates a responder.
    public override init() { super.init() }

    /// The next responder in the chain; `nil` here (override it to build a chain).
    open var next: UIResponder? { nil }

    /// A shake (``UIEvent/EventSubtype/motionShake``) began.
    open func motionBegan(_ motion: UIEvent.EventSubtype, with event: UIEvent?) {
        next?.motionBegan(motion, with: event)
    }

    /// The shake ended.
    open func motionEnded(_ motion: UIEvent.EventSubtype, with event: UIEvent?) {
        next?.motionEnded(motion, with: event)
    }

    /// The shake was cancelled (it went on too long).
    open func motionCancelled(_ motion: UIEvent.EventSubtype, with event: UIEvent?) {
        next?.motionCancelled(motion, with: event)
    }
}

/// Watches the accelerometer (50 Hz) for shakes and tells a responder, as UIKit tells the first
/// responder. Runs while ``responder`` is set; setting it to `nil` stops the accelerometer.
///
/// ## Threading
/// Set ``responder`` from any thread; the responder (held weakly) is called on the main actor with a
/// ``UIEvent`` of type ``UIEvent/EventType/motion``, so the main thread must run (an app's run loop,
/// or `async` main).
public final class UIShakeMonitor: @unchecked Sendable {
    // Sendable: the responder is a main-actor class held weakly behind the lock; the lock makes every
    // access to it exclusive.
    private let manager: CMMotionManager
    private struct State {
        weak var responder: UIResponder?
        var detector = ShakeDetector()
    }
    private let state = Locked(State())

    /// A monitor on the default motion source.
    public convenience init() { self.init(manager: CMMotionManager()) }

    /// A monitor on `source` (beyond Apple).
    public convenience init(source: any SensorSource) { self.init(manager: CMMotionManager(source: source)) }

    init(manager: CMMotionManager) { self.manager = manager }

    /// The detector's settings and state.
    public var settings: ShakeDetector {
        get { state.withLock { $0.detector } }
        set { state.withLock { $0.detector = newValue } }
    }

    /// Who hears about shakes. Setting it starts the accelerometer; `nil` stops it.
    public weak var responder: UIResponder? {
        get { state.withLock { $0.responder } }
        set {
            state.withLock { $0.responder = newValue }
            guard newValue != nil else { manager.stopAccelerometerUpdates(); return }
            manager.accelerometerUpdateInterval = 0.02
            let q = OperationQueue.serial()
            manager.startAccelerometerUpdates(to: q) { [weak self] data, _ in
                guard let self, let data else { return }
                let a = Vector3(data.acceleration.x, data.acceleration.y, data.acceleration.z)
                guard let event = self.state.withLock({ $0.detector.update(a, timestamp: data.timestamp) }) else { return }
                Task { @MainActor [weak self] in
                    guard let r = self?.responder else { return }
                    switch event {
                    case .began(let t): r.motionBegan(.motionShake, with: UIEvent(type: .motion, subtype: .motionShake, timestamp: t))
                    case .ended(let t): r.motionEnded(.motionShake, with: UIEvent(type: .motion, subtype: .motionShake, timestamp: t))
                    case .cancelled(let t): r.motionCancelled(.motionShake, with: UIEvent(type: .motion, subtype: .motionShake, timestamp: t))
                    }
                }
            }
        }
    }
}
