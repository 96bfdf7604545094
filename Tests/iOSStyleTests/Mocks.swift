import Foundation
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

// Test doubles written the way iOS test suites write them: subclasses of the Core Motion classes that
// override what the code under test reads, plus a protocol the real manager is extended to conform to.
// Nothing here uses an API beyond Apple's.

// MARK: - Samples

final class MockAttitude: CMAttitude {
    private let stubRoll: Double
    private let stubPitch: Double
    private let stubYaw: Double

    init(roll: Double, pitch: Double, yaw: Double) {
        stubRoll = roll
        stubPitch = pitch
        stubYaw = yaw
        super.init()
    }

    required init?(coder: NSCoder) {
        stubRoll = 0
        stubPitch = 0
        stubYaw = 0
        super.init(coder: coder)
    }

    override var roll: Double { stubRoll }
    override var pitch: Double { stubPitch }
    override var yaw: Double { stubYaw }
}

final class MockDeviceMotion: CMDeviceMotion {
    private let stubAttitude: CMAttitude
    private let stubUserAcceleration: CMAcceleration
    private let stubGravity: CMAcceleration
    private let stubRotationRate: CMRotationRate
    private let stubHeading: Double
    private let stubTimestamp: TimeInterval

    init(attitude: CMAttitude = MockAttitude(roll: 0, pitch: 0, yaw: 0),
         userAcceleration: CMAcceleration = CMAcceleration(),
         gravity: CMAcceleration = CMAcceleration(x: 0, y: 0, z: -1),
         rotationRate: CMRotationRate = CMRotationRate(),
         heading: Double = 0,
         timestamp: TimeInterval = 0) {
        stubAttitude = attitude
        stubUserAcceleration = userAcceleration
        stubGravity = gravity
        stubRotationRate = rotationRate
        stubHeading = heading
        stubTimestamp = timestamp
        super.init()
    }

    required init?(coder: NSCoder) {
        stubAttitude = MockAttitude(roll: 0, pitch: 0, yaw: 0)
        stubUserAcceleration = CMAcceleration()
        stubGravity = CMAcceleration()
        stubRotationRate = CMRotationRate()
        stubHeading = 0
        stubTimestamp = 0
        super.init(coder: coder)
    }

    override var attitude: CMAttitude { stubAttitude }
    override var userAcceleration: CMAcceleration { stubUserAcceleration }
    override var gravity: CMAcceleration { stubGravity }
    override var rotationRate: CMRotationRate { stubRotationRate }
    override var heading: Double { stubHeading }
    override var timestamp: TimeInterval { stubTimestamp }
}

final class MockAccelerometerData: CMAccelerometerData {
    private let stub: CMAcceleration

    init(x: Double, y: Double, z: Double) {
        stub = CMAcceleration(x: x, y: y, z: z)
        super.init()
    }

    required init?(coder: NSCoder) {
        stub = CMAcceleration()
        super.init(coder: coder)
    }

    override var acceleration: CMAcceleration { stub }
}

final class MockGyroData: CMGyroData {
    var stubRate = CMRotationRate()
    override var rotationRate: CMRotationRate { stubRate }
}

final class MockMagnetometerData: CMMagnetometerData {
    var stubField = CMMagneticField()
    override var magneticField: CMMagneticField { stubField }
}

final class MockPedometerData: CMPedometerData {
    var stubSteps: NSNumber = 0
    var stubDistance: NSNumber?
    var stubCadence: NSNumber?

    override var numberOfSteps: NSNumber { stubSteps }
    override var distance: NSNumber? { stubDistance }
    override var currentCadence: NSNumber? { stubCadence }
}

final class MockAltitudeData: CMAltitudeData {
    var stubRelativeAltitude: NSNumber = 0
    var stubPressure: NSNumber = 101.325

    override var relativeAltitude: NSNumber { stubRelativeAltitude }
    override var pressure: NSNumber { stubPressure }
}

final class MockMotionActivity: CMMotionActivity {
    var stubWalking = false
    var stubRunning = false
    var stubAutomotive = false
    var stubStationary = false
    var stubConfidence: CMMotionActivityConfidence = .low

    override var walking: Bool { stubWalking }
    override var running: Bool { stubRunning }
    override var automotive: Bool { stubAutomotive }
    override var stationary: Bool { stubStationary }
    override var confidence: CMMotionActivityConfidence { stubConfidence }
}

// MARK: - Managers

final class MockMotionManager: CMMotionManager {
    var stubDeviceMotionAvailable = true
    var stubAccelerometerAvailable = true
    var stubDeviceMotion: CMDeviceMotion?
    private(set) var startDeviceMotionCallCount = 0
    private(set) var stopDeviceMotionCallCount = 0
    private(set) var startAccelerometerCallCount = 0
    private var recordedDeviceMotionInterval: TimeInterval = 0
    private var deviceMotionHandler: CMDeviceMotionHandler?
    private var accelerometerHandler: CMAccelerometerHandler?

    override init() {
        super.init()
    }

    override var isDeviceMotionAvailable: Bool { stubDeviceMotionAvailable }
    override var isAccelerometerAvailable: Bool { stubAccelerometerAvailable }
    override var isDeviceMotionActive: Bool { deviceMotionHandler != nil }
    override var deviceMotion: CMDeviceMotion? { stubDeviceMotion }

