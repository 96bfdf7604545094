import Foundation
import MotionFusion
import MotionSources
@testable import OpenCoreMotion
import Testing

/// Stored device calibration: the file round trip, bad files, and a manager on a source whose identity
/// has a stored calibration (a restart) starting calibrated. Serialized: the tests set the process's
/// calibration directory.
@Suite(.serialized) struct DeviceCalibrationTests {
    static let calibration = SensorCalibration(
        gyroBias: Vector3(0.07, -0.05, 0.09),
        accelerometerOffset: Vector3(0.03, -0.02, 0.05), accelerometerScale: Vector3(1.02, 0.98, 1.01),
        magnetometerOffset: Vector3(350, -220, 480),
        magnetometerSoftIron: Matrix3(rows: Vector3(0.92, -0.05, -0.02), Vector3(-0.05, 1.12, 0.04), Vector3(-0.02, 0.04, 0.96)),
        magneticFieldStrength: 47.4, magnetometerAccuracy: .high
    )

    static func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "ocm-calibration-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("a record survives the file round trip exactly, under a file name that encodes the identity")
    func roundTrip() throws {
        let store = DeviceCalibrationStore(directory: try Self.temporaryDirectory())
        let record = DeviceCalibrationRecord(identity: "i2c:/dev/i2c-1:0x68", created: "2026-11-27T21:50:00Z",
                                             origin: "recording turn.csv", calibration: Self.calibration)
        let path = try store.save(record)
        #expect(path.hasSuffix("/i2c%3A%2Fdev%2Fi2c-1%3A0x68.json"))
        #expect(try store.load("i2c:/dev/i2c-1:0x68") == record)
        #expect(try store.load("i2c:/dev/i2c-1:0x69") == nil)
    }

