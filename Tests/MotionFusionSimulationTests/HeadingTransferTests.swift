import Foundation
import MotionFusion
import MotionSources
import Testing

/// A change of the magnetometer's field model (the raw field replaced by a calibrated one, a calibration
/// that keeps converging, or one that is dropped) is not a change of the Earth's field: it must not move
/// the heading faster than the heading loop would follow a real, persistent change of the field's
/// direction, and it must not be mistaken for a magnetic disturbance. Simulator with a known field and a
/// small hard iron, so that the raw field's heading error is bounded and known.
@Suite struct HeadingTransferTests {
    /// Hard iron small enough that the raw field's heading is off by at most asin(3.5 / 24) ≈ 8.4° and its
    /// norm by at most 7 % (under the 10 % disturbance threshold): nothing in this run disturbs the field.
    static func options(seed: UInt64, scenario: SimulationScenario = .handheld) -> SimulationOptions {
        var o = SimulationOptions(scenario: scenario, seed: seed)
        o.hardIron = Vector3(2, -1.5, 2.5)
        return o
    }

    struct Outcome {
        /// Largest change of the heading error over `window` seconds, degrees.
        var largestChange = 0.0
        /// When it happened, seconds.
        var at = 0.0
        /// Largest heading error after the first 5 s, degrees.
        var largestError = 0.0
        /// Time of the first use of a calibrated field, seconds.
        var calibratedAt: Double? = nil
        /// Number of gyro samples after the initial 5 s in which the field counted as disturbed.
        var disturbedSamples = 0
        /// Heading error at the end, degrees.
        var finalError = 0.0
    }

    static func run(_ o: SimulationOptions, seconds: Double, window: Double = 0.5) -> Outcome {
        var out = Outcome()
        var history: [(Double, Double)] = []
        _ = SimulatedFusionTests.run(o, seconds: seconds) { t, f, truth in
            if out.calibratedAt == nil, f.state.usesCalibratedField { out.calibratedAt = t }
            guard t > 5 else { return }
            let e = SimulatedFusionTests.headingDifference(f.quaternion, truth.attitude)
            if f.state.magneticDisturbance { out.disturbedSamples += 1 }
            out.largestError = max(out.largestError, abs(e))
            out.finalError = e
            history.append((t, e))
            while let first = history.first, t - first.0 > window { history.removeFirst() }
            if let first = history.first {
                var d = e - first.1
                if d > 180 { d -= 360 } else if d < -180 { d += 360 }
                if abs(d) > out.largestChange { out.largestChange = abs(d); out.at = t }
            }
        }
        return out
    }

    /// The bound: the heading loop (time constant τ = ``AttitudeFilterParameters/magnetometerTimeConstant``)
    /// closes at most `window / τ` of the gap between the heading and the field's direction in `window`;
    /// that gap is at most the raw field's heading error plus the heading error itself (8.4° + 8.4°), so a
    /// real change of the field would move the heading by at most 0.5 / 9 × 17° ≈ 0.93° in 0.5 s. Gyro
    /// noise and the simulator's motion add a few hundredths of a degree. Before the bumpless transfer the
    /// first use of the gyro-aided estimate set the heading from one sample and later changes of its offset
    /// moved it at once: 2.8°, 4.2° and 2.0° in 0.5 s for seeds 11, 21, 31, within 0.5 s of the switch;
    /// now 0.12°, 0.19° and 0.11°.
    @Test(arguments: [UInt64(11), 21, 31])
    func calibrationSwitchingInMovesTheHeadingNoFasterThanTheHeadingLoop(seed: UInt64) {
        let out = Self.run(Self.options(seed: seed), seconds: 60)
        #expect(out.calibratedAt != nil, "seed \(seed): the calibration never switched in")
        #expect(out.largestChange < 1.0, "seed \(seed): heading error changed by \(out.largestChange)° in 0.5 s at \(out.at) s (calibrated at \(out.calibratedAt ?? -1) s)")
        #expect(abs(out.finalError) < 2, "seed \(seed): final heading error \(out.finalError)°")
    }

    /// Nothing disturbs the field: a change of the field model must not be flagged (and rejected) as a
    /// disturbance, which would leave the heading to the gyro. Here the gyro-aided estimate switches in,
    /// whose own field becomes the disturbance reference; this held before the bumpless transfer too and
    /// guards that reference.
    @Test(arguments: [UInt64(11), 21, 31])
    func calibrationSwitchingInIsNotADisturbance(seed: UInt64) {
        let out = Self.run(Self.options(seed: seed), seconds: 60)
        #expect(out.disturbedSamples == 0, "seed \(seed): \(out.disturbedSamples) samples flagged disturbed (calibrated at \(out.calibratedAt ?? -1) s)")
    }

    /// A hard iron large enough to move the raw field's norm by more than the disturbance threshold as
    /// the device turns (7.1 µT), the device turned through every orientation: the calibrated field is
    /// in use within 3 s and never flagged disturbed, and the heading about the vertical stays within 2°
    /// (this held before the reference rule of `CalibratedReferenceTests` too; on BROAD the calibration
    /// switches in only after a minute, when the raw reference is established).
    @Test(arguments: [UInt64(11), 21, 31])
    func aCalibrationThatExplainsTheRawFieldIsNotRejectedAsADisturbance(seed: UInt64) {
        var o = SimulationOptions(scenario: .rotate, seed: seed)
        o.hardIron = Vector3(4, -3, 5)
        var calibratedAt: Double?
        var disturbedAfter = 0, samplesAfter = 0
        var errors: [(Double, Double)] = []
        _ = SimulatedFusionTests.run(o, seconds: 120) { t, f, truth in
            if calibratedAt == nil, f.state.usesCalibratedField { calibratedAt = t }
            guard let at = calibratedAt else { return }
            samplesAfter += 1
            if f.state.magneticDisturbance { disturbedAfter += 1 }
            // The heading error about the world's vertical (the device's x axis passes through vertical
            // in this motion, where its heading is undefined): the rotation from truth to estimate.
            let d = f.quaternion * truth.attitude.conjugate
            var e = 2 * atan2(d.z, d.w) * 180 / .pi
            if e > 180 { e -= 360 } else if e < -180 { e += 360 }
            if t > at + 30 { errors.append((t, abs(e))) }
        }
        let at = calibratedAt ?? -1
        let worst = errors.map(\.1).max() ?? .infinity
        #expect(calibratedAt != nil && at < 60, "seed \(seed): calibrated at \(at) s")
        #expect(Double(disturbedAfter) < 0.05 * Double(max(samplesAfter, 1)), "seed \(seed): \(disturbedAfter) of \(samplesAfter) samples after the switch flagged disturbed")
        #expect(worst < 2, "seed \(seed): heading error \(worst)° from 30 s after the switch at \(at) s")
    }
}
