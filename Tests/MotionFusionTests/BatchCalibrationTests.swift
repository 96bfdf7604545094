import MotionFusion
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Deterministic Gaussian noise (sum of 12 uniforms) for the calibration tests.
struct CalibrationNoise {
    var seed: UInt64
    mutating func uniform() -> Double {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        return Double(seed >> 11) / Double(1 << 53)
    }
    mutating func gaussian() -> Double {
        var s = 0.0
        for _ in 0..<12 { s += uniform() }
        return s - 6
    }
    mutating func vector(_ sigma: Double) -> Vector3 { Vector3(gaussian(), gaussian(), gaussian()) * sigma }
    /// A uniformly distributed rotation (normalised Gaussian quaternion).
    mutating func rotation() -> Quaternion {
        let (w, x, y, z) = (gaussian(), gaussian(), gaussian(), gaussian())
        let n = (w * w + x * x + y * y + z * z).squareRoot()
        return Quaternion(w: w / n, x: x / n, y: y / n, z: z / n)
    }
}

/// The batch calibrations against simulated sensors with known errors.
@Suite struct BatchCalibrationTests {
    /// Earth's field in the world frame, µT (47.4 µT, dip ≈ 65°).
    static let field = Vector3(20, 0, -43)
    /// A phone's hard iron: 350, −220, 480 µT (|o| ≈ 634 µT, 13 times the field).
    static let hardIron = Vector3(350, -220, 480)
    /// A symmetric soft-iron distortion (the sensor reads S·h).
    static let softIron = Matrix3(rows: Vector3(1.10, 0.05, 0.03), Vector3(0.05, 0.90, -0.04), Vector3(0.03, -0.04, 1.05))

    static func readings(count: Int, noise: Double, seed: UInt64 = 7, orientation: ((inout CalibrationNoise, Int) -> Quaternion)? = nil) -> [Vector3] {
        var rng = CalibrationNoise(seed: seed)
        return (0..<count).map { i in
            let q = orientation.map { $0(&rng, i) } ?? rng.rotation()
            return softIron * q.inverseRotate(field) + hardIron + rng.vector(noise)
        }
    }

    static func maxElementDifference(_ a: Matrix3, _ b: Matrix3) -> Double {
        let d = a - b
        return [d.r0.x, d.r0.y, d.r0.z, d.r1.x, d.r1.y, d.r1.z, d.r2.x, d.r2.y, d.r2.z].map(abs).max()!
    }

    @Test("ellipsoid fit recovers a 634 µT hard iron and a full soft iron from 600 readings with 0.5 µT noise")
    func ellipsoidRecoversHardAndSoftIron() throws {
        let fit = try #require(MagnetometerEllipsoidFit.fit(Self.readings(count: 600, noise: 0.5)))
        #expect((fit.offset - Self.hardIron).length < 0.5, "offset \(fit.offset)")
        // W = B · Q^{1/2} with Q = (S Sᵀ)⁻¹ / |h|², so W = det(S)^{1/3} S⁻¹ for a symmetric S.
        let s = Self.softIron
        let expected = try #require(s.inverse) * cbrt(s.determinant)
        #expect(Self.maxElementDifference(fit.softIron, expected) < 0.005, "soft iron \(fit.softIron)")
        #expect(abs(fit.fieldStrength - Self.field.length * cbrt(s.determinant)) < 0.3)
        #expect(fit.fitsSoftIron)
        #expect(fit.relativeResidual < 0.02)
        #expect(fit.coverage > 0.8)
        #expect(fit.accuracy == .high)
        // The corrected field points where the true field does, within 0.5°.
        var rng = CalibrationNoise(seed: 3)
        for _ in 0..<50 {
            let q = rng.rotation()
            let truth = q.inverseRotate(Self.field)
            let corrected = fit.calibrate(s * truth + Self.hardIron)
            let angle = acos(min(1, corrected.dot(truth) / (corrected.length * truth.length)))
            #expect(angle < 0.5 * Double.pi / 180)
        }
    }

    @Test("an offset 100 times the field radius keeps the fit regular", arguments: [Vector3(5000, -3000, 4000), Vector3(0, 0, 0), Vector3(47, 0, 0)])
    func ellipsoidWithFarAndNearOffsets(offset: Vector3) throws {
        var rng = CalibrationNoise(seed: 11)
        let readings = (0..<400).map { _ in Self.softIron * rng.rotation().inverseRotate(Self.field) + offset + rng.vector(0.3) }
        let fit = try #require(MagnetometerEllipsoidFit.fit(readings))
        #expect((fit.offset - offset).length < 0.5, "offset \(fit.offset) for \(offset)")
        #expect(fit.accuracy == .high)
    }

