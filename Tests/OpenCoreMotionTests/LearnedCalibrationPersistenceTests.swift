import Foundation
import MotionFusion
import MotionSources
@testable import OpenCoreMotion
import Testing

/// What device-motion fusion learns online (gyro bias, magnetometer calibration) survives a restart: part
/// of ``DeviceCalibrationTests`` because both set the process's calibration directory (serialized).
extension DeviceCalibrationTests {
    /// A simulated hand-held device with a constant gyro bias (≈ 0.69, −0.52, 0.34 °/s) and the
    /// simulator's hard iron (14, −9, 22 µT).
    static func learnedOptions(seed: UInt64) -> SimulationOptions {
        SimulationOptions.constantGyroBias(Vector3(0.012, -0.009, 0.006), scenario: .handheld, seed: seed)
    }

    /// Feeds `seconds` of `options` to `source`; after each gyro sample calls `check` with the truth.
    static func feed(_ source: ManualSource, _ options: SimulationOptions, seconds: Double, startTime: Double,
                     check: (SimulatedTruth) -> Void = { _ in }) {
        var sim = MotionSimulator(options: options, startTime: startTime)
        while true {
            let s = sim.next()
            if s.timestamp - startTime > seconds { break }
            source.emit(s)
            if s.sensor == .gyro { check(sim.truth(at: s.timestamp)) }
        }
    }

