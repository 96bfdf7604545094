import Foundation
import MotionBenchmarks
import MotionFusion
import Testing

/// BROAD trials with a phone's hard iron added (300, −150, 400 µT: the raw field 500 µT strong, ten
/// times any Earth field), as the held-out phone trials of issue 22 deliver their magnetometers. Such a
/// raw field says nothing about north.
///
/// Before, the heading waited for a `medium` calibration, coasting on an arbitrary start (mean causal
/// 9D total over the 14 trials 46.3°). Letting a `low` gyro-aided estimate set it alone made that
/// 41.0° but two trials worse: the estimate's grade flickers, and each time it fell back the raw field
/// steered the heading again (trial 26: 11 975 raw samples moved it; 27.3° → 45.8°). Both together:
/// 32.5°, no trial worse.
@Suite struct HardIronDominatedFieldTests {
    static let hardIron = Vector3(300, -150, 400)

    static func trial(_ name: String) throws -> BroadTrial {
        var trial = try BroadTrial(contentsOf: CalibratedReferenceTests.directory.appendingPathComponent("\(name).csv"))
        trial.magnetometer = trial.magnetometer.map { $0 + hardIron }
        return trial
    }

    /// Once the raw field has been seen stronger than any Earth field, a raw sample never moves the
    /// heading: every sample whose heading correction changed the heading used a calibrated field.
    @Test(arguments: ["04_undisturbed_slow_rotation_with_breaks_A", "26_disturbed_phone_vibration_A"])
    func aRawFieldDominatedByAHardIronNeverSteersTheHeading(trial name: String) throws {
        let trial = try Self.trial(name)
        let dt = trial.timeStep
        var filter = AttitudeFilter(parameters: AttitudeFilterParameters(), usesMagnetometer: true)
        var steeredByRaw = 0, calibratedUpdates = 0
        for i in 0..<trial.count {
            filter.updateGyro(trial.gyro[i], dt: dt)
            filter.updateAccelerometer(trial.accelerometer[i], dt: dt)
            let before = filter.state.headingOffset
            filter.updateMagnetometer(trial.magnetometer[i], dt: dt)
            guard filter.state.magnetometerInitialized, filter.state.headingOffset != before else { continue }
            if filter.state.usesCalibratedField { calibratedUpdates += 1 } else { steeredByRaw += 1 }
        }
        #expect(steeredByRaw == 0, "\(name): \(steeredByRaw) raw samples of a 500 µT field moved the heading")
        #expect(calibratedUpdates > 1000, "\(name): the calibrated field corrected the heading \(calibratedUpdates) times")
    }

    /// Scored as BROAD scores it: a gyro-aided estimate graded `low` (its offset allows less than 5° of
    /// heading error) sets the heading from when it is reached, instead of an arbitrary heading until
    /// `medium`. Before: 51.3° and 19.5°; now 20.6° and 9.7°.
    @Test(arguments: [("04_undisturbed_slow_rotation_with_breaks_A", 30.0), ("21_undisturbed_fast_combined", 14.0)])
    func theHeadingStartsFromTheFirstUsableCalibration(trial name: String, bound: Double) throws {
        let errors = try BroadRunner(parameters: nil, usesMagnetometer: true, offline: false).score(Self.trial(name))
        #expect(errors.total < bound, "\(name): causal 9D total \(errors.total)°")
    }
}
