import Foundation
import MotionFusion
import MotionSources
@testable import OpenCoreMotion
import Testing

/// A ``ManualSource`` that also carries a device's own attitude (``OwnAttitudeProviding``), set by hand.
final class OwnAttitudeManualSource: OwnAttitudeProviding {
    let inner = ManualSource()
    let own = Locked<OwnAttitude?>(nil)
    let reportsOwnAttitude: Bool
    var info: SourceInfo { inner.info }

    init(reportsOwnAttitude: Bool = true) {
        self.reportsOwnAttitude = reportsOwnAttitude
    }

    func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        try inner.apply(demand, sink: sink)
    }

    func ownAttitude(at timestamp: Double) -> OwnAttitude? { own.withLock { $0 } }

    func set(_ attitude: Quaternion, gravity: Vector3? = nil, trueNorth: Bool = false) {
        own.withLock { $0 = OwnAttitude(attitude: attitude, gravity: gravity, timestamp: 0, isTrueNorth: trueNorth) }
    }
}

/// The hub's device motion from a source's own attitude, frame by frame.
///
/// Each test awaits its updates before draining the queue: a sample that arrives while the delivery's
/// batch runs goes out in the next batch, which is scheduled when the running one ends, so a barrier
/// added to the queue in between runs first (seen under ThreadSanitizer: one update of two).
@Suite struct OwnAttitudeSourceTests {
    /// Starts device motion in `frame` on a manager of `source`, recording each update.
    func start(_ source: OwnAttitudeManualSource, _ frame: CMAttitudeReferenceFrame,
               location: CMMotionManager.Location? = nil) -> (CMMotionManager, Recorder<CMDeviceMotion>, OperationQueue) {
        let manager = CMMotionManager(source: source)
        manager.deviceMotionUpdateInterval = 0.01
        manager.location = location
        let got = Recorder<CMDeviceMotion>()
        let q = serialQueue()
        manager.startDeviceMotionUpdates(using: frame, to: q) { m, _ in if let m { got.append(m) } }
        return (manager, got, q)
    }

    @Test func noAttitudeNoUpdateThenOneUpdatePerGyroSample() async {
        let source = OwnAttitudeManualSource()
        let (manager, got, q) = start(source, .xMagneticNorthZVertical)
        source.inner.emit(accel(1))
        source.inner.emit(gyro(1, Vector3(0, 0, 0.25)))
        source.set(Quaternion(eulerAngles: EulerAngles(roll: 0, pitch: 0, yaw: 0.4)))
        source.inner.emit(accel(1.01))
        source.inner.emit(gyro(1.01, Vector3(0, 0, 0.25)))
        source.inner.emit(RawSample(sensor: .magnetometer, timestamp: 1.015, value: Vector3(10, -5, -40)))
        source.inner.emit(gyro(1.02, Vector3(0, 0, 0.25)))
        _ = await got.until { got.count >= 2 }  // see ``OwnAttitudeSourceTests``
        #expect(await drained(q))
        manager.stopDeviceMotionUpdates()
        let all = got.all
        #expect(all.map(\.timestamp) == [1.01, 1.02], "no update before the source's first attitude")
        #expect(all.allSatisfy { abs($0.attitude.yaw - 0.4) < 1e-12 && abs($0.rotationRate.z - 0.25) < 1e-12 })
        #expect(all.allSatisfy { abs($0.heading - (270 - 0.4 * 180 / .pi)) < 1e-9 })
        #expect(all.last?.magneticField.field.y == -5 && all.last?.magneticField.accuracy == .uncalibrated)
    }

