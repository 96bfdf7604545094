import Foundation
import XCTest
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

// More shapes iOS suites use, written from Apple's headers: headphone motion with its delegate, pedometer
// events, absolute altitude, recorded accelerometer data, class-level availability and authorization
// overrides on every manager, the settable properties of CMMotionManager, NSSecureCoding round trips.

final class ProbeHeadphones: CMHeadphoneMotionManager {
    override var isDeviceMotionAvailable: Bool { true }
    override var isDeviceMotionActive: Bool { true }
    override func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMHeadphoneDeviceMotionHandler) {
        handler(CMDeviceMotion(), nil)
    }
    override func stopDeviceMotionUpdates() {}
    override class func authorizationStatus() -> CMAuthorizationStatus { .authorized }
}

final class ProbeDelegate: NSObject, CMHeadphoneMotionManagerDelegate {
    func headphoneMotionManagerDidConnect(_ manager: CMHeadphoneMotionManager) {}
    func headphoneMotionManagerDidDisconnect(_ manager: CMHeadphoneMotionManager) {}
}

final class ProbePedometerEvent: CMPedometerEvent {
    override var type: CMPedometerEventType { .pause }
    override var date: Date { Date(timeIntervalSince1970: 5) }
}

final class ProbeAbsoluteAltitude: CMAbsoluteAltitudeData {
    override var altitude: Double { 123 }
    override var accuracy: Double { 2 }
    override var precision: Double { 1 }
}

final class ProbeRecorded: CMRecordedAccelerometerData {
    override var startDate: Date { Date(timeIntervalSince1970: 7) }
    override var identifier: UInt64 { 9 }
    override var acceleration: CMAcceleration { CMAcceleration(x: 1, y: 2, z: 3) }
}

final class ProbeManager: CMMotionManager {
    var stopped = 0
    override var isAccelerometerActive: Bool { true }
    override var deviceMotion: CMDeviceMotion? { nil }
    override var accelerometerData: CMAccelerometerData? { CMAccelerometerData() }
    override var gyroData: CMGyroData? { nil }
    override var magnetometerData: CMMagnetometerData? { nil }
    override var isDeviceMotionActive: Bool { false }
    override var showsDeviceMovementDisplay: Bool { get { true } set {} }
    override var attitudeReferenceFrame: CMAttitudeReferenceFrame { .xMagneticNorthZVertical }
    override class func availableAttitudeReferenceFrames() -> CMAttitudeReferenceFrame { [.xArbitraryZVertical, .xTrueNorthZVertical] }
    override func stopAccelerometerUpdates() { stopped += 1 }
    override func startAccelerometerUpdates() {}
    override func startGyroUpdates(to queue: OperationQueue, withHandler handler: @escaping CMGyroHandler) {}
    override func startMagnetometerUpdates(to queue: OperationQueue, withHandler handler: @escaping CMMagnetometerHandler) {}
    override func startDeviceMotionUpdates(using referenceFrame: CMAttitudeReferenceFrame, to queue: OperationQueue, withHandler handler: @escaping CMDeviceMotionHandler) {}
    override var deviceMotionUpdateInterval: TimeInterval { get { 0.5 } set {} }
}

final class ProbeMotion: CMDeviceMotion {
    override var gravity: CMAcceleration { CMAcceleration(x: 0, y: 0, z: -1) }
    override var userAcceleration: CMAcceleration { CMAcceleration() }
    override var rotationRate: CMRotationRate { CMRotationRate(x: 1, y: 0, z: 0) }
    override var magneticField: CMCalibratedMagneticField { CMCalibratedMagneticField(field: CMMagneticField(x: 1, y: 2, z: 3), accuracy: .high) }
    override var heading: Double { 90 }
    override var sensorLocation: CMDeviceMotion.SensorLocation { .default }
    override var timestamp: TimeInterval { 42 }
}

final class ProbeAttitude: CMAttitude {
    override var quaternion: CMQuaternion { CMQuaternion(x: 0, y: 0, z: 0, w: 1) }
    override var rotationMatrix: CMRotationMatrix { CMRotationMatrix() }
    override func multiply(byInverseOf attitude: CMAttitude) {}
    override func copy(with zone: NSZone? = nil) -> Any { ProbeAttitude() }
}

final class ProbeActivity: CMMotionActivity {
    override var walking: Bool { true }
    override var confidence: CMMotionActivityConfidence { .high }
    override var startDate: Date { Date(timeIntervalSince1970: 1) }
    override var unknown: Bool { false }
    override var automotive: Bool { false }
}

