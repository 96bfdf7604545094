import Foundation
import MotionSources
import MotionFusion

/// The device, as UIKit's `UIDevice`: here, its physical orientation and the notifications about it.
///
/// ```swift
/// UIDevice.current.beginGeneratingDeviceOrientationNotifications()
/// NotificationCenter.default.addObserver(forName: UIDevice.orientationDidChangeNotification, object: nil, queue: .main) { _ in
///     print(UIDevice.current.orientation)
/// }
/// ```
///
/// ``orientation`` is ``UIDeviceOrientation/unknown`` until ``beginGeneratingDeviceOrientationNotifications()``
/// is called and a decisive reading arrives, and again after the matching
/// ``endGeneratingDeviceOrientationNotifications()``. Begin and end nest: the accelerometer runs
/// (at 10 Hz) while more begins than ends were called. The decision is ``DeviceOrientationEstimator``'s.
///
/// ## Threading
/// Every member may be called from any thread. ``orientationDidChangeNotification`` is posted on
/// the main queue, after ``orientation`` has changed; ``orientationUpdates`` yields from the
/// accelerometer's private queue, in order.
open class UIDevice: NSObject {
    // Not `Sendable` (see Delivery/Unchecked.swift): an `open` class declaring `@unchecked Sendable`
    // makes every subclass an app's tests write warn in Swift 6 ("must restate inherited '@unchecked
    // Sendable' conformance"). UIKit's is `@MainActor`, which this one cannot be while the package uses
    // it off the main actor; its stored state is immutable or behind a `Locked`, so it is thread-safe.
    /// Posted on `NotificationCenter.default` (object: the device) when ``orientation`` changes.
    public static let orientationDidChangeNotification = Notification.Name("UIDeviceOrientationDidChangeNotification")

    /// The device of the process, on the default motion source (`COREMOTION_SOURCE`, else the first
    /// motion hardware found).
    open class var current: UIDevice { shared.value }

    // Thread-safe by construction (see the note on the class).
    private static let shared = UncheckedSendable(UIDevice(manager: CMMotionManager()))

    /// Seconds between accelerometer readings while notifications are generated. Default 0.1.
    public static let orientationUpdateInterval: TimeInterval = 0.1

    private let manager: CMMotionManager
    private struct State {
        var beginCount = 0
        var estimator = DeviceOrientationEstimator()
        var current: UIDeviceOrientation = .unknown
        var generation = 0
        var queue: OperationQueue?
        var continuations: [UUID: AsyncStream<UIDeviceOrientation>.Continuation] = [:]
    }
    private let state = Locked(State())

    /// Creates a device on the default motion source, as UIKit's `init()` (a test's subclass calls
    /// `super.init()`; apps use ``current``).
    public override init() {
        manager = CMMotionManager()
        super.init()
    }

    /// Creates a device reading `source` (beyond Apple; for tests and for `--source`).
    public convenience init(source: any SensorSource) {
        self.init(manager: CMMotionManager(source: source))
    }

    init(manager: CMMotionManager) {
        self.manager = manager
        super.init()
    }

    /// The device's name: on Linux, the host name.
    open var name: String { ProcessInfo.processInfo.hostName }

    /// The model: `"Linux"` (UIKit's is `"iPhone"`, `"iPad"`, …).
    open var model: String { "Linux" }

    /// The model, localized: `"Linux"`.
    open var localizedModel: String { model }

    /// The operating system's name: `"Linux"` (UIKit's is `"iOS"`).
    open var systemName: String { "Linux" }

    /// The operating system's version: the kernel release (`uname -r`), such as `"6.12.48"`.
    open var systemVersion: String {
        var info = utsname()
        guard uname(&info) == 0 else { return "" }
        return withUnsafeBytes(of: &info.release) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    /// The physical orientation; ``UIDeviceOrientation/unknown`` unless notifications are being generated.
    open var orientation: UIDeviceOrientation { state.withLock { $0.current } }

    /// `true` while more begins than ends have been called.
    open var isGeneratingDeviceOrientationNotifications: Bool { state.withLock { $0.beginCount > 0 } }

    /// Starts the accelerometer (on the first call) and the notifications. Calls nest.
    open func beginGeneratingDeviceOrientationNotifications() {
        let start = state.withLock { s -> Int? in
            s.beginCount += 1
            guard s.beginCount == 1 else { return nil }
            s.generation += 1
            return s.generation
        }
        guard let gen = start else { return }
        let q = OperationQueue.serial(name: "UIDevice.orientation")
        state.withLock { $0.queue = q }
        manager.accelerometerUpdateInterval = Self.orientationUpdateInterval
        manager.startAccelerometerUpdates(to: q) { [weak self] data, _ in
            guard let self, let data else { return }
            self.receive(Vector3(data.acceleration.x, data.acceleration.y, data.acceleration.z), generation: gen)
        }
    }

    /// Balances one ``beginGeneratingDeviceOrientationNotifications()``; the last one stops the
    /// accelerometer and ``orientation`` becomes ``UIDeviceOrientation/unknown``. Extra calls are ignored.
    open func endGeneratingDeviceOrientationNotifications() {
        let stop = state.withLock { s -> Bool in
            guard s.beginCount > 0 else { return false }
            s.beginCount -= 1
            guard s.beginCount == 0 else { return false }
            s.generation += 1
            s.estimator.reset()
            s.current = .unknown
            return true
        }
        if stop { manager.stopAccelerometerUpdates() }
    }

    /// Orientation changes as an async sequence (beyond Apple): yields each new orientation.
    /// Does not begin notifications by itself.
    public var orientationUpdates: AsyncStream<UIDeviceOrientation> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let id = UUID()
            state.withLock { $0.continuations[id] = continuation }
            // A device is thread-safe by construction (see the note on the class).
            let device = UncheckedWeak(self)
            continuation.onTermination = { _ in
                guard let self = device.value else { return }
                _ = self.state.withLock { $0.continuations.removeValue(forKey: id) }
            }
        }
    }

    private func receive(_ a: Vector3, generation gen: Int) {
        let changed = state.withLock { s -> (UIDeviceOrientation, [AsyncStream<UIDeviceOrientation>.Continuation])? in
            guard gen == s.generation else { return nil }
            let before = s.current
            let after = s.estimator.update(a)
            guard after != before else { return nil }
            s.current = after
            return (after, Array(s.continuations.values))
        }
        guard let (o, conts) = changed else { return }
        for c in conts { c.yield(o) }
        // A device is thread-safe by construction (see the note on the class).
        let device = UncheckedWeak(self)
        OperationQueue.main.addOperation {
            NotificationCenter.default.post(name: UIDevice.orientationDidChangeNotification, object: device.value)
        }
    }
}
