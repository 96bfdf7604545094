import XCTest
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

/// XCTest cases as an iOS project writes them, against subclass and protocol mocks.
final class MotionViewModelXCTests: XCTestCase {
    private var manager: MockMotionManager!
    private var viewModel: TiltViewModel!

    override func setUp() {
        super.setUp()
        _ = defaultSourceChosen
        manager = MockMotionManager()
        viewModel = TiltViewModel(motionManager: manager)
    }

    override func tearDown() {
        viewModel = nil
        manager = nil
        super.tearDown()
    }

    func testStartConfiguresIntervalAndStartsUpdates() {
        viewModel.start()
        XCTAssertEqual(manager.startDeviceMotionCallCount, 1)
        XCTAssertEqual(manager.deviceMotionUpdateInterval, 1.0 / 60.0, accuracy: 1e-12)
        XCTAssertTrue(manager.isDeviceMotionActive)
        XCTAssertTrue(viewModel.isTracking)
    }

    func testUnavailableDeviceMotionDoesNotStart() {
        manager.stubDeviceMotionAvailable = false
        viewModel.start()
        XCTAssertEqual(manager.startDeviceMotionCallCount, 0)
        XCTAssertTrue(viewModel.unavailable)
    }

    func testOverriddenAttitudeReachesTheViewModel() {
        viewModel.start()
        manager.send(MockDeviceMotion(attitude: MockAttitude(roll: 0.1, pitch: -0.2, yaw: 1.5)))
        XCTAssertEqual(viewModel.roll, 0.1, accuracy: 1e-12)
        XCTAssertEqual(viewModel.pitch, -0.2, accuracy: 1e-12)
        XCTAssertEqual(viewModel.yaw, 1.5, accuracy: 1e-12)
    }

    func testErrorsReachTheViewModel() {
        viewModel.start()
        manager.send(nil, error: NSError(domain: CMErrorDomain, code: Int(CMErrorNotAvailable.rawValue)))
        let error = try? XCTUnwrap(viewModel.lastError as NSError?)
        XCTAssertEqual(error?.domain, CMErrorDomain)
        XCTAssertEqual(error?.code, 109)
    }

    func testPulledDeviceMotion() {
        manager.stubDeviceMotion = MockDeviceMotion(attitude: MockAttitude(roll: 0.3, pitch: 0.4, yaw: 0.5))
        viewModel.refresh()
        XCTAssertEqual(viewModel.roll, 0.3, accuracy: 1e-12)
        XCTAssertEqual(viewModel.yaw, 0.5, accuracy: 1e-12)
    }

    func testStopStopsTheManager() {
        viewModel.start()
        viewModel.stop()
        XCTAssertEqual(manager.stopDeviceMotionCallCount, 1)
        XCTAssertFalse(manager.isDeviceMotionActive)
        manager.send(MockDeviceMotion(attitude: MockAttitude(roll: 9, pitch: 9, yaw: 9)))
        XCTAssertEqual(viewModel.roll, 0)
    }

    func testProtocolMock() {
        let mock = ProtocolMotionMock()
        let model = ProtocolTiltViewModel(provider: mock)
        model.start()
        XCTAssertEqual(mock.deviceMotionUpdateInterval, 0.1)
        mock.handler?(MockDeviceMotion(attitude: MockAttitude(roll: .pi / 2, pitch: 0, yaw: 0),
                                       userAcceleration: CMAcceleration(x: 0, y: 0, z: 0.25)), nil)
        XCTAssertEqual(model.degreesOfRoll, 90, accuracy: 1e-9)
        XCTAssertEqual(model.verticalAcceleration, 0.25)
        model.stop()
        XCTAssertNil(mock.handler)
    }

    func testRealManagerConformsToTheProtocol() {
        let provider: MotionProviding = CMMotionManager()
        provider.deviceMotionUpdateInterval = 0.05
        XCTAssertEqual(provider.deviceMotionUpdateInterval, 0.05, accuracy: 1e-9)
    }

    func testAccelerometerSubclassSample() {
        let detector = FaceDownDetector(motionManager: manager)
        detector.start()
        XCTAssertEqual(manager.startAccelerometerCallCount, 1)
        manager.sendAccelerometer(MockAccelerometerData(x: 0, y: 0, z: 1))
        XCTAssertTrue(detector.isFaceDown)
        manager.sendAccelerometer(MockAccelerometerData(x: 0, y: 0, z: -1))
        XCTAssertFalse(detector.isFaceDown)
    }
}

final class PedometerXCTests: XCTestCase {
    override func setUp() {
        super.setUp()
        _ = defaultSourceChosen
        MockPedometer.stubStepCountingAvailable = true
        MockPedometer.stubDistanceAvailable = true
        MockPedometer.stubAuthorizationStatus = .authorized
    }

    func testStepsFromASubclassedPedometer() {
        let pedometer = MockPedometer()
        let model = StepsViewModel(pedometer: pedometer, pedometerType: MockPedometer.self)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        model.start(from: start)
        XCTAssertEqual(pedometer.startDate, start)
        let data = MockPedometerData()
        data.stubSteps = 1234
        data.stubDistance = 987.6
        data.stubCadence = 1.8
        pedometer.send(data)
        XCTAssertEqual(model.steps, 1234)
        XCTAssertEqual(model.distanceText, "988 m")
        XCTAssertEqual(model.cadence, 1.8)
    }

