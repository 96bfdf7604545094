import MotionFusion
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``RotationHardIronEstimator`` on synthetic readings `m = Rᵀ h + o + noise` with a known attitude.
@Suite struct RotationHardIronEstimatorTests {
    /// Earth field in the reference frame, µT.
    static let field = Vector3(20, 0, -45)
    static let offset = Vector3(12, -7, 20)

    /// A device tilted 35° about its x axis whose heading wanders ±`yaw` rad at 0.05 Hz about the
    /// world's vertical, seen by an estimator whose frame drifts about vertical at `drift` rad/s.
    /// Returns the estimator after `seconds` at 50 Hz, and the last true attitude.
    static func run(seconds: Double, yaw: Double, drift: Double = 0, noise: Double = 0.4,
                    offset: (Double) -> Vector3 = { _ in Self.offset },
                    into e: inout RotationHardIronEstimator) -> Quaternion {
        var seed: UInt64 = 99
        func gaussian() -> Double {
            var s = 0.0
            for _ in 0..<12 {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                s += Double(seed >> 11) / Double(1 << 53)
            }
            return s - 6
        }
        let tilt = Quaternion(axis: Vector3(1, 0, 0), angle: 35 * Double.pi / 180)
        let dt = 0.02
        var truth = Quaternion.identity
        for i in 0..<Int(seconds / dt) {
            let t = Double(i) * dt
            let psi = 0.3 + yaw * sin(2 * Double.pi * 0.05 * t) + 0.3 * yaw * sin(2 * Double.pi * 0.13 * t + 1)
            truth = Quaternion(axis: Vector3(0, 0, 1), angle: psi) * tilt
            let seen = Quaternion(axis: Vector3(0, 0, 1), angle: drift * t) * truth
            let m = truth.inverseRotate(Self.field) + offset(t) + Vector3(gaussian(), gaussian(), gaussian()) * noise
            e.update(m, attitude: seen, bias: .zero, dt: dt, headingThreshold: Double.pi / 180)
        }
        return truth
    }

    @Test func turnsAboutTheVerticalShowTheHorizontalOffsetAndNotTheVerticalOne() {
        var e = RotationHardIronEstimator()
        let last = Self.run(seconds: 120, yaw: 0.25, into: &e)
        let up = last.inverseRotate(Vector3(0, 0, 1)) // the rotation axis, device frame
        let error = e.offset - Self.offset
        let horizontal = error - up * error.dot(up)
        #expect(horizontal.length < 0.3, "horizontal offset error \(horizontal.length) µT")
        // Along the rotation axis the readings say nothing: the uncertainty stays near the prior.
        let p = e.offsetCovariance
        #expect(up.dot(p * up).squareRoot() > 20)
        #expect(e.headingUncertainty(attitude: last) < Double.pi / 180)
        #expect(e.accuracy == .medium)
        // Noise 0.4 µT against the assumed 0.5 µT: a ratio of 0.64 when the model fits.
        #expect(abs(e.innovationRatio - 0.64) < 0.15)
    }

    /// Another estimate of the hard iron (the ellipsoid fit's) agrees when it differs only where this
    /// one knows nothing (along the rotation axis) or by about the tolerance, and not when it is off
    /// where this one is sure: `MagneticCalibrator.prefersEllipsoid` then keeps the rotation estimate.
    @Test func anotherEstimateAgreesOnlyWhereThisOneIsUnsure() {
        var e = RotationHardIronEstimator()
        let last = Self.run(seconds: 120, yaw: 0.25, into: &e)
        let up = last.inverseRotate(Vector3(0, 0, 1))
        let across = up.cross(Vector3(1, 0, 0)).normalized!
        #expect(e.agrees(with: Self.offset, tolerance: 5))
        #expect(e.agrees(with: Self.offset + up * 25, tolerance: 5))
        #expect(e.agrees(with: Self.offset + across * 5, tolerance: 5))
        #expect(!e.agrees(with: Self.offset + across * 20, tolerance: 5))
        #expect(!e.agrees(with: Self.offset + across * 2, tolerance: 0.1))
    }

    @Test func withoutRotationNothingIsKnown() {
        var e = RotationHardIronEstimator()
        let last = Self.run(seconds: 60, yaw: 0, into: &e)
        #expect(e.headingUncertainty(attitude: last) > 10 * Double.pi / 180)
        #expect(e.accuracy == .uncalibrated)
    }

    @Test func aDriftingFrameIsTakenForTheVerticalBias() {
        var e = RotationHardIronEstimator()
        let last = Self.run(seconds: 180, yaw: 0.25, drift: 0.005, into: &e)
        let up = last.inverseRotate(Vector3(0, 0, 1))
        let error = e.offset - Self.offset
        #expect((error - up * error.dot(up)).length < 0.5)
        #expect(abs(e.verticalBias - 0.005) < 2e-4, "\(e.verticalBias) rad/s")
        e.reverseTimeDirection()
        #expect(abs(e.verticalBias + 0.005) < 2e-4)
    }

    @Test func aChangedOffsetRestartsTheEstimate() {
        var e = RotationHardIronEstimator()
        let jumped = Vector3(-30, 25, 5)
        let last = Self.run(seconds: 240, yaw: 0.25, offset: { t in t < 90 ? Self.offset : jumped }, into: &e)
        let up = last.inverseRotate(Vector3(0, 0, 1))
        let error = e.offset - jumped
        #expect((error - up * error.dot(up)).length < 0.5, "\(e.offset)")
    }

    @Test func nonFiniteReadingsAreIgnored() {
        var e = RotationHardIronEstimator()
        _ = Self.run(seconds: 30, yaw: 0.25, into: &e)
        let before = (e.offset, e.updates)
        e.update(Vector3(.nan, 0, 0), attitude: .identity, bias: .zero, dt: 0.02, headingThreshold: 0.02)
        e.update(Vector3(1, 2, 3), attitude: .identity, bias: Vector3(.infinity, 0, 0), dt: 0.02, headingThreshold: 0.02)
        #expect(e.offset == before.0)
        #expect(e.updates == before.1)
    }

    /// Through the calibrator: the rotation estimate is used while the ellipsoid fit is below medium.
    @Test func theCalibratorUsesTheRotationEstimateUntilTheEllipsoidIsBetter() {
        var c = MagneticCalibrator()
        var e = RotationHardIronEstimator()
        let last = Self.run(seconds: 120, yaw: 0.25, into: &e)
        c.rotation = e
        c.add(last.inverseRotate(Self.field) + Self.offset, attitude: last, bias: .zero, dt: 0.02,
              headingThreshold: Double.pi / 180)
        #expect(c.accuracy == .medium)
        #expect(c.usesRotationEstimate)
        #expect(c.offset == c.rotation.offset)
        #expect(c.gains == Vector3(1, 1, 1))
        #expect(c.ellipsoidAccuracy < .medium)
    }
}