    /// The first second of device motion of a manager on a new source object of `identity` (a new launch):
    /// the first update's field accuracy and the mean rotation-rate error against the truth.
    static func relaunch(_ identity: String) async throws -> (CMMagneticFieldCalibrationAccuracy, Double) {
        let source = ManualSource(identifier: identity)
        let manager = CMMotionManager(source: source)
        manager.deviceMotionUpdateInterval = 0.01
        manager.startDeviceMotionUpdates(using: .xMagneticNorthZVertical)
        var firstAccuracy: CMMagneticFieldCalibrationAccuracy?
        var errorSum = Vector3.zero
        var count = 0.0
        Self.feed(source, Self.learnedOptions(seed: 32), seconds: 1, startTime: 500) { truth in
            guard let m = manager.deviceMotion, m.timestamp == truth.timestamp else { return }
            // The first update precedes the first magnetometer sample (same timestamp, fed after the
            // gyroscope): the field's accuracy is read from the second.
            if firstAccuracy == nil, count >= 1 { firstAccuracy = m.magneticField.accuracy }
            errorSum += Vector3(m.rotationRate.x, m.rotationRate.y, m.rotationRate.z) - truth.rotationRate
            count += 1
        }
        manager.stopDeviceMotionUpdates()
        try await Self.waitForStop(source)
        return (try #require(firstAccuracy), count > 0 ? (errorSum * (1 / count)).length : .infinity)
    }

    /// Waits (without blocking a thread) until the hub of `source` has stopped it, and so saved what it
    /// learned, for at most 60 s (a bound on a failure only).
    static func waitForStop(_ source: ManualSource) async throws {
        let hub = SourceHub.hub(for: source)
        for _ in 0..<3000 where hub.isReconciling {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(!hub.isReconciling)
    }

    @Test("a restarted manager starts with the gyro bias and magnetometer calibration the previous run learned; a corrupt file or calibration off starts uncalibrated")
    func learnedCalibrationSurvivesARestart() async throws {
        let dir = try Self.temporaryDirectory()
        let identity = "test:learned-\(UUID().uuidString)"
        let store = DeviceCalibrationStore(directory: dir)
        DeviceCalibrationStore.processOverride.withLock { $0 = .directory(dir) }
        defer { DeviceCalibrationStore.processOverride.withLock { $0 = nil } }

        // Without anything learned: the bias is in the rate, the field uncalibrated.
        let (freshAccuracy, freshError) = try await Self.relaunch("test:fresh-\(UUID().uuidString)")
        #expect(freshAccuracy == .uncalibrated)
        #expect(freshError > 0.01, "fresh mean rate error \(freshError) rad/s")

        // First run: two minutes of hand-held motion, then stop.
        do {
            let source = ManualSource(identifier: identity)
            let manager = CMMotionManager(source: source)
            manager.deviceMotionUpdateInterval = 0.01
            manager.startDeviceMotionUpdates(using: .xMagneticNorthZVertical)
            Self.feed(source, Self.learnedOptions(seed: 31), seconds: 130, startTime: 100)
            #expect(manager.deviceMotion.map { $0.magneticField.accuracy.rawValue >= CMMagneticFieldCalibrationAccuracy.medium.rawValue } == true)
            manager.stopDeviceMotionUpdates()
            try await Self.waitForStop(source)
        }
        let saved = try #require(try store.loadLearned(identity))
        #expect(saved.basis == nil)
        #expect((saved.learned.gyroBias - Vector3(0.012, -0.009, 0.006)).length < 1.5e-3, "\(saved.learned.gyroBias)")
        #expect(saved.learned.magneticAccuracy >= .medium)
        #expect(try store.load(identity) == nil, "the explicit calibration's file is not written")

        // Second launch: calibrated from its first samples.
        let (accuracy, error) = try await Self.relaunch(identity)
        #expect(accuracy != .uncalibrated)
        #expect(error < 2e-3, "restarted mean rate error \(error) rad/s")

        // Calibration off: the learned state is neither used nor changed.
        DeviceCalibrationStore.processOverride.withLock { $0 = .off }
        let (offAccuracy, offError) = try await Self.relaunch(identity)
        #expect(offAccuracy == .uncalibrated)
        #expect(offError > 0.01)
        DeviceCalibrationStore.processOverride.withLock { $0 = .directory(dir) }

        // A corrupt file and a file of another version: one clear error each, and the run starts uncalibrated.
        for text in ["{ not json", #"{"version": 9, "identity": "x", "updated": "", "magnetometerAccuracy": "low"}"#] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: store.learnedPath(for: identity)))
            #expect(throws: DeviceCalibrationError.self) { try store.loadLearned(identity) }
            do {
                _ = try store.loadLearned(identity)
            } catch {
                #expect(error.description.hasPrefix(store.learnedPath(for: identity) + ": "))
                #expect(error.description.contains(text.hasPrefix("{ not") ? "not a learned-calibration file" : "version 9 is not supported"))
            }
            let (badAccuracy, badError) = try await Self.relaunch(identity)
            #expect(badAccuracy == .uncalibrated)
            #expect(badError > 0.01)
        }
    }

    @Test("a learned record survives the file round trip; a learned state over another explicit calibration is not used")
    func learnedRecordRoundTrip() throws {
        let store = DeviceCalibrationStore(directory: try Self.temporaryDirectory())
        let learned = LearnedCalibration(gyroBias: Vector3(0.01, -0.02, 0.003), gyroBiasVariance: Vector3(1e-8, 4e-8, 9e-8),
                                         magneticOffset: Vector3(14, -9, 22), magneticGains: Vector3(1.01, 0.99, 1),
                                         magneticFieldStrength: 48.5, magneticAccuracy: .medium)
        let record = LearnedCalibrationRecord(identity: "iio:lsm9ds1", updated: "2026-11-28T08:00:00Z",
                                              basis: "2026-11-27T21:50:00Z", learned: learned)
        let path = try store.saveLearned(record)
        #expect(path == store.directory + "/learned/iio%3Alsm9ds1.json")
        let back = try #require(try store.loadLearned("iio:lsm9ds1"))
        #expect(back.basis == record.basis)
        #expect(back.learned.magneticOffset == learned.magneticOffset)
        #expect(back.learned.magneticAccuracy == .medium)
        #expect((back.learned.gyroBiasVariance - learned.gyroBiasVariance).length < 1e-20)
        #expect(try store.loadLearned("iio:other") == nil)
        #expect(LearnedCalibrationRecord.isInformative(learned))
        #expect(!LearnedCalibrationRecord.isInformative(AttitudeFilter().learnedCalibration))
    }

    @Test("the hand-written learned file is the JSON Foundation reads: every number exact, strings escaped, keys sorted; a non-finite number is refused on reading")
    func learnedFileIsValidJSON() throws {
        let learned = LearnedCalibration(gyroBias: Vector3(0.1 + 0.2, -1e-300, .leastNonzeroMagnitude), gyroBiasVariance: Vector3(1e-8, 2.5e-7, 0),
                                         magneticOffset: Vector3(14.25, -9, 1e21), magneticGains: Vector3(1.0000000000000002, 0.99, 1),
                                         magneticFieldStrength: 48.5, magneticAccuracy: .high)
        let identity = "evdev:/dev/input/\"odd\\name\"\n\t\u{1}é🧭"
        let record = LearnedCalibrationRecord(identity: identity, updated: "2026-11-28T08:00:00Z", basis: nil, learned: learned)
        let bytes = record.encoded()
        #expect(bytes.last == 0x0A)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["identity"] as? String == identity)
        #expect(object["version"] as? Int == 1)
        #expect(object["basis"] == nil, "no explicit calibration: no basis field")
        #expect(object["magnetometerAccuracy"] as? String == "high")
        // JSONSerialization parses some numbers 1 ulp off (0.30000000000000004 reads as 0.3000000000000001):
        // here within 1e-15 relative; exactness is checked below with JSONDecoder, which the store reads with.
        func close(_ a: [Double]?, _ b: [Double]) -> Bool {
            guard let a, a.count == b.count else { return false }
            return zip(a, b).allSatisfy { abs($0 - $1) <= 1e-15 * max(abs($0), abs($1)) }
        }
        #expect(close(object["gyroBias"] as? [Double], [0.1 + 0.2, -1e-300, .leastNonzeroMagnitude]), "\(object["gyroBias"] ?? "none")")
        #expect((object["gyroBiasSigma"] as? [Double]) == [1e-8.squareRoot(), 2.5e-7.squareRoot(), 0])
        #expect((object["magnetometerOffset"] as? [Double]) == [14.25, -9, 1e21])
        #expect(close(object["magnetometerGains"] as? [Double], [1.0000000000000002, 0.99, 1]), "\(object["magnetometerGains"] ?? "none")")
        #expect(object["magneticFieldStrength"] as? Double == 48.5)
        let text = String(decoding: bytes, as: UTF8.self)
        let keys = text.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map { $0.dropFirst(3).prefix { $0 != "\"" } }
        #expect(keys == ["gyroBias", "gyroBiasSigma", "identity", "magneticFieldStrength", "magnetometerAccuracy",
                         "magnetometerGains", "magnetometerOffset", "updated", "version"])
        let back = try LearnedCalibrationRecord.decode(Data(bytes), path: "p")
        #expect(back.identity == identity && back.updated == record.updated && back.basis == nil)
        #expect(back.learned.gyroBias == learned.gyroBias && back.learned.magneticOffset == learned.magneticOffset)
        #expect(back.learned.magneticGains == learned.magneticGains && back.learned.magneticAccuracy == .high)
        #expect((back.learned.gyroBiasVariance - learned.gyroBiasVariance).length < 1e-20, "stored as a standard deviation")

        // Uncalibrated magnetometer: only the gyroscope's fields; with a basis, the basis.
        let plain = LearnedCalibrationRecord(identity: "iio:x", updated: "u", basis: "2026-11-27T21:50:00Z",
                                             learned: LearnedCalibration(gyroBias: Vector3(1, 2, 3), gyroBiasVariance: Vector3(1, 1, 1)))
        let plainObject = try #require(try JSONSerialization.jsonObject(with: Data(plain.encoded())) as? [String: Any])
        #expect(Set(plainObject.keys) == ["basis", "gyroBias", "gyroBiasSigma", "identity", "magnetometerAccuracy", "updated", "version"])
        #expect(try LearnedCalibrationRecord.decode(Data(plain.encoded()), path: "p") == plain)

        // A NaN is written as null, which reading refuses (saving refuses it before writing).
        var broken = record
        broken.learned.gyroBias.y = .nan
        #expect(String(decoding: broken.encoded(), as: UTF8.self).contains("null"))
        #expect(throws: DeviceCalibrationError.self) { try LearnedCalibrationRecord.decode(Data(broken.encoded()), path: "p") }
        let store = DeviceCalibrationStore(directory: try Self.temporaryDirectory())
        #expect(throws: DeviceCalibrationError.self) { try store.saveLearned(broken) }
        #expect(!FileManager.default.fileExists(atPath: store.learnedPath(for: identity)))
    }