    @Test("turns about one axis only (a circle, the offset along the axis unknown) fit no soft iron and grade uncalibrated")
    func planarTurnsAreNotACalibration() throws {
        // Flat on a table, turned about the vertical: only the horizontal components of the offset show.
        let readings = Self.readings(count: 300, noise: 0.5) { _, i in
            Quaternion(axis: Vector3(0, 0, 1), angle: Double(i) * 0.05)
        }
        let fit = try #require(MagnetometerEllipsoidFit.fit(readings))
        #expect(!fit.fitsSoftIron)
        #expect(fit.coverage < 0.02)
        #expect(fit.accuracy == .uncalibrated)
        // Tilted by up to 40° on the way round: a partial cover, graded low.
        let wobbly = Self.readings(count: 300, noise: 0.5) { _, i in
            Quaternion(axis: Vector3(0, 0, 1), angle: Double(i) * 0.05) * Quaternion(axis: Vector3(1, 0, 0), angle: 0.7 * sin(Double(i) * 0.13))
        }
        let partial = try #require(MagnetometerEllipsoidFit.fit(wobbly))
        #expect(partial.accuracy == .low, "coverage \(partial.coverage)")
        #expect((partial.offset - Self.hardIron).length < 10)
    }

    @Test("too few, identical or non-finite readings give no fit and no crash")
    func degenerateReadings() {
        #expect(MagnetometerEllipsoidFit.fit([]) == nil)
        #expect(MagnetometerEllipsoidFit.fit(Array(repeating: Vector3(1, 2, 3), count: 100)) == nil)
        #expect(MagnetometerEllipsoidFit.fit(Array(repeating: Vector3(.nan, 2, 3), count: 100)) == nil)
        #expect(MagnetometerEllipsoidFit.fit((0..<100).map { Vector3(Double($0), 0, 0) }) == nil)
        // NaN and infinite readings among good ones are skipped.
        var readings = Self.readings(count: 300, noise: 0.5)
        readings[5] = Vector3(.nan, 0, 0)
        readings[9] = Vector3(.infinity, 0, 0)
        #expect(MagnetometerEllipsoidFit.fit(readings).map { ($0.offset - Self.hardIron).length < 1 } == true)
    }

    static let accelerometerOffset = Vector3(0.03, -0.02, 0.05)
    static let accelerometerScale = Vector3(1.02, 0.98, 1.01)

    static func rawAccelerometer(_ g: Vector3, noise: Vector3 = .zero) -> Vector3 {
        Vector3(g.x * accelerometerScale.x, g.y * accelerometerScale.y, g.z * accelerometerScale.z) + accelerometerOffset + noise
    }

    static let faces = [Vector3(1, 0, 0), Vector3(-1, 0, 0), Vector3(0, 1, 0), Vector3(0, -1, 0), Vector3(0, 0, 1), Vector3(0, 0, -1)]

    @Test("six faces recover the accelerometer's offsets and scales within 0.002")
    func sixPoses() throws {
        var rng = CalibrationNoise(seed: 5)
        // Each face is the mean of 100 readings with 0.01 g noise: about 0.001 g left.
        let poses = Self.faces.map { Self.rawAccelerometer($0, noise: rng.vector(0.001)) }
        let fit = try #require(AccelerometerPoseFit.fit(poses: poses))
        #expect((fit.offset - Self.accelerometerOffset).length < 0.002, "offset \(fit.offset)")
        #expect((fit.scale - Self.accelerometerScale).length < 0.002, "scale \(fit.scale)")
        #expect(fit.faces == [true, true, true, true, true, true])
        #expect(fit.residual < 0.002)
    }

    @Test("twelve tilted poses recover the same; five poses or poses about one axis do not fit")
    func morePosesAndTooFew() throws {
        var rng = CalibrationNoise(seed: 8)
        let tilted = (0..<12).map { _ in rng.rotation().rotate(Vector3(0, 0, 1)) }
        let fit = try #require(AccelerometerPoseFit.fit(poses: tilted.map { Self.rawAccelerometer($0) }))
        #expect((fit.offset - Self.accelerometerOffset).length < 1e-6)
        #expect((fit.scale - Self.accelerometerScale).length < 1e-6)
        #expect(AccelerometerPoseFit.fit(poses: Self.faces.prefix(5).map { Self.rawAccelerometer($0) }) == nil)
        let aboutX = (0..<8).map { i in Self.rawAccelerometer(Vector3(0, sin(Double(i)), cos(Double(i)))) }
        #expect(AccelerometerPoseFit.fit(poses: aboutX) == nil)
    }

