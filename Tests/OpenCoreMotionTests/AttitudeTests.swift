import Foundation
import MotionFusion
@testable import OpenCoreMotion
import Testing

@Suite struct AttitudeTests {
    /// Core Motion's Euler convention: R = Rz(yaw) · Rx(pitch) · Ry(roll).
    func attitude(roll: Double, pitch: Double, yaw: Double) -> CMAttitude {
        let q = Quaternion(axis: Vector3(0, 0, 1), angle: yaw)
            * Quaternion(axis: Vector3(1, 0, 0), angle: pitch)
            * Quaternion(axis: Vector3(0, 1, 0), angle: roll)
        return CMAttitude(rotation: q)
    }

    @Test(arguments: [(0.3, -0.4, 1.2), (-2.5, 1.2, -3.0), (0.0, 0.0, 0.0), (1.0, -1.5, 0.1)])
    func eulerAnglesRoundTrip(roll: Double, pitch: Double, yaw: Double) {
        let a = attitude(roll: roll, pitch: pitch, yaw: yaw)
        #expect(abs(a.roll - roll) < 1e-9)
        #expect(abs(a.pitch - pitch) < 1e-9)
        #expect(abs(a.yaw - yaw) < 1e-9)
    }

    @Test func rotationMatrixMatchesTheQuaternionAndItsThirdRowIsMinusGravity() {
        let a = attitude(roll: 0.4, pitch: -0.7, yaw: 2.0)
        let m = a.rotationMatrix
        let q = a.rotation
        for v in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0.3, -0.2, 0.9)] {
            let byMatrix = Vector3(
                m.m11 * v.x + m.m12 * v.y + m.m13 * v.z,
                m.m21 * v.x + m.m22 * v.y + m.m23 * v.z,
                m.m31 * v.x + m.m32 * v.y + m.m33 * v.z
            )
            #expect((byMatrix - q.rotate(v)).length < 1e-12)
        }
        let gravity = q.inverseRotate(Vector3(0, 0, -1))
        #expect(abs(m.m31 + gravity.x) < 1e-12 && abs(m.m32 + gravity.y) < 1e-12 && abs(m.m33 + gravity.z) < 1e-12)
        let cq = a.quaternion
        #expect(abs(cq.w * cq.w + cq.x * cq.x + cq.y * cq.y + cq.z * cq.z - 1) < 1e-12)
    }

    @Test func multiplyByInverseOfGivesTheRotationRelativeToTheReference() {
        let reference = attitude(roll: 0.2, pitch: 0.1, yaw: 1.0)
        let same = attitude(roll: 0.2, pitch: 0.1, yaw: 1.0)
        same.multiply(byInverseOf: reference)
        #expect(abs(same.roll) < 1e-9 && abs(same.pitch) < 1e-9 && abs(same.yaw) < 1e-9)

        // Turning 0.5 rad about the vertical from the reference reads as yaw 0.5.
        let turned = CMAttitude(rotation: Quaternion(axis: Vector3(0, 0, 1), angle: 0.5) * reference.rotation)
        turned.multiply(byInverseOf: reference)
        let expected = reference.rotation.conjugate * Quaternion(axis: Vector3(0, 0, 1), angle: 0.5) * reference.rotation
        #expect(abs(abs(turned.rotation.w) - abs(expected.w)) < 1e-12)
    }

    @Test func headingIsTheCompassDirectionOfTheDevicesTop() {
        // Flat, face up, x toward north: the top (y) points west.
        #expect(abs(Quaternion.identity.compassHeading - 270) < 1e-9)
        // Turned so that y points north: x points east, yaw −90°.
        let north = Quaternion(axis: Vector3(0, 0, 1), angle: -.pi / 2)
        #expect(abs(north.compassHeading) < 1e-9 || abs(north.compassHeading - 360) < 1e-9)
        let east = Quaternion(axis: Vector3(0, 0, 1), angle: .pi)
        #expect(abs(east.compassHeading - 90) < 1e-9)
    }
}
