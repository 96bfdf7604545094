@testable import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct EulerAngleTests {
    @Test func roundTripThroughCoreMotionAngles() {
        for roll in stride(from: -3.0, through: 3.0, by: 0.7) {
            for pitch in stride(from: -1.5, through: 1.5, by: 0.5) {
                for yaw in stride(from: -3.0, through: 3.0, by: 1.1) {
                    let q = Quaternion(eulerAngles: EulerAngles(roll: roll, pitch: pitch, yaw: yaw))
                    let e = q.eulerAngles
                    #expect(abs(e.roll - roll) < 1e-9 && abs(e.pitch - pitch) < 1e-9 && abs(e.yaw - yaw) < 1e-9)
                }
            }
        }
    }

    @Test func formulasMatchTheIssueDefinitions() {
        let q = Quaternion(w: 0.8, x: 0.3, y: -0.4, z: 0.33).normalized
        let (w, x, y, z) = (q.w, q.x, q.y, q.z)
        let e = q.eulerAngles
        #expect(abs(e.pitch - asin(2 * (w * x + y * z))) < 1e-12)
        #expect(abs(e.roll - atan2(2 * (w * y - x * z), 1 - 2 * (x * x + y * y))) < 1e-12)
        #expect(abs(e.yaw - atan2(2 * (w * z - x * y), 1 - 2 * (x * x + z * z))) < 1e-12)
    }

    @Test func singleAxisRotationsGiveSingleAngles() {
        let p = Quaternion(axis: Vector3(1, 0, 0), angle: 0.4).eulerAngles
        #expect(abs(p.pitch - 0.4) < 1e-12 && abs(p.roll) < 1e-12 && abs(p.yaw) < 1e-12)
        let r = Quaternion(axis: Vector3(0, 1, 0), angle: -0.9).eulerAngles
        #expect(abs(r.roll + 0.9) < 1e-12 && abs(r.pitch) < 1e-12 && abs(r.yaw) < 1e-12)
        let y = Quaternion(axis: Vector3(0, 0, 1), angle: 2.1).eulerAngles
        #expect(abs(y.yaw - 2.1) < 1e-12 && abs(y.pitch) < 1e-12 && abs(y.roll) < 1e-12)
    }

    @Test func rotationMatrixIsConsistentWithRotate() {
        let q = Quaternion(eulerAngles: EulerAngles(roll: 0.3, pitch: -0.6, yaw: 1.9))
        let m = Matrix3(q)
        for v in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0.3, -2, 5)] {
            #expect((m * v - q.rotate(v)).length < 1e-12)
            #expect((m.transposed * v - q.inverseRotate(v)).length < 1e-12)
        }
    }

    @Test func gravityFromPitchAndRoll() {
        // Face up: gravity (0, 0, −1). Pitched up by 90° (top edge up): gravity along −y.
        let up = Quaternion.identity.inverseRotate(Vector3(0, 0, -1))
        #expect((up - Vector3(0, 0, -1)).length < 1e-12)
        let pitched = Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2).inverseRotate(Vector3(0, 0, -1))
        #expect((pitched - Vector3(0, -1, 0)).length < 1e-12)
    }
}

@Suite struct FastMathTests {
    @Test func polynomialInverseTrigonometryIsAccurate() {
        var worstAsin = 0.0, worstAtan = 0.0
        for i in -1000...1000 {
            let x = Double(i) / 1000
            worstAsin = max(worstAsin, abs(fastAsin(x) - asin(x)))
        }
        for i in 0..<720 {
            let a = Double(i) * .pi / 360 - .pi + 1e-3
            for r in [1e-6, 0.3, 45.0] {
                worstAtan = max(worstAtan, abs(fastAtan2(r * sin(a), r * cos(a)) - atan2(r * sin(a), r * cos(a))))
            }
        }
        #expect(worstAsin < 3e-8)
        #expect(worstAtan < 3e-8)
        #expect(fastAtan2(0, 0) == 0)
    }
}
