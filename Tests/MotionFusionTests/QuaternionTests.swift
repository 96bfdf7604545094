import MotionFusion
import Testing

@Suite struct QuaternionTests {
    @Test func rotationAboutZMapsXToY() {
        let q = Quaternion(axis: Vector3(0, 0, 1), angle: .pi / 2)
        let v = q.rotate(Vector3(1, 0, 0))
        #expect(abs(v.x) < 1e-12 && abs(v.y - 1) < 1e-12 && abs(v.z) < 1e-12)
        let back = q.inverseRotate(v)
        #expect(abs(back.x - 1) < 1e-12)
    }

    @Test func productComposesRotations() {
        let a = Quaternion(axis: Vector3(1, 0, 0), angle: 0.3)
        let b = Quaternion(axis: Vector3(0, 1, 0), angle: -0.7)
        let v = Vector3(0.2, -1.1, 0.5)
        let composed = (a * b).rotate(v)
        let stepwise = a.rotate(b.rotate(v))
        #expect((composed - stepwise).length < 1e-12)
    }

    @Test func rotationVectorMatchesAxisAngleIncludingTinyAngles() {
        for angle in [1e-9, 1e-7, 1e-3, 0.5, 3.0] {
            let axis = Vector3(0.3, -0.4, 0.866).normalized!
            let a = Quaternion(rotationVector: axis * angle)
            let b = Quaternion(axis: axis, angle: angle)
            #expect(abs(a.w - b.w) < 1e-12 && abs(a.x - b.x) < 1e-12 && abs(a.z - b.z) < 1e-12)
            #expect(abs(a.length - 1) < 1e-12)
        }
    }
}
