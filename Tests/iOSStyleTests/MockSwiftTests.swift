import Foundation
import Testing
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

/// An attitude mock that overrides the quaternion only, as tests that stub a rotation do.
final class QuaternionAttitude: CMAttitude {
    private let stub: CMQuaternion

    init(_ q: CMQuaternion) {
        stub = q
        super.init()
    }

    required init?(coder: NSCoder) {
        stub = CMQuaternion(x: 0, y: 0, z: 0, w: 1)
        super.init(coder: coder)
    }

    override var quaternion: CMQuaternion { stub }
}

/// A manager subclass that only counts calls and lets the real implementation deliver.
final class CountingMotionManager: CMMotionManager {
    private let lock = NSLock()
    private var starts = 0

    var startCount: Int { lock.withLock { starts } }

    override func startAccelerometerUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAccelerometerHandler) {
        lock.withLock { starts += 1 }
        super.startAccelerometerUpdates(to: queue, withHandler: handler)
    }
}

@Suite struct SubclassMockTests {
    init() { _ = defaultSourceChosen }

    @Test func overriddenAttitudeReachesTheViewModel() {
        let manager = MockMotionManager()
        let model = TiltViewModel(motionManager: manager)
        model.start()
        #expect(manager.startDeviceMotionCallCount == 1)
        #expect(manager.deviceMotionUpdateInterval == 1.0 / 60.0)
        manager.send(MockDeviceMotion(attitude: MockAttitude(roll: -0.7, pitch: 0.1, yaw: 2)))
        #expect(model.roll == -0.7)
        #expect(model.pitch == 0.1)
        #expect(model.yaw == 2)
    }

    @Test func unavailableManagerIsNotStarted() {
        let manager = MockMotionManager()
        manager.stubDeviceMotionAvailable = false
        let model = TiltViewModel(motionManager: manager)
        model.start()
        #expect(manager.startDeviceMotionCallCount == 0)
        #expect(model.unavailable)
    }

    @Test func protocolMockDrivesTheSameScreen() {
        let mock = ProtocolMotionMock()
        let model = ProtocolTiltViewModel(provider: mock)
        model.start()
        mock.handler?(MockDeviceMotion(attitude: MockAttitude(roll: .pi, pitch: 0, yaw: 0)), nil)
        #expect(abs(model.degreesOfRoll - 180) < 1e-9)
    }

    @Test func classLevelOverridesAreSeenThroughTheMetatype() {
        MockPedometer.stubStepCountingAvailable = false
        defer { MockPedometer.stubStepCountingAvailable = true }
        let model = StepsViewModel(pedometer: MockPedometer(), pedometerType: MockPedometer.self)
        model.start(from: Date())
        #expect(model.message == "Step counting is not available on this device.")
        let altimeterType: CMAltimeter.Type = MockAltimeter.self
        MockAltimeter.stubAvailable = false
        defer { MockAltimeter.stubAvailable = true }
        #expect(!altimeterType.isRelativeAltitudeAvailable())
    }

    @Test func sampleSubclassesWithoutInitializersInheritInit() {
        let gyro = MockGyroData()
        gyro.stubRate = CMRotationRate(x: 1, y: 2, z: 3)
        let asBase: CMGyroData = gyro
        #expect(asBase.rotationRate.z == 3)
        #expect(asBase.timestamp == 0)
        let field = MockMagnetometerData()
        field.stubField = CMMagneticField(x: 20, y: 0, z: -40)
        #expect((field as CMMagnetometerData).magneticField.z == -40)
    }

    @Test func overriddenQuaternionFlowsIntoThePackagesAttitudeMaths() {
        // 90° about z: yaw π/2, derived by the base class from the overridden quaternion.
        let s = 0.5.squareRoot()
        let turned = QuaternionAttitude(CMQuaternion(x: 0, y: 0, z: s, w: s))
        #expect(abs(turned.yaw - .pi / 2) < 1e-12)
        #expect(abs(turned.rotationMatrix.m12 + 1) < 1e-12)
        // multiply(byInverseOf:) reads the argument through its accessor.
        let attitude = CMAttitude(quaternion: CMQuaternion(x: 0, y: 0, z: s, w: s))
        attitude.multiply(byInverseOf: turned)
        #expect(abs(attitude.yaw) < 1e-12)
        #expect(abs(attitude.quaternion.w - 1) < 1e-12)
        // A copy is a plain attitude with the same rotation.
        let copy = turned.copy() as? CMAttitude
        #expect(copy.map { abs($0.yaw - .pi / 2) < 1e-12 } == true)
        #expect(!(copy is QuaternionAttitude))
    }

