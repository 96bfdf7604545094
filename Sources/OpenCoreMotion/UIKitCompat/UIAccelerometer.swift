import Foundation
import MotionSources

/// An acceleration value in g, as UIKit's `UIAccelerationValue`.
public typealias UIAccelerationValue = Double

/// One accelerometer reading, as UIKit's deprecated `UIAcceleration`: g along each axis (Core
/// Motion's sign: face up reads z ≈ −1) and the time in seconds since boot. `open`, as UIKit's, so a
/// test can subclass it and override the values.
open class UIAcceleration: NSObject {
    // Not `Sendable`, so that a test's subclass need not restate it (see Delivery/Unchecked.swift); its
    // stored state is immutable, so sharing it between threads is safe.
    private let storedX: UIAccelerationValue
    private let storedY: UIAccelerationValue
    private let storedZ: UIAccelerationValue
    private let storedTimestamp: TimeInterval

    /// Along x, in g.
    open var x: UIAccelerationValue { storedX }
    /// Along y, in g.
    open var y: UIAccelerationValue { storedY }
    /// Along z, in g.
    open var z: UIAccelerationValue { storedZ }
    /// Seconds since boot (`CLOCK_MONOTONIC`), like `CMLogItem.timestamp`.
    open var timestamp: TimeInterval { storedTimestamp }

    /// A zero reading at timestamp 0.
    public override init() {
        storedX = 0
        storedY = 0
        storedZ = 0
        storedTimestamp = 0
        super.init()
    }

    /// Creates a reading (beyond Apple).
    public init(x: UIAccelerationValue, y: UIAccelerationValue, z: UIAccelerationValue, timestamp: TimeInterval) {
        storedX = x
        storedY = y
        storedZ = z
        storedTimestamp = timestamp
        super.init()
    }

    open override var description: String { "UIAcceleration(x: \(x), y: \(y), z: \(z), timestamp: \(timestamp))" }
}

/// Receives readings from ``UIAccelerometer``, on the main queue.
public protocol UIAccelerometerDelegate: AnyObject {
    /// One reading.
    func accelerometer(_ accelerometer: UIAccelerometer, didAccelerate acceleration: UIAcceleration)
}

/// UIKit's deprecated `UIAccelerometer`, for code written against it: set a ``delegate`` and
/// readings arrive on the main queue every ``updateInterval`` seconds. Setting the delegate to `nil`
/// stops the hardware.
///
/// ## Threading
/// Set ``delegate`` and ``updateInterval`` from any thread; the delegate is called on the main
/// queue (`OperationQueue.main`), so the main thread must run its queue (an app's run loop, or
/// `async` main). The delegate is held weakly, as in UIKit.
open class UIAccelerometer: NSObject {
    // Not `Sendable`, so that a test's subclass need not restate it (see Delivery/Unchecked.swift), yet
    // thread-safe: the delegate (held weakly, called on the main queue as UIKit does) and the interval
    // are behind a lock.
    private static let sharedInstance = UncheckedSendable(UIAccelerometer(manager: CMMotionManager()))

    /// The shared accelerometer, on the default motion source.
    open class func shared() -> UIAccelerometer { sharedInstance.value }

    private let manager: CMMotionManager
    private struct State {
        weak var delegate: (any UIAccelerometerDelegate)?
        var interval: TimeInterval = 0.1
    }
    private let state = Locked(State())

    /// An accelerometer on `source` (beyond Apple; for tests and `--source`).
    public convenience init(source: any SensorSource) {
        self.init(manager: CMMotionManager(source: source))
    }

    init(manager: CMMotionManager) {
        self.manager = manager
        super.init()
    }

    /// Seconds between readings, clamped to what the source supports. Default 0.1.
    open var updateInterval: TimeInterval {
        get { state.withLock { $0.interval } }
        set {
            state.withLock { $0.interval = newValue }
            manager.accelerometerUpdateInterval = newValue
        }
    }

    /// Receives the readings. Setting it starts the accelerometer; setting `nil` stops it.
    open weak var delegate: (any UIAccelerometerDelegate)? {
        get { state.withLock { $0.delegate } }
        set {
            state.withLock { $0.delegate = newValue }
            if newValue == nil {
                manager.stopAccelerometerUpdates()
            } else {
                manager.accelerometerUpdateInterval = updateInterval
                manager.startAccelerometerUpdates(to: .main) { [weak self] data, _ in
                    guard let self, let data, let d = self.delegate else { return }
                    d.accelerometer(self, didAccelerate: UIAcceleration(x: data.acceleration.x, y: data.acceleration.y,
                                                                        z: data.acceleration.z, timestamp: data.timestamp))
                }
            }
        }
    }

    /// `true` while a delegate is set and readings flow (beyond Apple).
    public var isActive: Bool { manager.isAccelerometerActive }
}