    @Test("saving learned state creates missing directories, replaces the file whole and leaves no temporary file; an unwritable place is a clear error")
    func learnedSaveIsAtomicAndCreatesDirectories() throws {
        let root = try Self.temporaryDirectory()
        let store = DeviceCalibrationStore(directory: root + "/a/b/calibration")
        let first = LearnedCalibrationRecord(identity: "i2c:/dev/i2c-1:0x68", updated: "1", basis: nil,
                                             learned: LearnedCalibration(gyroBias: Vector3(1, 2, 3), gyroBiasVariance: Vector3(1, 1, 1)))
        let path = try store.saveLearned(first)
        #expect(try store.loadLearned(first.identity) == first)
        var second = first
        second.updated = "2"
        second.learned.magneticOffset = Vector3(14, -9, 22)
        second.learned.magneticAccuracy = .medium
        second.learned.magneticFieldStrength = 48
        #expect(try store.saveLearned(second) == path)
        #expect(try store.loadLearned(first.identity) == second)
        let names = try FileManager.default.contentsOfDirectory(atPath: store.directory + "/learned")
        #expect(names == ["i2c%3A%2Fdev%2Fi2c-1%3A0x68.json"], "no temporary file left: \(names)")

        // The store's directory is a file: nothing can be created under it.
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/file"))
        let blocked = DeviceCalibrationStore(directory: root + "/file/calibration")
        #expect(throws: DeviceCalibrationError.self) { try blocked.saveLearned(first) }
        do {
            try blocked.saveLearned(first)
        } catch {
            #expect(error.description.hasPrefix(blocked.learnedPath(for: first.identity) + ": cannot be written: cannot create " + root + "/file/calibration"),
                    "\(error.description)")
        }
    }
}