    @Test func activityKindFollowsOverriddenFlags() {
        let activity = MockMotionActivity()
        #expect(!activity.walking)
        activity.stubWalking = true
        #expect(activity.walking)
        #expect(activity.confidence == .low)
    }

    @Test func subclassOfTheRealManagerStillDelivers() async throws {
        // Beyond Apple: the source is given, so the test does not depend on the process's default one.
        let manager = CountingMotionManager(source: SimulatedDevice(scenario: .handheld))
        try #require(manager.isAccelerometerAvailable)
        manager.accelerometerUpdateInterval = 0.01
        let z: Double = await withCheckedContinuation { continuation in
            let once = NSLock()
            nonisolated(unsafe) var resumed = false
            manager.startAccelerometerUpdates(to: OperationQueue()) { data, _ in
                guard let data else { return }
                let first = once.withLock { () -> Bool in
                    defer { resumed = true }
                    return !resumed
                }
                if first { continuation.resume(returning: data.acceleration.z) }
            }
        }
        manager.stopAccelerometerUpdates()
        #expect(manager.startCount == 1)
        #expect(z < -0.5, "the simulated handheld device is held screen up")
    }
}

@Suite struct ValueAndCodingTests {
    init() { _ = defaultSourceChosen }

    @Test func structsAreZeroInitialised() {
        let q = CMQuaternion()
        #expect(q.x == 0 && q.y == 0 && q.z == 0 && q.w == 0)
        let m = CMRotationMatrix()
        #expect([m.m11, m.m12, m.m13, m.m21, m.m22, m.m23, m.m31, m.m32, m.m33].allSatisfy { $0 == 0 })
        let a = CMAcceleration(), r = CMRotationRate(), f = CMMagneticField()
        #expect([a.x, a.y, a.z, r.x, r.y, r.z, f.x, f.y, f.z].allSatisfy { $0 == 0 })
        let c = CMCalibratedMagneticField()
        #expect(c.accuracy.rawValue == 0)
        #expect(c.accuracy == .low)
        #expect(CMMagneticFieldCalibrationAccuracy.uncalibrated.rawValue == -1)
    }

    @Test func samplesInitialiseEmpty() {
        let motion = CMDeviceMotion()
        #expect(motion.timestamp == 0)
        #expect(motion.attitude.roll == 0 && motion.attitude.yaw == 0)
        #expect(motion.gravity.z == 0 && motion.userAcceleration.x == 0)
        #expect(motion.sensorLocation == .default)
        #expect(CMAccelerometerData().acceleration.z == 0)
        #expect(CMPedometerData().numberOfSteps == 0)
        #expect(CMPedometerData().distance == nil)
        #expect(CMAltitudeData().relativeAltitude == 0)
        #expect(!CMMotionActivity().walking)
        #expect(CMRecordedAccelerometerData().identifier == 0)
    }

    @Test func appDeclaredEquatableCompilesAndWorks() {
        #expect(CMQuaternion(x: 1, y: 2, z: 3, w: 4) == CMQuaternion(x: 1, y: 2, z: 3, w: 4))
        #expect(CMAcceleration(x: 0, y: 0, z: -1) != CMAcceleration())
        #expect(CMRotationRate() == CMRotationRate(x: 0, y: 0, z: 0))
    }

