import Foundation
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

// App code under test, as an iOS app would write it: view models that take their Core Motion objects
// (or their class, for the class-level availability checks) by injection.

/// Shows the device's tilt; takes the real manager in the app, a subclass mock in tests.
final class TiltViewModel {
    private let motionManager: CMMotionManager
    private(set) var roll = 0.0
    private(set) var pitch = 0.0
    private(set) var yaw = 0.0
    private(set) var isTracking = false
    private(set) var lastError: Error?
    private(set) var unavailable = false

    init(motionManager: CMMotionManager = CMMotionManager()) {
        self.motionManager = motionManager
    }

    func start() {
        guard motionManager.isDeviceMotionAvailable else {
            unavailable = true
            return
        }
        motionManager.deviceMotionUpdateInterval = 1.0 / 60.0
        motionManager.startDeviceMotionUpdates(to: .main) { [weak self] motion, error in
            guard let self else { return }
            if let error {
                self.lastError = error
                return
            }
            guard let motion else { return }
            self.apply(motion.attitude)
        }
        isTracking = true
    }

    /// Reads the latest sample without a handler (pull model).
    func refresh() {
        if let attitude = motionManager.deviceMotion?.attitude { apply(attitude) }
    }

    func stop() {
        motionManager.stopDeviceMotionUpdates()
        isTracking = false
    }

    private func apply(_ attitude: CMAttitude) {
        roll = attitude.roll
        pitch = attitude.pitch
        yaw = attitude.yaw
    }
}

/// The same screen written against a protocol seam instead of a subclass.
final class ProtocolTiltViewModel {
    private let provider: MotionProviding
    private(set) var degreesOfRoll = 0.0
    private(set) var verticalAcceleration = 0.0

    init(provider: MotionProviding) {
        self.provider = provider
    }

    func start() {
        guard provider.isDeviceMotionAvailable else { return }
        provider.deviceMotionUpdateInterval = 0.1
        provider.startDeviceMotionUpdates(to: .main) { [weak self] motion, _ in
            guard let self, let motion else { return }
            self.degreesOfRoll = motion.attitude.roll * 180 / .pi
            self.verticalAcceleration = motion.userAcceleration.z
        }
    }

    func stop() {
        provider.stopDeviceMotionUpdates()
    }
}

/// Counts steps; the pedometer's class is injected for the class-level availability check.
final class StepsViewModel {
    private let pedometer: CMPedometer
    private let pedometerType: CMPedometer.Type
    private(set) var steps = 0
    private(set) var distanceText = "–"
    private(set) var cadence: Double?
    private(set) var message: String?

    init(pedometer: CMPedometer, pedometerType: CMPedometer.Type = CMPedometer.self) {
        self.pedometer = pedometer
        self.pedometerType = pedometerType
    }

    func start(from date: Date) {
        guard pedometerType.isStepCountingAvailable() else {
            message = "Step counting is not available on this device."
            return
        }
        guard pedometerType.authorizationStatus() != .denied else {
            message = "Motion access was denied."
            return
        }
        pedometer.startUpdates(from: date) { [weak self] data, error in
            guard let self else { return }
            if let error {
                self.message = error.localizedDescription
                return
            }
            guard let data else { return }
            self.steps = data.numberOfSteps.intValue
            if self.pedometerType.isDistanceAvailable(), let distance = data.distance {
                self.distanceText = String(format: "%.0f m", distance.doubleValue)
            }
            self.cadence = data.currentCadence?.doubleValue
        }
    }

    func loadToday(now: Date) {
        let start = Calendar.current.startOfDay(for: now)
        pedometer.queryPedometerData(from: start, to: now) { [weak self] data, error in
            guard let self else { return }
            if let data { self.steps = data.numberOfSteps.intValue } else { self.message = error?.localizedDescription }
        }
    }

    func stop() {
        pedometer.stopUpdates()
    }
}

/// Shows the height climbed.
final class AltitudeViewModel {
    private let altimeter: CMAltimeter
    private let altimeterType: CMAltimeter.Type
    private(set) var metres = 0.0
    private(set) var kilopascals = 0.0
    private(set) var available = true

    init(altimeter: CMAltimeter, altimeterType: CMAltimeter.Type = CMAltimeter.self) {
        self.altimeter = altimeter
        self.altimeterType = altimeterType
    }

    func start() {
        available = altimeterType.isRelativeAltitudeAvailable()
        guard available else { return }
        altimeter.startRelativeAltitudeUpdates(to: .main) { [weak self] data, _ in
            guard let self, let data else { return }
            self.metres = data.relativeAltitude.doubleValue
            self.kilopascals = data.pressure.doubleValue
        }
    }

    func stop() {
        altimeter.stopRelativeAltitudeUpdates()
    }
}

/// Names what the user is doing.
final class ActivityViewModel {
    private let manager: CMMotionActivityManager
    private let managerType: CMMotionActivityManager.Type
    private(set) var label = "Unknown"

    init(manager: CMMotionActivityManager, managerType: CMMotionActivityManager.Type = CMMotionActivityManager.self) {
        self.manager = manager
        self.managerType = managerType
    }

    func start() {
        guard managerType.isActivityAvailable() else {
            label = "Unavailable"
            return
        }
        manager.startActivityUpdates(to: .main) { [weak self] activity in
            guard let self, let activity else { return }
            guard activity.confidence != .low else { return }
            if activity.walking {
                self.label = "Walking"
            } else if activity.running {
                self.label = "Running"
            } else if activity.automotive {
                self.label = "Driving"
            } else if activity.stationary {
                self.label = "Still"
            }
        }
    }

    func stop() {
        manager.stopActivityUpdates()
    }
}

/// Detects a face-down phone from the accelerometer.
final class FaceDownDetector {
    private let motionManager: CMMotionManager
    private(set) var isFaceDown = false

    init(motionManager: CMMotionManager) {
        self.motionManager = motionManager
    }

    func start() {
        guard motionManager.isAccelerometerAvailable else { return }
        motionManager.accelerometerUpdateInterval = 0.2
        motionManager.startAccelerometerUpdates(to: OperationQueue()) { [weak self] data, _ in
            guard let self, let data else { return }
            self.isFaceDown = data.acceleration.z > 0.8
        }
    }
}
