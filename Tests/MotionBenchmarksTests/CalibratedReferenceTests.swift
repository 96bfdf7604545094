import Foundation
import MotionBenchmarks
import MotionFusion
import Testing

/// BROAD's undisturbed slow-rotation trials with a small hard iron added (3, −2, 4 µT: 5.4 µT, the
/// raw field's heading off by up to ~15° as the sensor turns). The ellipsoid fit calibrates it within
/// about a minute; the disturbance reference learned from the raw field in the first second saw the
/// Earth's field through that offset, and, kept across the switch, it rejected the calibrated field as
/// disturbed for the better part of a minute (trial 01: from 65 s to 120 s) while the heading stayed
/// off by the raw field's error. Scored against the same filter on the unperturbed trial, so that only
/// the offset's effect counts.
@Suite struct CalibratedReferenceTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/data/broad").standardized

    @Test(arguments: ["01_undisturbed_slow_rotation_A", "04_undisturbed_slow_rotation_with_breaks_A"])
    func aCalibrationThatSteadiesTheRawFieldIsNotRejected(trial name: String) throws {
        let trial = try BroadTrial(contentsOf: Self.directory.appendingPathComponent("\(name).csv"))
        let hardIron = Vector3(3, -2, 4), dt = trial.timeStep
        var perturbed = AttitudeFilter(parameters: AttitudeFilterParameters(), usesMagnetometer: true)
        var plain = AttitudeFilter(parameters: AttitudeFilterParameters(), usesMagnetometer: true)
        var calibratedAt: Double?
        var disturbed = 0, counted = 0
        var worstLate = 0.0
        for i in 0..<trial.count {
            let t = Double(i) * dt
            perturbed.updateGyro(trial.gyro[i], dt: dt)
            perturbed.updateAccelerometer(trial.accelerometer[i], dt: dt)
            perturbed.updateMagnetometer(trial.magnetometer[i] + hardIron, dt: dt)
            plain.updateGyro(trial.gyro[i], dt: dt)
            plain.updateAccelerometer(trial.accelerometer[i], dt: dt)
            plain.updateMagnetometer(trial.magnetometer[i], dt: dt)
            if calibratedAt == nil, perturbed.state.usesCalibratedField { calibratedAt = t }
            guard let at = calibratedAt, t < at + 60 else { continue }
            counted += 1
            if perturbed.state.magneticDisturbance { disturbed += 1 }
            if t > at + 40 {
                let d = perturbed.quaternion * plain.quaternion.conjugate
                var e = 2 * atan2(d.z, d.w) * 180 / .pi
                if e > 180 { e -= 360 } else if e < -180 { e += 360 }
                worstLate = max(worstLate, abs(e))
            }
        }
        let at = try #require(calibratedAt, "\(name): the calibrated field was never used")
        #expect(at < 90, "\(name): calibrated at \(at) s")
        // Before: 17.2° (01) and 19.0° (04), with 15 055 and 8 970 of the 17 143 samples of that minute
        // flagged disturbed; now 0.17° and 0.78° (0 and 7 980: in 04 the fit's accuracy later drops and
        // returns, and the raw field between is rightly rejected).
        #expect(worstLate < 2, "\(name): heading \(worstLate)° from the unperturbed run's 40–60 s after the switch at \(at) s; \(disturbed) of \(counted) samples of the minute after it flagged disturbed")
    }
}