    @Test func deviceMotionRoundTripsThroughSecureCoding() throws {
        let s = 0.5.squareRoot()
        let motion = CMDeviceMotion(
            timestamp: 12.5,
            attitude: CMAttitude(quaternion: CMQuaternion(x: s, y: 0, z: 0, w: s)),
            rotationRate: CMRotationRate(x: 0.1, y: 0.2, z: 0.3),
            gravity: CMAcceleration(x: 0, y: -1, z: 0),
            userAcceleration: CMAcceleration(x: 0.01, y: 0.02, z: 0.03),
            magneticField: CMCalibratedMagneticField(field: CMMagneticField(x: 20, y: 5, z: -40), accuracy: .high),
            heading: 87.5
        )
        #expect(CMDeviceMotion.supportsSecureCoding)
        let data = try NSKeyedArchiver.archivedData(withRootObject: motion, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CMDeviceMotion.self, from: data))
        #expect(decoded.timestamp == 12.5)
        #expect(abs(decoded.attitude.pitch - .pi / 2) < 1e-9)
        #expect(decoded.rotationRate.y == 0.2)
        #expect(decoded.gravity.y == -1)
        #expect(decoded.userAcceleration.z == 0.03)
        #expect(decoded.magneticField.field.z == -40)
        #expect(decoded.magneticField.accuracy == .high)
        #expect(decoded.heading == 87.5)
        #expect(decoded.headingAccuracy == motion.headingAccuracy)
    }

    @Test func overriddenValuesAreWhatIsArchived() throws {
        let mock = MockDeviceMotion(attitude: QuaternionAttitude(CMQuaternion(x: 0, y: 0, z: 1, w: 0)),
                                    userAcceleration: CMAcceleration(x: 0.5, y: 0, z: 0), heading: 270, timestamp: 3)
        let data = try NSKeyedArchiver.archivedData(withRootObject: mock, requiringSecureCoding: true)
        // Read the mock's archive back as the plain classes: what was written is what the overrides returned.
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.setClass(CMDeviceMotion.self, forClassName: NSStringFromClass(MockDeviceMotion.self))
        unarchiver.setClass(CMAttitude.self, forClassName: NSStringFromClass(QuaternionAttitude.self))
        let decoded = try #require(unarchiver.decodeObject(of: CMDeviceMotion.self, forKey: NSKeyedArchiveRootObjectKey))
        #expect(!(decoded is MockDeviceMotion))
        #expect(decoded.heading == 270)
        #expect(decoded.timestamp == 3)
        #expect(decoded.userAcceleration.x == 0.5)
        #expect(decoded.gravity.z == -1)
        #expect(abs(abs(decoded.attitude.quaternion.z) - 1) < 1e-12)
    }

    @Test func mockDecodesThroughItsRequiredCoderInitializer() throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: MockAccelerometerData(x: 0, y: 0, z: -1), requiringSecureCoding: true)
        let decoded = try NSKeyedUnarchiver.unarchivedObject(ofClasses: [MockAccelerometerData.self], from: data)
        #expect(decoded is MockAccelerometerData)
    }

    @Test func samplesRoundTrip() throws {
        func roundTrip<T: NSObject & NSSecureCoding>(_ value: T) throws -> T {
            let data = try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
            return try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: T.self, from: data))
        }
        let a = try roundTrip(CMAccelerometerData(acceleration: CMAcceleration(x: 0.1, y: 0.2, z: -0.9), timestamp: 4))
        #expect(a.acceleration.x == 0.1 && a.acceleration.z == -0.9 && a.timestamp == 4)
        let g = try roundTrip(CMGyroData(rotationRate: CMRotationRate(x: 1, y: -2, z: 3), timestamp: 5))
        #expect(g.rotationRate.y == -2)
        let m = try roundTrip(CMMagnetometerData(magneticField: CMMagneticField(x: 30, y: -5, z: 12), timestamp: 6))
        #expect(m.magneticField.x == 30)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let p = try roundTrip(CMPedometerData(startDate: start, endDate: start.addingTimeInterval(60), numberOfSteps: 88,
                                              distance: 61.5, floorsAscended: 2, currentCadence: 1.7))
        #expect(p.numberOfSteps == 88 && p.distance == 61.5 && p.floorsAscended == 2 && p.floorsDescended == nil)
        #expect(p.currentCadence == 1.7 && p.startDate == start)
        let e = try roundTrip(CMPedometerEvent(date: start, type: .resume))
        #expect(e.type == .resume && e.date == start)
        let alt = try roundTrip(CMAltitudeData(timestamp: 7, relativeAltitude: 2.5, pressure: 100.2))
        #expect(alt.relativeAltitude == 2.5 && alt.pressure == 100.2)
        let act = try roundTrip(CMMotionActivity(kind: .running, confidence: .high, startDate: start, timestamp: 8))
        #expect(act.running && !act.walking && act.confidence == .high && act.startDate == start)
        let rec = try roundTrip(CMRecordedAccelerometerData(identifier: 77, startDate: start,
                                                            acceleration: CMAcceleration(x: 0, y: 0, z: -1), timestamp: 9))
        #expect(rec.identifier == 77 && rec.startDate == start && rec.acceleration.z == -1)
        let att = try roundTrip(CMAttitude(quaternion: CMQuaternion(x: 0, y: 0, z: 0.6, w: 0.8)))
        #expect(abs(att.quaternion.z - 0.6) < 1e-12)
    }
}
