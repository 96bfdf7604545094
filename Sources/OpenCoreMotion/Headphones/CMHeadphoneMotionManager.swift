import Foundation

/// Handler of headphone device motion: a sample, or an error in ``CMErrorDomain``.
public typealias CMHeadphoneDeviceMotionHandler = (CMDeviceMotion?, (any Error)?) -> Void

/// Hears when motion-capable headphones connect and disconnect, as Core Motion's
/// `CMHeadphoneMotionManagerDelegate`. Both methods have empty default implementations (they are
/// optional in Apple's protocol).
public protocol CMHeadphoneMotionManagerDelegate: AnyObject {
    /// Headphones that report motion connected.
    func headphoneMotionManagerDidConnect(_ manager: CMHeadphoneMotionManager)
    /// The headphones disconnected.
    func headphoneMotionManagerDidDisconnect(_ manager: CMHeadphoneMotionManager)
}

extension CMHeadphoneMotionManagerDelegate {
    /// Does nothing.
    public func headphoneMotionManagerDidConnect(_ manager: CMHeadphoneMotionManager) {}
    /// Does nothing.
    public func headphoneMotionManagerDidDisconnect(_ manager: CMHeadphoneMotionManager) {}
}

/// Head motion from headphones, as Core Motion's `CMHeadphoneMotionManager`.
///
/// ## On Linux
/// No headphone on Linux reports its motion to the system (AirPods' head tracking travels over
/// Apple's private Bluetooth protocol), so this manager compiles and reports unavailable:
/// ``isDeviceMotionAvailable`` is `false`, ``authorizationStatus()`` is
/// ``CMAuthorizationStatus/restricted``, ``deviceMotion`` stays `nil`, the delegate is never called,
/// and ``startDeviceMotionUpdates(to:withHandler:)`` delivers `CMErrorNotAvailable` (109) once to its
/// handler. The class and its members are `open`, so tests can subclass it as on Apple platforms.
///
/// ## Threading
/// Every member may be called from any thread; handlers run on the queue given.
open class CMHeadphoneMotionManager: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its state is behind a `Locked`, so sharing it between threads is safe.
    private struct State {
        weak var delegate: (any CMHeadphoneMotionManagerDelegate)?
        var connectionStatusActive = false
    }
    private let state = Locked(State())

    /// Creates a manager.
    public override init() { super.init() }

    /// ``CMAuthorizationStatus/restricted``: there is no headphone motion to authorise on Linux.
    open class func authorizationStatus() -> CMAuthorizationStatus { .restricted }

    /// Hears connections and disconnections (never, on Linux). Held weakly.
    open weak var delegate: (any CMHeadphoneMotionManagerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// `false`: no headphone reports motion on Linux.
    open var isDeviceMotionAvailable: Bool { false }

    /// `false`: updates never run.
    open var isDeviceMotionActive: Bool { false }

    /// Always `nil`.
    open var deviceMotion: CMDeviceMotion? { nil }

    /// Whether connection status updates were started (they never report anything on Linux).
    open var isConnectionStatusActive: Bool { state.withLock { $0.connectionStatusActive } }

    /// Does nothing: there is no headphone motion (``deviceMotion`` stays `nil`).
    open func startDeviceMotionUpdates() {}

    /// Delivers `CMErrorNotAvailable` (109) once to `handler` on `queue`; no samples follow.
    open func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMHeadphoneDeviceMotionHandler) {
        nonisolated(unsafe) let handler = handler
        queue.addOperation {
            handler(nil, NSError.coreMotion(CMErrorNotAvailable, "no headphone reports its motion on Linux"))
        }
    }

    /// Does nothing (updates never run).
    open func stopDeviceMotionUpdates() {}

    /// Marks connection status updates active; no connection is ever reported on Linux.
    open func startConnectionStatusUpdates() {
        state.withLock { $0.connectionStatusActive = true }
    }

    /// Ends connection status updates.
    open func stopConnectionStatusUpdates() {
        state.withLock { $0.connectionStatusActive = false }
    }
}

/// Activity from headphones' motion, as Core Motion's `CMHeadphoneActivityManager`.
///
/// ## On Linux
/// No headphone reports its motion on Linux, so this manager compiles and reports unavailable:
/// ``isActivityAvailable`` and ``isStatusAvailable`` are `false`, ``authorizationStatus()`` is
/// ``CMAuthorizationStatus/restricted``, ``startActivityUpdates(to:withHandler:)`` delivers
/// `CMErrorNotAvailable` (109) once, and ``startStatusUpdates(to:withHandler:)`` reports
/// ``Status/disconnected`` once with that error. `open`, so tests can subclass it.
///
/// ## Threading
/// Every member may be called from any thread; handlers run on the queue given.
open class CMHeadphoneActivityManager: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: it has no mutable state.

    /// Whether compatible headphones are connected; raw values are Apple's.
    public enum Status: Int, Sendable {
        /// The headphones disconnected.
        case disconnected = 0
        /// A compatible set of headphones is connected.
        case connected = 1
    }

    /// Handler of headphone activity: an activity, or an error in ``CMErrorDomain``.
    public typealias ActivityHandler = (CMMotionActivity?, (any Error)?) -> Void
    /// Handler of headphone connection status, with an error in ``CMErrorDomain`` when there is one.
    public typealias StatusHandler = (Status, (any Error)?) -> Void

    /// Creates a manager.
    public override init() { super.init() }

    /// ``CMAuthorizationStatus/restricted``: there is no headphone activity to authorise on Linux.
    open class func authorizationStatus() -> CMAuthorizationStatus { .restricted }

    /// `false` on Linux.
    open var isActivityAvailable: Bool { false }
    /// `false`: updates never run.
    open var isActivityActive: Bool { false }
    /// `false` on Linux.
    open var isStatusAvailable: Bool { false }
    /// `false`: updates never run.
    open var isStatusActive: Bool { false }

    /// Delivers `CMErrorNotAvailable` (109) once to `handler` on `queue`.
    open func startActivityUpdates(to queue: OperationQueue, withHandler handler: @escaping ActivityHandler) {
        nonisolated(unsafe) let handler = handler
        queue.addOperation {
            handler(nil, NSError.coreMotion(CMErrorNotAvailable, "no headphone reports its motion on Linux"))
        }
    }

    /// Does nothing (updates never run).
    open func stopActivityUpdates() {}

    /// Reports ``Status/disconnected`` once, with `CMErrorNotAvailable` (109), to `handler` on `queue`.
    open func startStatusUpdates(to queue: OperationQueue, withHandler handler: @escaping StatusHandler) {
        nonisolated(unsafe) let handler = handler
        queue.addOperation {
            handler(.disconnected, NSError.coreMotion(CMErrorNotAvailable, "no headphone reports its motion on Linux"))
        }
    }

    /// Does nothing (updates never run).
    open func stopStatusUpdates() {}
}
