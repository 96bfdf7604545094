import MotionFusion

#if canImport(Glibc)
import Glibc
#endif

/// Deterministic synthetic IMU data with ground truth, generated in the tests (Core Motion units and
/// signs: g, rad/s, µT; attitude device → north–west–up).
struct SyntheticMotion {
    var truth: [Quaternion] = []
    var gyro: [Vector3] = []
    var accelerometer: [Vector3] = []
    var magnetometer: [Vector3] = []
    let dt: Double

    /// Earth field in NWU, µT: 20 µT north, 45 µT down.
    static let field = Vector3(20, 0, -45)

    /// Builds a recording from an angular-rate profile and a linear-acceleration profile (reference frame, g).
    init(seconds: Double, dt: Double = 0.01, start: Quaternion = .identity,
         gyroBias: Vector3 = .zero, noise: Double = 0,
         rate: (Double) -> Vector3 = { _ in .zero },
         linearAcceleration: (Double) -> Vector3 = { _ in .zero },
         disturbance: (Double) -> Vector3 = { _ in .zero }) {
        self.dt = dt
        var q = start
        var seed: UInt64 = 12345
        func rnd() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(1 << 53) - 0.5
        }
        let n = Int(seconds / dt)
        for i in 0..<n {
            let t = Double(i) * dt
            let w = rate(t)
            q = (q * Quaternion(rotationVector: w * dt)).normalized
            truth.append(q)
            let n3 = Vector3(rnd(), rnd(), rnd()) * noise
            gyro.append(w + gyroBias + n3 * 0.01)
            // Core Motion accelerometer: user acceleration + gravity, device frame.
            let a = q.inverseRotate(linearAcceleration(t) + Vector3(0, 0, -1))
            accelerometer.append(a + n3 * 0.01)
            magnetometer.append(q.inverseRotate(Self.field + disturbance(t)) + n3 * 0.5)
        }
    }

    var count: Int { truth.count }
}

/// Angle between two attitudes, degrees.
func angleBetween(_ a: Quaternion, _ b: Quaternion) -> Double {
    let d = abs(a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z)
    return 2 * acos(min(1, d)) * 180 / Double.pi
}

/// Angle between two vectors, degrees.
func angleBetween(_ a: Vector3, _ b: Vector3) -> Double {
    let c = a.dot(b) / (a.length * b.length)
    return acos(max(-1, min(1, c))) * 180 / Double.pi
}

/// Inclination error (tilt part of the relative rotation), degrees.
func inclinationError(_ est: Quaternion, _ truth: Quaternion) -> Double {
    angleBetween(est.inverseRotate(Vector3(0, 0, 1)), truth.inverseRotate(Vector3(0, 0, 1)))
}

/// Heading of an attitude (device x axis projected on the horizontal plane), radians.
func yawOf(_ q: Quaternion) -> Double {
    let x = q.rotate(Vector3(1, 0, 0))
    return atan2(x.y, x.x)
}

/// Absolute heading difference, degrees.
func headingError(_ a: Quaternion, _ b: Quaternion) -> Double {
    var d = yawOf(a) - yawOf(b)
    while d > Double.pi { d -= 2 * Double.pi }
    while d < -Double.pi { d += 2 * Double.pi }
    return abs(d) * 180 / Double.pi
}

extension AttitudeFilter {
    mutating func run(_ m: SyntheticMotion, range: Range<Int>? = nil, magnetometer: Bool = true) {
        for i in range ?? 0..<m.count {
            update(gyro: m.gyro[i], accelerometer: m.accelerometer[i],
                   magnetometer: magnetometer ? m.magnetometer[i] : nil, dt: m.dt)
        }
    }
}
