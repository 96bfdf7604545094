import MotionFusion
import MotionSources

/// Device motion for the hub's consumers: one attitude filter (MotionFusion's ``FusionDriver``) fed
/// with every sample, and each consumer's reference frame (``ReferenceFrameProjection``), created at
/// its first update.
struct DeviceMotionFusion {
    /// The rate in Hz at which device motion runs the sensors, at least: fusion wants samples often
    /// even when the consumer wants few updates.
    static let minimumRate = 100.0

    private var driver: FusionDriver?
    /// The grade of a stored magnetometer calibration already applied to the samples: every new filter
    /// starts from it (``FusionDriver/priorMagneticAccuracy``). Default: none.
    var priorMagneticAccuracy: MagneticCalibrationAccuracy = .uncalibrated
    /// What an earlier filter of this device learned (``LearnedCalibration``): every new filter starts from
    /// it, after ``priorMagneticAccuracy`` (an explicit magnetometer calibration keeps precedence). Loaded
    /// from the store when the hub starts, and replaced by each filter's learned state when it is dropped.
    var learned: LearnedCalibration?
    /// Whether learned state is kept at all (the hub persists it for this source); default `false`: every
    /// filter starts fresh, as with `COREMOTION_CALIBRATION=off`.
    var keepsLearned = false
    /// Learned state to save (``takeUnsavedLearned()``): set when a filter is dropped, and every
    /// ``learnedCheckpointInterval`` of samples when it changed.
    private var unsavedLearned: LearnedCalibration?
    /// The last learned state handed out for saving (or loaded), to save only changes.
    private var savedLearned: LearnedCalibration?
    /// Timestamp of the last checkpoint of the learned state, seconds (the first fused sample's, at first).
    private var lastCheckpoint = -Double.infinity
    /// How often a running filter's learned state is offered for saving when it changed, seconds of samples.
    static let learnedCheckpointInterval = 60.0
    private var projections: [Int: ReferenceFrameProjection] = [:]
    /// The latest raw readings, for device motion from the source's own attitude.
    private var latest: [SensorKind: Vector3] = [:]

    /// Drops the filter's state (no device motion consumer left, or the source stopped).
    mutating func reset() {
        if let driver, driver.hasStarted { keep(driver.learnedCalibration) }
        driver = nil
        latest = [:]
        lastCheckpoint = -Double.infinity
    }

    /// Makes `learned` the next filter's starting point and, when it is informative and differs from the
    /// last one saved, the state to save.
    private mutating func keep(_ learned: LearnedCalibration) {
        guard keepsLearned, LearnedCalibrationRecord.isInformative(learned) else { return }
        self.learned = learned
        if learned != savedLearned { unsavedLearned = learned }
    }

    /// Whether learned state waits to be saved (cheap: checked per sample).
    var hasUnsavedLearned: Bool { unsavedLearned != nil }

    /// The learned state to save, once; `nil` when nothing new.
    mutating func takeUnsavedLearned() -> LearnedCalibration? {
        guard let l = unsavedLearned else { return nil }
        unsavedLearned = nil
        savedLearned = l
        return l
    }

    /// Sets the state loaded from the store (the starting point, and what counts as already saved).
    mutating func load(_ learned: LearnedCalibration) {
        self.learned = learned
        savedLearned = learned
    }

    /// Forgets a consumer's reference frame.
    mutating func forget(_ consumer: Int) {
        projections[consumer] = nil
    }

    /// Feeds one sample; returns the estimate when the sample makes a fused update.
    mutating func update(_ sample: RawSample, usesMagnetometer: Bool) -> AttitudeEstimate? {
        var driver: FusionDriver
        if let existing = self.driver {
            driver = existing
        } else {
            driver = FusionDriver(usesMagnetometer: usesMagnetometer)
            driver.priorMagneticAccuracy = priorMagneticAccuracy
            if let learned { driver.seed(from: learned) }
        }
        driver.usesMagnetometer = usesMagnetometer
        let fused = driver.update(sample)
        self.driver = driver
        guard fused else { return nil }
        if sample.timestamp - lastCheckpoint >= Self.learnedCheckpointInterval {
            // Checkpoint (first at the first fused sample, which only starts the clock).
            if lastCheckpoint > -Double.infinity { keep(driver.learnedCalibration) }
            lastCheckpoint = sample.timestamp
        }
        return driver.estimate
    }

