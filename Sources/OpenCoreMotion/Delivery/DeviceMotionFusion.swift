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
    private var projections: [Int: ReferenceFrameProjection] = [:]

    /// Drops the filter's state (no device motion consumer left, or the source stopped).
    mutating func reset() {
        driver = nil
    }

    /// Forgets a consumer's reference frame.
    mutating func forget(_ consumer: Int) {
        projections[consumer] = nil
    }

    /// Feeds one sample; returns the estimate when the sample makes a fused update.
    mutating func update(_ sample: RawSample, usesMagnetometer: Bool) -> AttitudeEstimate? {
        var driver = self.driver ?? FusionDriver(usesMagnetometer: usesMagnetometer)
        driver.usesMagnetometer = usesMagnetometer
        let fused = driver.update(sample)
        self.driver = driver
        return fused ? driver.estimate : nil
    }

    /// Expresses an estimate in a consumer's reference frame.
    mutating func deviceMotion(_ e: AttitudeEstimate, at t: Double, frame: CMAttitudeReferenceFrame, declination: Double,
                               consumer: Int) -> CMDeviceMotion {
        var projection = projections[consumer] ?? ReferenceFrameProjection(frame.attitudeReferenceFrame(declinationDegrees: declination))
        let m = projection.motion(e, timestamp: t)
        projections[consumer] = projection
        return CMDeviceMotion(
            timestamp: t,
            attitude: CMAttitude(rotation: m.attitude),
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
