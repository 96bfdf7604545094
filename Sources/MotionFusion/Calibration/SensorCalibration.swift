/// The calibration of one device's three motion sensors, as stored per device and applied to its raw
/// readings: any part may be absent (not calibrated), and each part applies on its own.
///
/// - gyroscope: calibrated = raw − ``gyroBias`` (rad/s);
/// - accelerometer: calibrated = (raw − ``accelerometerOffset``) ⊘ ``accelerometerScale`` (g);
/// - magnetometer: calibrated = ``magnetometerSoftIron`` · (raw − ``magnetometerOffset``) (µT), graded
///   ``magnetometerAccuracy`` (Core Motion's `CMMagneticFieldCalibrationAccuracy`).
///
/// Values only; safe to share between threads.
public struct SensorCalibration: Sendable, Hashable {
    /// Gyroscope bias, rad/s, device frame; `nil`: not calibrated.
    public var gyroBias: Vector3?
    /// Accelerometer offset, g; `nil`: not calibrated (then ``accelerometerScale`` is ignored).
    public var accelerometerOffset: Vector3?
    /// Accelerometer scale per axis, dimensionless; used with ``accelerometerOffset``.
    public var accelerometerScale: Vector3?
    /// Magnetometer hard-iron offset, µT; `nil`: not calibrated (then the soft iron is ignored).
    public var magnetometerOffset: Vector3?
    /// Magnetometer soft-iron correction, symmetric, dimensionless; `nil` with an offset: identity.
    public var magnetometerSoftIron: Matrix3?
    /// The field strength the magnetometer calibration maps onto, µT; `nil` if unknown.
    public var magneticFieldStrength: Double?
    /// The grade of the magnetometer calibration; ``MagneticCalibrationAccuracy/uncalibrated`` without one.
    public var magnetometerAccuracy: MagneticCalibrationAccuracy

    /// Creates a calibration; every part defaults to absent.
    public init(gyroBias: Vector3? = nil, accelerometerOffset: Vector3? = nil, accelerometerScale: Vector3? = nil,
                magnetometerOffset: Vector3? = nil, magnetometerSoftIron: Matrix3? = nil,
                magneticFieldStrength: Double? = nil, magnetometerAccuracy: MagneticCalibrationAccuracy = .uncalibrated) {
        self.gyroBias = gyroBias
        self.accelerometerOffset = accelerometerOffset
        self.accelerometerScale = accelerometerScale
        self.magnetometerOffset = magnetometerOffset
        self.magnetometerSoftIron = magnetometerSoftIron
        self.magneticFieldStrength = magneticFieldStrength
        self.magnetometerAccuracy = magnetometerAccuracy
    }

    /// Whether any part is present.
    public var isEmpty: Bool { gyroBias == nil && accelerometerOffset == nil && magnetometerOffset == nil }

    /// Whether the magnetometer part is present.
    public var calibratesMagnetometer: Bool { magnetometerOffset != nil }

    /// A calibrated gyroscope reading, rad/s.
    @inlinable
    public func gyro(_ raw: Vector3) -> Vector3 { gyroBias.map { raw - $0 } ?? raw }

    /// A calibrated accelerometer reading, g.
    @inlinable
    public func accelerometer(_ raw: Vector3) -> Vector3 {
        guard let o = accelerometerOffset else { return raw }
        let d = raw - o
        guard let s = accelerometerScale else { return d }
        return Vector3(d.x / s.x, d.y / s.y, d.z / s.z)
    }

    /// A calibrated magnetometer reading, µT.
    @inlinable
    public func magnetometer(_ raw: Vector3) -> Vector3 {
        guard let o = magnetometerOffset else { return raw }
        let d = raw - o
        return magnetometerSoftIron.map { $0 * d } ?? d
    }

    /// Why the calibration cannot be used, or `nil` when it can: a value that is not finite, a scale
    /// that is not positive, a soft-iron matrix that is not symmetric positive definite.
    public var problem: String? {
        if let b = gyroBias, !b.isFinite { return "the gyroscope bias is not finite" }
        if let o = accelerometerOffset, !o.isFinite { return "the accelerometer offset is not finite" }
        if let s = accelerometerScale, !(s.isFinite && s.x > 0 && s.y > 0 && s.z > 0) {
            return "the accelerometer scale must be finite and positive"
        }
        if let o = magnetometerOffset, !o.isFinite { return "the magnetometer offset is not finite" }
        if let w = magnetometerSoftIron {
            guard w.isFinite else { return "the soft-iron matrix is not finite" }
            let asymmetry = max(abs(w.r0.y - w.r1.x), abs(w.r0.z - w.r2.x), abs(w.r1.z - w.r2.y))
            let size = max(abs(w.r0.x), abs(w.r1.y), abs(w.r2.z))
            guard asymmetry <= 1e-6 * max(size, 1) else { return "the soft-iron matrix is not symmetric" }
            guard SymmetricEigen3(w).values.x > 0 else { return "the soft-iron matrix is not positive definite" }
        }
        if let f = magneticFieldStrength, !(f.isFinite && f > 0) { return "the field strength must be finite and positive" }
        return nil
    }
}