    @Test func gravityIsDerivedFromTheAttitudeWhenTheDeviceSendsNone() async throws {
        let source = OwnAttitudeManualSource()
        let (manager, got, q) = start(source, .xMagneticNorthZVertical)
        let tilted = Quaternion(eulerAngles: EulerAngles(roll: 0.3, pitch: -0.2, yaw: 1))
        source.set(tilted)
        let expected = tilted.inverseRotate(Vector3(0, 0, -1))
        source.inner.emit(RawSample(sensor: .accelerometer, timestamp: 1, value: expected + Vector3(0.1, 0, 0)))
        source.inner.emit(gyro(1))
        _ = await got.until { got.count >= 1 }  // see ``OwnAttitudeSourceTests``
        #expect(await drained(q))
        manager.stopDeviceMotionUpdates()
        let m = try #require(got.all.first)
        #expect(abs(m.gravity.x - expected.x) < 1e-12 && abs(m.gravity.y - expected.y) < 1e-12 && abs(m.gravity.z - expected.z) < 1e-12)
        #expect(abs(m.userAcceleration.x - 0.1) < 1e-12 && abs(m.userAcceleration.y) < 1e-12 && abs(m.userAcceleration.z) < 1e-12)
        #expect(abs(m.attitude.roll - 0.3) < 1e-9 && abs(m.attitude.pitch + 0.2) < 1e-9)
    }

    @Test func arbitraryFrameStartsAtYawZeroAndFollowsTurns() async {
        let source = OwnAttitudeManualSource()
        let (manager, got, q) = start(source, .xArbitraryZVertical)
        source.set(Quaternion(eulerAngles: EulerAngles(roll: 0, pitch: 0, yaw: 1.2)), gravity: Vector3(0, 0, -1))
        source.inner.emit(accel(1))
        source.inner.emit(gyro(1))
        source.set(Quaternion(eulerAngles: EulerAngles(roll: 0, pitch: 0, yaw: 1.5)), gravity: Vector3(0, 0, -1))
        source.inner.emit(gyro(1.01))
        _ = await got.until { got.count >= 2 }  // see ``OwnAttitudeSourceTests``
        #expect(await drained(q))
        manager.stopDeviceMotionUpdates()
        let yaws = got.all.map(\.attitude.yaw)
        #expect(yaws.count == 2 && abs(yaws[0]) < 1e-12 && abs(yaws[1] - 0.3) < 1e-9, "\(yaws)")
        #expect(got.all.allSatisfy { $0.heading == -1 && $0.magneticField.field.z == 0 })
    }

    @Test func trueNorthAttitudeIsReportedAsIsInTheTrueNorthFrame() async throws {
        let source = OwnAttitudeManualSource()
        let berlin = CMMotionManager.Location(latitude: 52.52, longitude: 13.40)
        let (manager, got, q) = start(source, .xTrueNorthZVertical, location: berlin)
        source.set(Quaternion(eulerAngles: EulerAngles(roll: 0, pitch: 0, yaw: 0.5)), trueNorth: true)
        source.inner.emit(accel(1))
        source.inner.emit(gyro(1))
        // A magnetic-north attitude is turned by the declination (about 5° east in Berlin).
        source.set(Quaternion(eulerAngles: EulerAngles(roll: 0, pitch: 0, yaw: 0.5)))
        source.inner.emit(gyro(1.01))
        _ = await got.until { got.count >= 2 }  // see ``OwnAttitudeSourceTests``
        #expect(await drained(q))
        manager.stopDeviceMotionUpdates()
        let yaws = got.all.map(\.attitude.yaw)
        try #require(yaws.count == 2, "\(yaws)")
        #expect(abs(yaws[0] - 0.5) < 1e-9, "\(yaws)")
        #expect(yaws[1] < 0.5 - 3 * .pi / 180 && yaws[1] > 0.5 - 8 * .pi / 180, "\(yaws)")
    }

    @Test func withoutTheChoiceTheHubFuses() async {
        let source = OwnAttitudeManualSource(reportsOwnAttitude: false)
        let (manager, got, q) = start(source, .xArbitraryZVertical)
        source.set(Quaternion(eulerAngles: EulerAngles(roll: 0.5, pitch: 0, yaw: 0)))
        for i in 0..<50 {
            let t = 1 + Double(i) * 0.01
            source.inner.emit(accel(t))
            source.inner.emit(gyro(t))
        }
        _ = await got.until { got.count >= 1 }  // see ``OwnAttitudeSourceTests``
        #expect(await drained(q))
        manager.stopDeviceMotionUpdates()
        #expect(got.count > 0)
        // Fused from a face-up accelerometer: level, whatever the source's own attitude says.
        #expect(got.all.allSatisfy { abs($0.attitude.roll) < 0.05 })
    }
}