final class ProbeActivityManager: CMMotionActivityManager {
    override class func isActivityAvailable() -> Bool { true }
    override class func authorizationStatus() -> CMAuthorizationStatus { .denied }
    override func queryActivityStarting(from start: Date, to end: Date, to queue: OperationQueue, withHandler handler: @escaping CMMotionActivityQueryHandler) {
        handler([ProbeActivity()], nil)
    }
    override func startActivityUpdates(to queue: OperationQueue, withHandler handler: @escaping CMMotionActivityHandler) { handler(ProbeActivity()) }
    override func stopActivityUpdates() {}
}

final class ProbePedometer: CMPedometer {
    override class func isStepCountingAvailable() -> Bool { true }
    override class func isDistanceAvailable() -> Bool { true }
    override class func isFloorCountingAvailable() -> Bool { false }
    override class func isPaceAvailable() -> Bool { false }
    override class func isCadenceAvailable() -> Bool { false }
    override class func isPedometerEventTrackingAvailable() -> Bool { true }
    override func queryPedometerData(from start: Date, to end: Date, withHandler handler: @escaping CMPedometerHandler) { handler(nil, NSError(domain: CMErrorDomain, code: Int(CMErrorMotionActivityNotAuthorized.rawValue))) }
    override func startUpdates(from start: Date, withHandler handler: @escaping CMPedometerHandler) {}
    override func stopUpdates() {}
    override func startEventUpdates(handler: @escaping CMPedometerEventHandler) { handler(ProbePedometerEvent(), nil) }
    override func stopEventUpdates() {}
}

final class ProbeAltimeter: CMAltimeter {
    override class func isRelativeAltitudeAvailable() -> Bool { true }
    override class func isAbsoluteAltitudeAvailable() -> Bool { true }
    override class func authorizationStatus() -> CMAuthorizationStatus { .authorized }
    override func startRelativeAltitudeUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAltitudeHandler) {}
    override func stopRelativeAltitudeUpdates() {}
    override func startAbsoluteAltitudeUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAbsoluteAltitudeHandler) { handler(ProbeAbsoluteAltitude(), nil) }
    override func stopAbsoluteAltitudeUpdates() {}
}

final class ProbeSensorRecorder: CMSensorRecorder {
    override class func isAccelerometerRecordingAvailable() -> Bool { true }
    override class func isAuthorizedForRecording() -> Bool { true }
    override class func authorizationStatus() -> CMAuthorizationStatus { .authorized }
    override func recordAccelerometer(forDuration duration: TimeInterval) {}
    override func accelerometerData(from fromDate: Date, to toDate: Date) -> CMSensorDataList? { nil }
}

final class MoreMockShapesXCTests: XCTestCase {
    func testOverridesOfEveryManagerAndSampleCompileAndReachTheirCallers() throws {
        XCTAssertEqual(CMQuaternion().w, 0)
        XCTAssertEqual(CMRotationMatrix().m11, 0)
        XCTAssertEqual(CMCalibratedMagneticField().accuracy.rawValue, 0)
        XCTAssertEqual(CMMagneticFieldCalibrationAccuracy.uncalibrated.rawValue, -1)
        XCTAssertEqual(CMAcceleration(), CMAcceleration(x: 0, y: 0, z: 0))
        let m = ProbeManager()
        m.stopAccelerometerUpdates()
        XCTAssertEqual(m.stopped, 1)
        XCTAssertTrue(ProbeManager.availableAttitudeReferenceFrames().contains(.xTrueNorthZVertical))
        let h = ProbeHeadphones()
        let delegate = ProbeDelegate()
        h.delegate = delegate
        XCTAssertTrue(h.delegate === delegate, "weak, as Apple's")
        var got: CMDeviceMotion?
        h.startDeviceMotionUpdates(to: .main) { mm, _ in got = mm }
        XCTAssertNotNil(got)
        let e = ProbeExpectation()
        ProbeAltimeter().startAbsoluteAltitudeUpdates(to: .main) { d, _ in XCTAssertEqual(d?.altitude, 123); e.fired = true }
        XCTAssertTrue(e.fired)
        let data = try NSKeyedArchiver.archivedData(withRootObject: CMAttitude(), requiringSecureCoding: true)
        XCTAssertNotNil(try NSKeyedUnarchiver.unarchivedObject(ofClass: CMAttitude.self, from: data))
        XCTAssertTrue(CMDeviceMotion.supportsSecureCoding)
        let motion: CMDeviceMotion = ProbeMotion()
        XCTAssertEqual(motion.magneticField.accuracy, .high)
        XCTAssertEqual(ProbeRecorded().acceleration, CMAcceleration(x: 1, y: 2, z: 3))
        let err = NSError(domain: CMErrorDomain, code: Int(CMErrorMotionActivityNotAvailable.rawValue))
        XCTAssertEqual(err.code, 104)
    }
}
final class ProbeExpectation { var fired = false }
