import Foundation
import MotionSources
import MotionFusion

/// Receives shake events, as UIKit's `UIResponder` motion methods. Called on the main queue.
public protocol UIMotionResponder: AnyObject {
    /// A shake began.
    func motionBegan(_ motion: UIEventSubtype, timestamp: TimeInterval)
    /// The shake ended.
    func motionEnded(_ motion: UIEventSubtype, timestamp: TimeInterval)
    /// The shake was cancelled (it went on too long).
    func motionCancelled(_ motion: UIEventSubtype, timestamp: TimeInterval)
}

extension UIMotionResponder {
    public func motionBegan(_ motion: UIEventSubtype, timestamp: TimeInterval) {}
    public func motionEnded(_ motion: UIEventSubtype, timestamp: TimeInterval) {}
    public func motionCancelled(_ motion: UIEventSubtype, timestamp: TimeInterval) {}
}

/// Watches the accelerometer (50 Hz) for shakes and tells a responder, as UIKit tells the first
/// responder. Runs while ``responder`` is set; setting it to `nil` stops the accelerometer.
///
/// ## Threading
/// Set ``responder`` from any thread; the responder (held weakly) is called on the main queue.
public final class UIShakeMonitor: @unchecked Sendable {
    // Sendable: UIKit's responder is a non-Sendable class reference, held weakly here and only called on
    // the main queue as UIKit does; the lock makes every access to it exclusive, which the compiler
    // cannot see through the non-Sendable existential.
    private let manager: CMMotionManager
    private struct State {
        weak var responder: (any UIMotionResponder)?
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
    public weak var responder: (any UIMotionResponder)? {
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
                OperationQueue.main.addOperation { [weak self] in
                    guard let r = self?.responder else { return }
                    switch event {
                    case .began(let t): r.motionBegan(.motionShake, timestamp: t)
                    case .ended(let t): r.motionEnded(.motionShake, timestamp: t)
                    case .cancelled(let t): r.motionCancelled(.motionShake, timestamp: t)
                    }
                }
            }
        }
    }
}
