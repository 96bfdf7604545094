@testable import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ReferenceFrameTests {
    /// A device lying face up whose top points at `degrees` clockwise from north (NWU frame).
    func flat(heading degrees: Double) -> Quaternion {
        // Face up with x north has its top (y) toward west (270°); turning by −θ about z adds θ.
        Quaternion.aboutZ(-(degrees - 270) * Double.pi / 180)
    }

    @Test func compassHeadingOfAFlatDeviceIsWhereItsTopPoints() {
        for h in [0.0, 10, 45, 90, 179.5, 270, 359] {
            let got = flat(heading: h).compassHeading
            let d = abs(got - h).truncatingRemainder(dividingBy: 360)
            #expect(min(d, 360 - d) < 1e-9, "heading \(h) read \(got)")
            #expect(got >= 0 && got < 360)
        }
    }

    @Test func anUprightDeviceTakesTheHeadingOfItsBack() {
        // Upright in portrait (top up), screen facing south: the back (−z) faces north.
        // Device → NWU: x→west? Build it: pitch +90° about x stands the device up, then a yaw turns it.
        for h in [0.0, 30, 200] {
            let upright = flat(heading: h) * Quaternion(axis: Vector3(1, 0, 0), angle: Double.pi / 2)
            // The top now points up; before standing up it pointed at h, and the back now faces h.
            let got = upright.compassHeading
            let d = abs(got - h)
            #expect(min(d, 360 - d) < 1e-9, "upright heading \(h) read \(got)")
        }
    }

    @Test func rotationMatrixIsTheQuaternionsAndItsThirdRowIsMinusGravity() {
        let q = Quaternion(eulerAngles: EulerAngles(roll: 0.4, pitch: -0.7, yaw: 2.0))
        let m = q.rotationMatrix
        for v in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0.3, -0.2, 0.9)] {
            #expect((m * v - q.rotate(v)).length < 1e-12)
        }
        let gravity = q.inverseRotate(Vector3(0, 0, -1))
        #expect((m.r2 + gravity).length < 1e-12)
    }

    func estimate(_ q: Quaternion, north: Bool, sixD: Quaternion? = nil) -> AttitudeEstimate {
        AttitudeEstimate(
            quaternion: q, quaternion6D: sixD ?? q, quaternionArbitraryCorrected: sixD ?? q,
            isMagneticNorthReferenced: north, gravity: q.inverseRotate(Vector3(0, 0, -1)),
            userAcceleration: Vector3(0.1, 0, 0), rotationRate: Vector3(0, 0, 0.2), gyroBias: .zero,
            magneticField: Vector3(20, 0, -40), magneticFieldAccuracy: .medium,
            isMagneticallyDisturbed: false, isAtRest: false, hasMagneticField: true)
    }

    @Test func arbitraryFramesStartAtYawZeroAndFollowTheRotationAfter() {
        for frame in [AttitudeReferenceFrame.arbitrary, .arbitraryCorrected] {
            var p = ReferenceFrameProjection(frame)
            let start = Quaternion(eulerAngles: EulerAngles(roll: 0.2, pitch: -0.1, yaw: 1.3))
            let first = p.motion(estimate(start, north: true), timestamp: 1)
            #expect(abs(first.eulerAngles.yaw) < 1e-12)
            #expect(abs(first.eulerAngles.roll - 0.2) < 1e-12 && abs(first.eulerAngles.pitch + 0.1) < 1e-12)
            #expect(first.heading == -1)
            let turned = p.motion(estimate(Quaternion.aboutZ(0.5) * start, north: true), timestamp: 2)
            #expect(abs(turned.eulerAngles.yaw - 0.5) < 1e-12)
            if frame == .arbitrary {
                #expect(first.magneticField == .zero && first.magneticFieldAccuracy == .uncalibrated)
            } else {
                #expect(first.magneticField == Vector3(20, 0, -40) && first.magneticFieldAccuracy == .medium)
            }
        }
    }

    @Test func northFramesAddTheDeclinationAndTurnToEastNorthUp() {
        let q = flat(heading: 40)
        var magnetic = ReferenceFrameProjection(.magneticNorth)
        var trueNorth = ReferenceFrameProjection(.trueNorth(declination: 5 * Double.pi / 180))
        var enu = ReferenceFrameProjection(.eastNorthUp)
        let e = estimate(q, north: true)
        #expect(abs(magnetic.motion(e, timestamp: 0).heading - 40) < 1e-9)
        #expect(abs(trueNorth.motion(e, timestamp: 0).heading - 45) < 1e-9)
        let inENU = enu.motion(e, timestamp: 0)
        #expect(abs(inENU.heading - 40) < 1e-9)
        // In ENU the top's direction (east over north) gives the same compass angle.
        let top = inENU.attitude.rotate(Vector3(0, 1, 0))
        var az = atan2Degrees(top.x, top.y)
        if az < 0 { az += 360 }
        #expect(abs(az - 40) < 1e-9)
    }

    @Test func northFramesAlwaysReportAHeadingAndArbitraryOnesNever() {
        var north = ReferenceFrameProjection(.magneticNorth)
        #expect(abs(north.motion(estimate(flat(heading: 40), north: false), timestamp: 0).heading - 40) < 1e-9)
        var arbitrary = ReferenceFrameProjection(.arbitraryCorrected)
        #expect(arbitrary.motion(estimate(flat(heading: 40), north: true), timestamp: 0).heading == -1)
    }

    func atan2Degrees(_ y: Double, _ x: Double) -> Double { atan2(y, x) * 180 / Double.pi }
}
