import MotionFusion

/// BROAD's error metric for one trial, degrees (Laidig et al. 2021, as in `shared/tools/broad_reference.py`).
///
/// For each sample with movement and ground truth: `e = q_est ⊗ conj(q_ref)` (both sensor → ENU),
/// normalised; total = 2 acos(min(1, |e_w|)), heading = 2 atan(|e_z| / |e_w|),
/// inclination = 2 acos(min(1, √(e_w² + e_z²))); each figure is the RMSE over the scored samples.
package struct BroadErrors: Sendable, Hashable, Codable {
    /// Total orientation RMSE, degrees.
    package var total: Double
    /// Heading RMSE, degrees.
    package var heading: Double
    /// Inclination RMSE, degrees.
    package var inclination: Double

    /// Creates errors, degrees.
    package init(total: Double, heading: Double, inclination: Double) {
        self.total = total
        self.heading = heading
        self.inclination = inclination
    }

    /// Scores estimates (sensor → ENU) against a trial's truth.
    package init(estimates: [Quaternion], trial: BroadTrial) throws {
        guard estimates.count == trial.count else {
            throw BroadError.lengthMismatch(trial.name, estimates.count, trial.count)
        }
        var st = 0.0, sh = 0.0, si = 0.0
        var n = 0
        for k in 0..<trial.count where trial.movement[k] {
            let r = trial.truth[k]
            guard r.isFinite else { continue }
            let a = Self.normalise(estimates[k])
            let b = Self.normalise(r).conjugate
            let e = a * b
            let len = e.length
            let ew = e.w / len, ez = e.z / len
            let total = 2 * acosClamped(abs(ew))
            let heading = 2 * atan2Double(abs(ez), abs(ew))
            let incl = 2 * acosClamped((ew * ew + ez * ez).squareRoot())
            st += total * total
            sh += heading * heading
            si += incl * incl
            n += 1
        }
        let deg = 180 / Double.pi
        let m = Double(max(n, 1))
        self.init(total: (st / m).squareRoot() * deg, heading: (sh / m).squareRoot() * deg,
                  inclination: (si / m).squareRoot() * deg)
    }

    /// Normalisation as NumPy does it (division by the norm, NaN for a zero quaternion).
    static func normalise(_ q: Quaternion) -> Quaternion {
        let n = q.length
        return Quaternion(w: q.w / n, x: q.x / n, y: q.y / n, z: q.z / n)
    }

    /// The plain mean of several trials' errors.
    package static func mean(_ all: [BroadErrors]) -> BroadErrors {
        let n = Double(max(all.count, 1))
        return BroadErrors(total: all.map(\.total).reduce(0, +) / n,
                           heading: all.map(\.heading).reduce(0, +) / n,
                           inclination: all.map(\.inclination).reduce(0, +) / n)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

func acosClamped(_ x: Double) -> Double { acos(max(0, min(1, x))) }
func atan2Double(_ y: Double, _ x: Double) -> Double { atan2(y, x) }