    override var deviceMotionUpdateInterval: TimeInterval {
        get { recordedDeviceMotionInterval }
        set { recordedDeviceMotionInterval = newValue }
    }

    override func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMDeviceMotionHandler) {
        startDeviceMotionCallCount += 1
        deviceMotionHandler = handler
    }

    override func stopDeviceMotionUpdates() {
        stopDeviceMotionCallCount += 1
        deviceMotionHandler = nil
    }

    override func startAccelerometerUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAccelerometerHandler) {
        startAccelerometerCallCount += 1
        accelerometerHandler = handler
    }

    override func stopAccelerometerUpdates() {
        accelerometerHandler = nil
    }

    func send(_ motion: CMDeviceMotion?, error: Error? = nil) {
        deviceMotionHandler?(motion, error)
    }

    func sendAccelerometer(_ data: CMAccelerometerData?, error: Error? = nil) {
        accelerometerHandler?(data, error)
    }
}

final class MockPedometer: CMPedometer {
    nonisolated(unsafe) static var stubStepCountingAvailable = true
    nonisolated(unsafe) static var stubDistanceAvailable = true
    nonisolated(unsafe) static var stubAuthorizationStatus: CMAuthorizationStatus = .authorized

    private var updatesHandler: CMPedometerHandler?
    private(set) var startDate: Date?
    var stubQueryResult: CMPedometerData?

    override class func isStepCountingAvailable() -> Bool { stubStepCountingAvailable }
    override class func isDistanceAvailable() -> Bool { stubDistanceAvailable }
    override class func authorizationStatus() -> CMAuthorizationStatus { stubAuthorizationStatus }

    override func startUpdates(from start: Date, withHandler handler: @escaping CMPedometerHandler) {
        startDate = start
        updatesHandler = handler
    }

    override func stopUpdates() {
        updatesHandler = nil
    }

    override func queryPedometerData(from start: Date, to end: Date, withHandler handler: @escaping CMPedometerHandler) {
        handler(stubQueryResult, stubQueryResult == nil ? NSError(domain: CMErrorDomain, code: Int(CMErrorMotionActivityNotAvailable.rawValue)) : nil)
    }

    func send(_ data: CMPedometerData?, error: Error? = nil) {
        updatesHandler?(data, error)
    }
}

final class MockAltimeter: CMAltimeter {
    nonisolated(unsafe) static var stubAvailable = true
    private var handler: CMAltitudeHandler?

    override class func isRelativeAltitudeAvailable() -> Bool { stubAvailable }

    override func startRelativeAltitudeUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAltitudeHandler) {
        self.handler = handler
    }

    override func stopRelativeAltitudeUpdates() {
        handler = nil
    }

    func send(_ data: CMAltitudeData?, error: Error? = nil) {
        handler?(data, error)
    }
}

final class MockActivityManager: CMMotionActivityManager {
    nonisolated(unsafe) static var stubAvailable = true
    private var handler: CMMotionActivityHandler?
    private(set) var stopped = false

    override class func isActivityAvailable() -> Bool { stubAvailable }

    override func startActivityUpdates(to queue: OperationQueue, withHandler handler: @escaping CMMotionActivityHandler) {
        self.handler = handler
    }

    override func stopActivityUpdates() {
        stopped = true
        handler = nil
    }

    func send(_ activity: CMMotionActivity?) {
        handler?(activity)
    }
}

final class MockSensorRecorder: CMSensorRecorder {
    nonisolated(unsafe) static var stubAvailable = false

    override class func isAccelerometerRecordingAvailable() -> Bool { stubAvailable }
    override class func authorizationStatus() -> CMAuthorizationStatus { .denied }
}

// MARK: - Protocol seam

/// What the app needs from a motion manager; `CMMotionManager` conforms as it is.
protocol MotionProviding: AnyObject {
    var isDeviceMotionAvailable: Bool { get }
    var deviceMotionUpdateInterval: TimeInterval { get set }
    var deviceMotion: CMDeviceMotion? { get }
    func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMDeviceMotionHandler)
    func stopDeviceMotionUpdates()
}

extension CMMotionManager: MotionProviding {}

final class ProtocolMotionMock: MotionProviding {
    var isDeviceMotionAvailable = true
    var deviceMotionUpdateInterval: TimeInterval = 0
    var deviceMotion: CMDeviceMotion?
    private(set) var handler: CMDeviceMotionHandler?

    func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMDeviceMotionHandler) {
        self.handler = handler
    }

    func stopDeviceMotionUpdates() {
        handler = nil
    }
}

// MARK: - An app's own conformances

// Apps add the conformances Core Motion's C structs lack; they must still compile. (An app in another
// package writes `@retroactive Equatable`; inside this package the compiler refuses `@retroactive`.)
extension CMQuaternion: Equatable {
    public static func == (lhs: CMQuaternion, rhs: CMQuaternion) -> Bool {
        lhs.x == rhs.x && lhs.y == rhs.y && lhs.z == rhs.z && lhs.w == rhs.w
    }
}

extension CMAcceleration: Equatable {
    public static func == (lhs: CMAcceleration, rhs: CMAcceleration) -> Bool {
        lhs.x == rhs.x && lhs.y == rhs.y && lhs.z == rhs.z
    }
}

extension CMRotationRate: Equatable {
    public static func == (lhs: CMRotationRate, rhs: CMRotationRate) -> Bool {
        lhs.x == rhs.x && lhs.y == rhs.y && lhs.z == rhs.z
    }
}