    /// Device motion from the source's own attitude (``OwnAttitudeProviding``): records the sample and,
    /// when it is a `trigger` sample (the gyroscope, or the accelerometer for a source without one),
    /// an accelerometer reading is known and `own` is present, returns the update for its timestamp.
    mutating func updateOwn(_ sample: RawSample, own: OwnAttitude?, trigger: SensorKind) -> OwnDeviceMotion? {
        latest[sample.sensor] = sample.value
        guard sample.sensor == trigger, let own, let acceleration = latest[.accelerometer] else { return nil }
        let gravity = own.effectiveGravity
        return OwnDeviceMotion(
            timestamp: sample.timestamp, own: own, gravity: gravity, userAcceleration: acceleration - gravity,
            rotationRate: latest[.gyro] ?? .zero, magneticField: latest[.magnetometer]
        )
    }

    /// Expresses device motion from the source's own attitude in a consumer's reference frame (the same
    /// projection as fused updates: the arbitrary frames start at yaw 0, true north turns by the
    /// declination). The magnetic field is the raw one, uncalibrated (zero in `xArbitraryZVertical`).
    mutating func deviceMotion(_ m: OwnDeviceMotion, frame: CMAttitudeReferenceFrame, declination: Double,
                               consumer: Int) -> CMDeviceMotion {
        let target = frame.attitudeReferenceFrame(declinationDegrees: declination)
        var projection = projections[consumer] ?? ReferenceFrameProjection(target)
        // The projection takes a magnetic-north attitude; a true-north one is turned back by the declination.
        let base = m.own.isTrueNorth ? (Quaternion.aboutZ(declination * .pi / 180) * m.own.attitude).normalized : m.own.attitude
        let (q, heading) = projection.express(base, isNorthReferenced: true)
        projections[consumer] = projection
        let field = target == .arbitrary ? Vector3.zero : (m.magneticField ?? .zero)
        return CMDeviceMotion(
            timestamp: m.timestamp,
            rotation: q,
            rotationRate: CMRotationRate(m.rotationRate),
            gravity: CMAcceleration(m.gravity),
            userAcceleration: CMAcceleration(m.userAcceleration),
            magneticField: CMCalibratedMagneticField(field: CMMagneticField(field), accuracy: .uncalibrated),
            heading: heading
        )
    }

    /// Expresses an estimate in a consumer's reference frame.
    mutating func deviceMotion(_ e: AttitudeEstimate, at t: Double, frame: CMAttitudeReferenceFrame, declination: Double,
                               consumer: Int) -> CMDeviceMotion {
        var projection = projections[consumer] ?? ReferenceFrameProjection(frame.attitudeReferenceFrame(declinationDegrees: declination))
        let m = projection.motion(e, timestamp: t)
        projections[consumer] = projection
        return CMDeviceMotion(
            timestamp: t,
            rotation: m.attitude,
            rotationRate: CMRotationRate(m.rotationRate),
            gravity: CMAcceleration(m.gravity),
            userAcceleration: CMAcceleration(m.userAcceleration),
            magneticField: CMCalibratedMagneticField(
                field: CMMagneticField(m.magneticField),
                accuracy: CMMagneticFieldCalibrationAccuracy(m.magneticFieldAccuracy)
            ),
            heading: m.heading
        )
    }
}

/// Where device motion comes from for one sample: the hub's fusion, or the source's own attitude
/// (`nil` while the source has none or it is stale: no update then).
enum DeviceMotionBasis {
    case fusion
    case own(OwnAttitude?)
}

/// One device-motion update from a source's own attitude, before projection into a frame.
struct OwnDeviceMotion {
    /// Seconds since boot (the trigger sample's).
    var timestamp: Double
    var own: OwnAttitude
    /// g, device frame.
    var gravity: Vector3
    /// Accelerometer minus gravity, g.
    var userAcceleration: Vector3
    /// The gyroscope's latest reading, rad/s (zero without one).
    var rotationRate: Vector3
    /// The magnetometer's latest reading, µT, when it runs.
    var magneticField: Vector3?
}

extension CMAttitudeReferenceFrame {
    /// The MotionFusion frame of a single Core Motion frame; `declinationDegrees` (positive east) for
    /// true north. Any other value is the arbitrary frame.
    func attitudeReferenceFrame(declinationDegrees: Double) -> AttitudeReferenceFrame {
        switch self {
        case .xMagneticNorthZVertical: .magneticNorth
        case .xTrueNorthZVertical: .trueNorth(declination: declinationDegrees * .pi / 180)
        case .xArbitraryCorrectedZVertical: .arbitraryCorrected
        default: .arbitrary
        }
    }
}