    @Test("the builder finds the rest, the gyroscope's 5 °/s bias, the six faces and the magnetometer's calibration")
    func builderFromAScriptedSession() throws {
        var rng = CalibrationNoise(seed: 21)
        var builder = CalibrationBuilder()
        let bias = Vector3(0.07, -0.05, 0.09) // rad/s: 4.0, −2.9, 5.2 °/s
        var t = 100.0
        let dt = 0.01
        func still(_ g: Vector3, seconds: Double) {
            for _ in 0..<Int(seconds / dt) {
                builder.addAccelerometer(Self.rawAccelerometer(-g, noise: rng.vector(0.003)), timestamp: t)
                builder.addGyro(bias + rng.vector(0.003), timestamp: t)
                t += dt
            }
        }
        func moving(seconds: Double) {
            for _ in 0..<Int(seconds / dt) {
                let q = rng.rotation()
                builder.addAccelerometer(Self.rawAccelerometer(q.inverseRotate(Vector3(0, 0, -1)) + rng.vector(0.2)), timestamp: t)
                builder.addGyro(bias + rng.vector(2), timestamp: t)
                builder.addMagnetometer(Self.softIron * q.inverseRotate(Self.field) + Self.hardIron + rng.vector(0.5), timestamp: t)
                t += dt
            }
        }
        still(Vector3(0, 0, 1), seconds: 3)
        for face in Self.faces {
            moving(seconds: 1)
            still(face, seconds: 2)
        }
        moving(seconds: 10)
        let result = builder.finish()
        let c = result.calibration
        let b = try #require(c.gyroBias)
        #expect((b - bias).length < 0.001, "bias \(b)")
        #expect(try #require(result.gyroRest).seconds >= 10)
        #expect(result.poses.count == 6)
        #expect((try #require(c.accelerometerOffset) - Self.accelerometerOffset).length < 0.003)
        #expect((try #require(c.accelerometerScale) - Self.accelerometerScale).length < 0.003)
        #expect((try #require(c.magnetometerOffset) - Self.hardIron).length < 1)
        #expect(c.magnetometerAccuracy == .high)
        #expect(c.problem == nil)
        // Applied, a raw face-up reading is −1 g on z.
        let up = c.accelerometer(Self.rawAccelerometer(Vector3(0, 0, -1)))
        #expect((up - Vector3(0, 0, -1)).length < 0.003)
    }

    @Test("a prior calibration makes the filter's calibrator report its grade until its own estimates grade as well")
    func priorAccuracySeedsTheCalibrator() {
        var driver = FusionDriver(usesMagnetometer: true)
        #expect(driver.estimate.magneticFieldAccuracy == .uncalibrated)
        driver.priorMagneticAccuracy = .high
        driver.updateAccelerometer(Vector3(0, 0, -1), timestamp: 1)
        driver.updateMagnetometer(Vector3(20, 0, -43), timestamp: 1)
        _ = driver.updateGyro(.zero, timestamp: 1)
        #expect(driver.estimate.magneticFieldAccuracy == .high)
        #expect(driver.estimate.magneticField == Vector3(20, 0, -43))
        var plain = FusionDriver(usesMagnetometer: true)
        plain.updateAccelerometer(Vector3(0, 0, -1), timestamp: 1)
        plain.updateMagnetometer(Vector3(20, 0, -43), timestamp: 1)
        _ = plain.updateGyro(.zero, timestamp: 1)
        #expect(plain.estimate.magneticFieldAccuracy == .uncalibrated)
    }

    @Test("a calibration with a non-finite value, a bad scale or an asymmetric soft iron says why it cannot be used")
    func problems() {
        #expect(SensorCalibration(gyroBias: Vector3(.nan, 0, 0)).problem != nil)
        #expect(SensorCalibration(accelerometerOffset: .zero, accelerometerScale: Vector3(1, 0, 1)).problem != nil)
        #expect(SensorCalibration(magnetometerOffset: .zero, magnetometerSoftIron: Matrix3(rows: Vector3(1, 0.5, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))).problem != nil)
        #expect(SensorCalibration(magnetometerOffset: .zero, magnetometerSoftIron: Matrix3.diagonal(Vector3(1, -1, 1))).problem != nil)
        #expect(SensorCalibration(magnetometerOffset: .zero, magnetometerSoftIron: .identity).problem == nil)
    }
}

