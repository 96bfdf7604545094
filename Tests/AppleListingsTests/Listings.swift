// The Swift listings of Apple's Core Motion guides ("Getting raw accelerometer events", "Getting raw
// gyroscope events", "Getting processed device-motion data", MotionGraphs, "Understanding reference
// frames and device attitude"), re-typed with only the import switched and `.default` as the run-loop
// mode. They are Swift 5 code, as published, so this target builds in Swift 5 language mode.
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif
import Foundation

/// Listing: accelerometer pulled by a timer on the current run loop.
final class AccelerometerListing {
    let motion = CMMotionManager()
    var timer: Timer?
    var readings: [(Double, Double, Double)] = []

    func startAccelerometers() {
        // Make sure the accelerometer hardware is available.
        if self.motion.isAccelerometerAvailable {
            self.motion.accelerometerUpdateInterval = 1.0 / 60.0  // 60 Hz
            self.motion.startAccelerometerUpdates()

            // Configure a timer to fetch the data.
            self.timer = Timer(fire: Date(), interval: (1.0 / 60.0), repeats: true, block: { (timer) in
                // Get the accelerometer data.
                if let data = self.motion.accelerometerData {
                    let x = data.acceleration.x
                    let y = data.acceleration.y
                    let z = data.acceleration.z
                    // Use the accelerometer data in your app.
                    self.readings.append((x, y, z))
                }
            })

            // Add the timer to the current run loop.
            RunLoop.current.add(self.timer!, forMode: .default)
        }
    }

    func stopAccelerometers() {
        self.timer?.invalidate()
        self.timer = nil
        self.motion.stopAccelerometerUpdates()
    }
}

/// Listing: MotionGraphs' accelerometer view, pushing to a queue at an interval taken from a slider.
final class MotionGraphsListing {
    let motionManager = CMMotionManager()
    let queue: OperationQueue
    var sliderValue: Float = 2  // the slider: interval = 10 ms + 5 ms × value
    var graphed: [[Double]] = []
    let lock = NSLock()

    init(queue: OperationQueue) {
        self.queue = queue
    }

    var updateInterval: TimeInterval { 0.01 + 0.005 * TimeInterval(sliderValue) }

    func startUpdates() {
        guard motionManager.isAccelerometerAvailable else { return }
        motionManager.accelerometerUpdateInterval = updateInterval
        motionManager.startAccelerometerUpdates(to: queue) { accelerometerData, error in
            guard let accelerometerData = accelerometerData else { return }
            let acceleration = [accelerometerData.acceleration.x, accelerometerData.acceleration.y, accelerometerData.acceleration.z]
            self.lock.lock()
            self.graphed.append(acceleration)
            self.lock.unlock()
        }
    }

    func stopUpdates() {
        guard motionManager.isAccelerometerAvailable else { return }
        motionManager.stopAccelerometerUpdates()
    }
}

/// Listing: gyroscope pushed to a queue.
final class GyroListing {
    let motion = CMMotionManager()
    let queue = OperationQueue()
    var rates: [Double] = []
    let lock = NSLock()

    func startGyros() {
        if motion.isGyroAvailable {
            self.motion.gyroUpdateInterval = 1.0 / 60.0
            self.motion.startGyroUpdates(to: self.queue) { (data, error) in
                if let data = data {
                    let x = data.rotationRate.x
                    let y = data.rotationRate.y
                    let z = data.rotationRate.z
                    self.lock.lock()
                    self.rates.append((x * x + y * y + z * z).squareRoot())
                    self.lock.unlock()
                }
            }
        }
    }

    func stopGyros() {
        self.motion.stopGyroUpdates()
    }
}

/// Listing: device motion pulled by a timer, in the magnetic-north frame.
final class DeviceMotionListing {
    let motion = CMMotionManager()
    var timer: Timer?
    var attitudes: [(pitch: Double, roll: Double, yaw: Double)] = []

    func startDeviceMotion() {
        if motion.isDeviceMotionAvailable {
            self.motion.deviceMotionUpdateInterval = 1.0 / 60.0
            self.motion.showsDeviceMovementDisplay = true
            self.motion.startDeviceMotionUpdates(using: .xMagneticNorthZVertical)

            // Configure a timer to fetch the motion data.
            self.timer = Timer(fire: Date(), interval: (1.0 / 60.0), repeats: true, block: { (timer) in
                if let data = self.motion.deviceMotion {
                    // Get the attitude relative to the magnetic north reference frame.
                    let x = data.attitude.pitch
                    let y = data.attitude.roll
                    let z = data.attitude.yaw
                    // Use the motion data in your app.
                    self.attitudes.append((x, y, z))
                }
            })

            // Add the timer to the current run loop.
            RunLoop.current.add(self.timer!, forMode: RunLoop.Mode.default)
        }
    }
}

/// Listing: device motion handled on a queue.
final class QueuedDeviceMotionListing {
    let motion = CMMotionManager()
    let queue = OperationQueue()
    var headings: [Double] = []
    let lock = NSLock()

    func startQueuedUpdates() {
        if motion.isDeviceMotionAvailable {
            self.motion.deviceMotionUpdateInterval = 1.0 / 60.0
            self.motion.showsDeviceMovementDisplay = true
            self.motion.startDeviceMotionUpdates(using: .xMagneticNorthZVertical,
                                                 to: self.queue, withHandler: { (data, error) in
                // Make sure the data is valid before accessing it.
                if let validData = data {
                    // Get the attitude relative to the magnetic north reference frame.
                    let roll = validData.attitude.roll
                    let pitch = validData.attitude.pitch
                    let yaw = validData.attitude.yaw
                    _ = (roll, pitch, yaw)
                    // Use the motion data in your app.
                    self.lock.lock()
                    self.headings.append(validData.heading)
                    self.lock.unlock()
                }
            })
        }
    }
}

/// Listing: attitude relative to a reference attitude taken earlier.
final class ReferenceAttitudeListing {
    let motion = CMMotionManager()
    var referenceAttitude: CMAttitude?

    func captureReference() {
        referenceAttitude = motion.deviceMotion?.attitude.copy() as? CMAttitude
    }

    func relativeAttitude() -> CMAttitude? {
        guard let attitude = motion.deviceMotion?.attitude else { return nil }
        // Make the attitude relative to the reference attitude.
        if let ref = referenceAttitude {
            attitude.multiply(byInverseOf: ref)
        }
        return attitude
    }
}