    @Test("malformed, NaN, wrong-version, wrong-shape and foreign files give one clear error each, never a crash",
          arguments: [
            ("{ not json", "malformed JSON"),
            (#"{"version": 2, "identity": "x", "created": "", "origin": ""}"#, "version 2 is not supported"),
            (#"{"version": 1, "created": "", "origin": ""}"#, "'identity' is missing"),
            (#"{"version": 1, "identity": "x", "created": "", "origin": "", "gyroBias": [1, 2]}"#, "gyroBias must have 3 numbers"),
            (#"{"version": 1, "identity": "x", "created": "", "origin": "", "gyroBias": [NaN, 0, 0]}"#, "malformed JSON"),
            (#"{"version": 1, "identity": "x", "created": "", "origin": "", "gyroBias": ["a", 0, 0]}"#, "wrong type"),
            (#"{"version": 1, "identity": "x", "created": "", "origin": "", "magnetometerOffset": [0, 0, 0], "magnetometerSoftIron": [[1, 0, 0], [0, -1, 0], [0, 0, 1]]}"#, "not positive definite"),
            (#"{"version": 1, "identity": "x", "created": "", "origin": "", "accelerometerOffset": [0, 0, 0], "accelerometerScale": [1, 0, 1]}"#, "finite and positive"),
            (#"{"version": 1, "identity": "x", "created": "", "origin": "", "magnetometerOffset": [0, 0, 0], "magnetometerAccuracy": "great"}"#, "'great' is not one of"),
            (#"{"version": 1, "identity": "other", "created": "", "origin": ""}"#, "holds the calibration of 'other', not 'x'"),
          ])
    func badFiles(text: String, expected: String) throws {
        let store = DeviceCalibrationStore(directory: try Self.temporaryDirectory())
        try Data(text.utf8).write(to: URL(fileURLWithPath: store.path(for: "x")))
        do {
            _ = try store.load("x")
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
            #expect(error.description.hasPrefix(store.path(for: "x") + ": "))
        }
    }

    @Test("a manager on a source whose identity has a stored calibration reports the corrected field with its accuracy from the first sample")
    func restartStartsCalibrated() throws {
        let dir = try Self.temporaryDirectory()
        let identity = "test:calibrated-\(UUID().uuidString)"
        try DeviceCalibrationStore(directory: dir).save(DeviceCalibrationRecord(
            identity: identity, created: "2026-11-27T21:50:00Z", origin: "test", calibration: Self.calibration))
        DeviceCalibrationStore.processOverride.withLock { $0 = .directory(dir) }
        defer { DeviceCalibrationStore.processOverride.withLock { $0 = nil } }

        // The raw readings of a device lying face up, heading north, with the calibration's errors.
        let field = Vector3(20, 0, -43)
        let c = Self.calibration
        let soft = try #require(c.magnetometerSoftIron?.inverse)
        let rawField = soft * field + c.magnetometerOffset!
        let rawAccel = Vector3(0, 0, -1 * c.accelerometerScale!.z) + c.accelerometerOffset!
        let rawGyro = c.gyroBias!

        func run(_ source: ManualSource) -> (CMDeviceMotion?, CMMagnetometerData?, CMGyroData?) {
            let manager = CMMotionManager(source: source)
            manager.deviceMotionUpdateInterval = 0.01
            manager.startDeviceMotionUpdates(using: .xMagneticNorthZVertical)
            manager.startMagnetometerUpdates()
            manager.startGyroUpdates()
            for i in 0..<3 {
                let t = 1 + Double(i) * 0.01
                source.emit(RawSample(sensor: .accelerometer, timestamp: t, value: rawAccel))
                source.emit(RawSample(sensor: .magnetometer, timestamp: t, value: rawField))
                source.emit(RawSample(sensor: .gyro, timestamp: t, value: rawGyro))
            }
            defer { manager.stopDeviceMotionUpdates(); manager.stopMagnetometerUpdates(); manager.stopGyroUpdates() }
            return (manager.deviceMotion, manager.magnetometerData, manager.gyroData)
        }

        let (motion, magnetometer, gyro) = run(ManualSource(identifier: identity))
        let m = try #require(motion)
        #expect(m.magneticField.accuracy == .high)
        let f = m.magneticField.field
        #expect((Vector3(f.x, f.y, f.z) - field).length < 1e-6, "field \(f)")
        let raw = try #require(magnetometer).magneticField
        #expect((Vector3(raw.x, raw.y, raw.z) - field).length < 1e-6)
        let rate = try #require(gyro).rotationRate
        #expect(Vector3(rate.x, rate.y, rate.z).length < 1e-12)
        #expect(abs(m.gravity.z + 1) < 1e-6)

        // The same readings from a source without a stored calibration: raw and uncalibrated.
        let (plain, plainMagnetometer, _) = run(ManualSource(identifier: "test:uncalibrated-\(UUID().uuidString)"))
        #expect(try #require(plain).magneticField.accuracy == .uncalibrated)
        let p = try #require(plainMagnetometer).magneticField
        #expect((Vector3(p.x, p.y, p.z) - rawField).length < 1e-9)

        // Off for the process: the calibrated identity runs raw.
        DeviceCalibrationStore.processOverride.withLock { $0 = .off }
        let (_, off, _) = run(ManualSource(identifier: identity))
        let o = try #require(off).magneticField
        #expect((Vector3(o.x, o.y, o.z) - rawField).length < 1e-9)
    }

    @Test("an unusable stored file leaves the source uncalibrated and running")
    func unusableFileIsIgnored() throws {
        let dir = try Self.temporaryDirectory()
        let identity = "test:broken-\(UUID().uuidString)"
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: DeviceCalibrationStore(directory: dir).path(for: identity)))
        DeviceCalibrationStore.processOverride.withLock { $0 = .directory(dir) }
        defer { DeviceCalibrationStore.processOverride.withLock { $0 = nil } }
        let source = ManualSource(identifier: identity)
        let manager = CMMotionManager(source: source)
        manager.startMagnetometerUpdates()
        source.emit(RawSample(sensor: .magnetometer, timestamp: 1, value: Vector3(300, 1, 2)))
        #expect(manager.magnetometerData?.magneticField.x == 300)
        manager.stopMagnetometerUpdates()
    }

    @Test("the default directory follows XDG_DATA_HOME, else HOME, and COREMOTION_CALIBRATION_DIR overrides both")
    func defaultDirectory() {
        #expect(DeviceCalibrationStore.defaultDirectory(environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/x/opencoremotion/calibration")
        #expect(DeviceCalibrationStore.defaultDirectory(environment: ["XDG_DATA_HOME": "relative", "HOME": "/h"]) == "/h/.local/share/opencoremotion/calibration")
        #expect(DeviceCalibrationStore.defaultDirectory(environment: ["COREMOTION_CALIBRATION_DIR": "/c", "HOME": "/h"]) == "/c")
        let iio = SourceInfo(identifier: "iio:iio:device3", name: "mpu9250", sensors: [:])
        #expect(DeviceCalibrationStore.identity(of: iio) == "iio:mpu9250")
        #expect(DeviceCalibrationStore.identity(of: SourceInfo(identifier: "i2c:/dev/i2c-1:0x68", name: "MPU-9250", sensors: [:])) == "i2c:/dev/i2c-1:0x68")
    }
}