/// The magnetometer calibration on a real recording with optical ground truth: BROAD trial 01 (slow
/// rotation; Laidig et al. 2021, CC-BY-4.0, `shared/data/broad`) with a phone's hard and soft iron added
/// to its already calibrated field. The calibrated field, rotated into the world frame by the optical
/// attitude, must be as steady as the field BROAD ships.
@Suite struct BroadCalibrationTests {
    struct Row {
        var t: Double
        var accelerometer: Vector3, gyro: Vector3, field: Vector3
        var truth: Quaternion?
    }

    static func rows(_ name: String) throws -> [Row] {
        let path = WorldMagneticModelTests.directory + "../broad/" + name
        let f = try #require(fopen(path, "r"), "\(path) missing")
        defer { fclose(f) }
        var rows: [Row] = []
        var line = [CChar](repeating: 0, count: 1024)
        var index = 0
        while fgets(&line, Int32(line.count), f) != nil {
            index += 1
            guard index > 2 else { continue }
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fields = text.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 14 else { continue }
            let v = fields.prefix(14).map { Double($0) }
            guard let t = v[0], let ax = v[1], let ay = v[2], let az = v[3], let gx = v[4], let gy = v[5], let gz = v[6],
                  let mx = v[7], let my = v[8], let mz = v[9] else { continue }
            var q: Quaternion?
            if let w = v[10], let x = v[11], let y = v[12], let z = v[13] { q = Quaternion(w: w, x: x, y: y, z: z) }
            rows.append(Row(t: t, accelerometer: Vector3(ax, ay, az) * (-1 / 9.80665), gyro: Vector3(gx, gy, gz),
                            field: Vector3(mx, my, mz), truth: q))
        }
        return rows
    }

    /// Rms angle (degrees) of the world-frame field from its mean direction, every 10th row with truth.
    static func directionSpread(_ rows: [Row], _ calibrate: (Vector3) -> Vector3) -> Double {
        var world: [Vector3] = []
        for (i, r) in rows.enumerated() where i % 10 == 0 {
            if let q = r.truth, let u = q.rotate(calibrate(r.field)).normalized { world.append(u) }
        }
        var mean = Vector3.zero
        for w in world { mean += w }
        guard let m = mean.normalized else { return .infinity }
        var sum = 0.0
        for w in world {
            let a = acos(min(1, w.dot(m)))
            sum += a * a
        }
        return (sum / Double(world.count)).squareRoot() * 180 / Double.pi
    }

    @Test("BROAD 01 with a 634 µT hard iron and soft iron added: offset within 0.5 µT per axis, world field as steady as BROAD's own")
    func broadWithPhoneHardIron() throws {
        let rows = try Self.rows("01_undisturbed_slow_rotation_A.csv")
        try #require(rows.count > 10_000)
        let distort = { (m: Vector3) in BatchCalibrationTests.softIron * m + BatchCalibrationTests.hardIron }
        var builder = CalibrationBuilder()
        for r in rows {
            builder.addAccelerometer(r.accelerometer, timestamp: r.t)
            builder.addGyro(r.gyro, timestamp: r.t)
            builder.addMagnetometer(distort(r.field), timestamp: r.t)
        }
        let result = builder.finish()
        let fit = try #require(result.magnetometer)
        let e = fit.offset - BatchCalibrationTests.hardIron
        #expect(max(abs(e.x), abs(e.y), abs(e.z)) < 0.5, "offset error \(e)")
        let shipped = Self.directionSpread(rows) { $0 }
        let raw = Self.directionSpread(rows, distort)
        let ours = Self.directionSpread(rows) { fit.calibrate(distort($0)) }
        #expect(raw > 30)
        #expect(ours < shipped + 0.2, "ours \(ours)°, shipped \(shipped)°")
        #expect(abs(fit.fieldStrength - 44) < 1.5, "field \(fit.fieldStrength) µT")
        // Slow rotations about few axes: not graded high.
        #expect(fit.accuracy < .high)
        // The IMU's gyroscope bias at rest (z ≈ 0.47 °/s on all three rotation trials of this IMU).
        let b = try #require(result.calibration.gyroBias) * (180 / Double.pi)
        #expect(abs(b.z - 0.47) < 0.05 && abs(b.x) < 0.15 && abs(b.y) < 0.15, "bias \(b) °/s")
    }
}