/// Builds a ``SensorCalibration`` from raw readings of a device that lies still for a while, is laid
/// on its faces and is turned around all axes (a recording, or a live `coremotion calibrate`).
///
/// - gyroscope bias: the mean rate over the rest found by ``RestDetector``;
/// - accelerometer: ``AccelerometerPoseFit`` over the distinct rest poses (means of rest segments more
///   than ``distinctPoseAngle`` apart; segments closer than that are merged), when there are at least six
///   and they show all six faces;
/// - magnetometer: ``MagnetometerEllipsoidFit`` over the readings, one kept each time the raw reading has
///   moved by ``magnetometerStep`` from the last one kept (so a long rest does not outweigh the turns; a
///   distance rather than an angle, because a hard iron ten times the field hides the turns from the raw
///   direction).
///
/// Feed samples in time order per sensor. Memory: one vector per kept magnetometer reading.
public struct CalibrationBuilder: Sendable {
    /// The rest detector (thresholds may be changed before feeding).
    public var rest = RestDetector()
    /// Smallest angle between distinct poses, radians. Default 0.35 rad (20°).
    public var distinctPoseAngle: Double = 0.35
    /// Smallest distance between kept magnetometer readings, µT. Default 1 µT (twice a phone
    /// magnetometer's noise; a turn of about 1.2° in a 47 µT field).
    public var magnetometerStep: Double = 1

    private var magnetometer: [Vector3] = []
    private var lastKept: Vector3?
    private var counts = (accelerometer: 0, gyro: 0, magnetometer: 0)

    /// Creates an empty builder.
    public init() {}

    /// Feeds an accelerometer sample, g.
    public mutating func addAccelerometer(_ value: Vector3, timestamp: Double) {
        guard value.isFinite, timestamp.isFinite else { return }
        counts.accelerometer += 1
        rest.addAccelerometer(value, timestamp: timestamp)
    }

    /// Feeds a gyroscope sample, rad/s.
    public mutating func addGyro(_ value: Vector3, timestamp: Double) {
        guard value.isFinite, timestamp.isFinite else { return }
        counts.gyro += 1
        rest.addGyro(value, timestamp: timestamp)
    }

    /// Feeds a raw magnetometer sample, µT.
    public mutating func addMagnetometer(_ value: Vector3, timestamp: Double) {
        guard value.isFinite, timestamp.isFinite, value.length > 0 else { return }
        counts.magnetometer += 1
        if let last = lastKept, (value - last).lengthSquared < magnetometerStep * magnetometerStep { return }
        lastKept = value
        magnetometer.append(value)
    }

    /// The result of a build: the calibration and what each part is based on.
    public struct Result: Sendable {
        /// The calibration (parts without enough data are absent).
        public var calibration: SensorCalibration
        /// The rest used for the gyroscope bias: its standard error per axis (rad/s) and duration (s).
        public var gyroRest: (standardError: Vector3, seconds: Double)?
        /// The accelerometer fit, when there was one.
        public var accelerometer: AccelerometerPoseFit?
        /// The distinct rest poses found (mean readings, g), and the faces they show (`+x, −x, +y, −y, +z, −z`).
        public var poses: [Vector3]
        /// The magnetometer fit, when there was one.
        public var magnetometer: MagnetometerEllipsoidFit?
        /// Samples fed per sensor.
        public var sampleCounts: (accelerometer: Int, gyro: Int, magnetometer: Int)
        /// Magnetometer readings kept for the fit.
        public var magnetometerReadings: Int
    }

    /// Finishes: closes the rest detector's last window and fits every part with enough data.
    public mutating func finish() -> Result {
        rest.finish()
        var calibration = SensorCalibration()
        var gyroRest: (Vector3, Double)?
        if let b = rest.gyroBias {
            calibration.gyroBias = b.bias
            gyroRest = (b.standardError, b.restSeconds)
        }
        // Distinct poses: merge rest segments whose mean directions are within distinctPoseAngle.
        var poses: [(sum: Vector3, weight: Double)] = []
        let cosLimit = _cos(distinctPoseAngle)
        for s in rest.segments {
            let w = max(s.end - s.start, 1e-3)
            guard let u = s.accelerometerMean.normalized else { continue }
            if let i = poses.firstIndex(where: { ($0.sum / $0.weight).normalized.map { $0.dot(u) >= cosLimit } ?? false }) {
                poses[i].sum += s.accelerometerMean * w
                poses[i].weight += w
            } else {
                poses.append((s.accelerometerMean * w, w))
            }
        }
        let means = poses.map { $0.sum / $0.weight }
        var accelerometer: AccelerometerPoseFit?
        if AccelerometerPoseFit.faces(of: means).allSatisfy({ $0 }), let fit = AccelerometerPoseFit.fit(poses: means) {
            accelerometer = fit
            calibration.accelerometerOffset = fit.offset
            calibration.accelerometerScale = fit.scale
        }
        let magnetic = MagnetometerEllipsoidFit.fit(magnetometer)
        if let m = magnetic, m.accuracy >= .low {
            calibration.magnetometerOffset = m.offset
            calibration.magnetometerSoftIron = m.softIron
            calibration.magneticFieldStrength = m.fieldStrength
            calibration.magnetometerAccuracy = m.accuracy
        }
        return Result(calibration: calibration, gyroRest: gyroRest, accelerometer: accelerometer, poses: means,
                      magnetometer: magnetic, sampleCounts: counts, magnetometerReadings: magnetometer.count)
    }
}