    func testUnavailableStepCounting() {
        MockPedometer.stubStepCountingAvailable = false
        let model = StepsViewModel(pedometer: MockPedometer(), pedometerType: MockPedometer.self)
        model.start(from: Date())
        XCTAssertEqual(model.message, "Step counting is not available on this device.")
    }

    func testDeniedAuthorization() {
        MockPedometer.stubAuthorizationStatus = .denied
        let model = StepsViewModel(pedometer: MockPedometer(), pedometerType: MockPedometer.self)
        model.start(from: Date())
        XCTAssertEqual(model.message, "Motion access was denied.")
    }

    func testQueryHistory() {
        let pedometer = MockPedometer()
        let data = MockPedometerData()
        data.stubSteps = 42
        pedometer.stubQueryResult = data
        let model = StepsViewModel(pedometer: pedometer, pedometerType: MockPedometer.self)
        model.loadToday(now: Date())
        XCTAssertEqual(model.steps, 42)
    }
}

final class AltimeterAndActivityXCTests: XCTestCase {
    override func setUp() {
        super.setUp()
        _ = defaultSourceChosen
    }

    func testAltitudeFromASubclassedAltimeter() {
        MockAltimeter.stubAvailable = true
        let altimeter = MockAltimeter()
        let model = AltitudeViewModel(altimeter: altimeter, altimeterType: MockAltimeter.self)
        model.start()
        let data = MockAltitudeData()
        data.stubRelativeAltitude = 3.5
        data.stubPressure = 100.9
        altimeter.send(data)
        XCTAssertEqual(model.metres, 3.5)
        XCTAssertEqual(model.kilopascals, 100.9)
    }

    func testActivityFromASubclassedManager() {
        MockActivityManager.stubAvailable = true
        let manager = MockActivityManager()
        let model = ActivityViewModel(manager: manager, managerType: MockActivityManager.self)
        model.start()
        let activity = MockMotionActivity()
        activity.stubWalking = true
        activity.stubConfidence = .high
        manager.send(activity)
        XCTAssertEqual(model.label, "Walking")
        let unsure = MockMotionActivity()
        unsure.stubRunning = true
        manager.send(unsure)
        XCTAssertEqual(model.label, "Walking", "a low-confidence activity is ignored")
        model.stop()
        XCTAssertTrue(manager.stopped)
    }

    func testUnavailableActivity() {
        MockActivityManager.stubAvailable = false
        let model = ActivityViewModel(manager: MockActivityManager(), managerType: MockActivityManager.self)
        model.start()
        XCTAssertEqual(model.label, "Unavailable")
        MockActivityManager.stubAvailable = true
    }

    func testSensorRecorderClassOverrides() {
        let type: CMSensorRecorder.Type = MockSensorRecorder.self
        XCTAssertFalse(type.isAccelerometerRecordingAvailable())
        XCTAssertEqual(type.authorizationStatus(), .denied)
    }
}

final class CodingAndValueXCTests: XCTestCase {
    func testValueStructsStartAtZero() {
        let q = CMQuaternion()
        XCTAssertEqual([q.x, q.y, q.z, q.w], [0, 0, 0, 0])
        let m = CMRotationMatrix()
        XCTAssertEqual([m.m11, m.m12, m.m13, m.m21, m.m22, m.m23, m.m31, m.m32, m.m33], Array(repeating: 0, count: 9))
        XCTAssertEqual(CMAcceleration(), CMAcceleration(x: 0, y: 0, z: 0))
        XCTAssertEqual(CMRotationRate(), CMRotationRate(x: 0, y: 0, z: 0))
        let field = CMCalibratedMagneticField()
        XCTAssertEqual(field.accuracy.rawValue, 0)
        XCTAssertEqual(field.accuracy, .low)
        XCTAssertEqual([field.field.x, field.field.y, field.field.z], [0, 0, 0])
        let raw = CMMagneticField()
        XCTAssertEqual([raw.x, raw.y, raw.z], [0, 0, 0])
        XCTAssertEqual(CMMagneticFieldCalibrationAccuracy.uncalibrated.rawValue, -1)
    }

    func testAppDeclaredEquatable() {
        XCTAssertEqual(CMQuaternion(x: 0, y: 0, z: 0, w: 1), CMQuaternion(x: 0, y: 0, z: 0, w: 1))
        XCTAssertNotEqual(CMQuaternion(x: 1, y: 0, z: 0, w: 0), CMQuaternion())
    }

    func testAccelerometerDataRoundTripsThroughSecureCoding() throws {
        XCTAssertTrue(CMAccelerometerData.supportsSecureCoding)
        let data = try NSKeyedArchiver.archivedData(withRootObject: MockAccelerometerData(x: 0.1, y: -0.2, z: -0.98),
                                                    requiringSecureCoding: true)
        let decoded = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClasses: [MockAccelerometerData.self, CMAccelerometerData.self], from: data) as? CMAccelerometerData)
        XCTAssertTrue(decoded is MockAccelerometerData)
    }

    func testAttitudeCopies() {
        let attitude = MockAttitude(roll: 0.5, pitch: 0.25, yaw: -1)
        let copy = attitude.copy() as? CMAttitude
        XCTAssertNotNil(copy)
    }
}
