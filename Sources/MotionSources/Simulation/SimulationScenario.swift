/// The kinds of motion the simulated device can perform.
///
/// Every scenario is a smooth, seeded trajectory of attitude and position, so the simulated
/// sensors are physically consistent with the ground truth (``SimulatedTruth``): the gyro reads the
/// analytic body rate of the attitude trajectory and the accelerometer reads gravity plus the second
/// derivative of the position trajectory. The seed (``SimulationOptions/seed``) picks the initial
/// heading, the exact frequencies, phases and amplitudes inside the ranges given below.
///
/// Device axes are Core Motion's: x to the right of the screen, y towards the top, z out of the
/// screen. The world frame is x magnetic north, y west, z up.
public enum SimulationScenario: String, Sendable, CaseIterable {
    /// Lying face up on a table at a seeded heading: no motion at all. The sensors show only their
    /// noise and biases; the accelerometer reads ≈ (0, 0, −1) g.
    case still
    /// A phone held in the hand in front of the user, screen tilted about 35° towards the face:
    /// slow wandering of tilt (3° rms, 0.03–0.3 Hz) and heading (8° rms, 0.01–0.1 Hz), the arm drifting a
    /// few centimetres (0.1–1 Hz), and physiological hand tremor (8–12 Hz, ≈0.02° and ≈0.05 mm,
    /// about 0.01–0.03 g and 0.01–0.03 rad/s). Overall ≈0.1 rad/s and ≈0.025 g rms.
    case handheld
    /// Deliberate turning about all three axes at once: each axis spins one way with a rate that
    /// pulses between 0 and 2–3 rad/s (periods 2.5–5 s), so the combined rate reaches about 4 rad/s
    /// and the device passes through every orientation; the hand moves ±2 cm meanwhile.
    case rotate
    /// Walking at 1.2–1.5 m/s along a wide circle (radius 40–80 m, so the heading turns slowly,
    /// ≈1–2 °/s) with the phone held in front: vertical bounce at the step frequency 1.8–2.0 Hz
    /// (≈2.5 cm, peaks ≈0.35 g), forward surge at the step frequency, lateral sway at half of it,
    /// and small gait-locked tilts of 1–2° (≈0.35 g and ≈0.3 rad/s rms).
    case walk
    /// Vigorous shaking at 4.5–5.5 Hz: ±3–4 cm along one horizontal direction (about 3–4 g peak),
    /// smaller motion on the other axes and ±12–16° wrist rotation about the device's y axis plus
    /// smaller pitch and yaw (≈3 g and ≈7 rad/s rms, peaks ≈5 g and ≈10 rad/s).
    case shake
    /// Running at 2.8–3.5 m/s along a wide circle (radius 60–100 m) with the phone held in the hand:
    /// step frequency 2.6–3.0 Hz, vertical bounce ≈4.5 cm (peaks ≈1.4 g), forward surge and lateral sway
    /// as in ``walk`` but larger, gait-locked tilts of 3–4°.
    case run
    /// Cycling at 4–7 m/s along a wide circle (radius 80–150 m) with the phone on the handlebar:
    /// the bicycle rocks at the pedalling cadence 1.0–1.5 Hz (roll 2–4°, lateral ±1 cm), the road shakes it
    /// at 8–24 Hz (≈0.1 g rms vertical, stiff tyres and no suspension), and a small vertical push at twice
    /// the cadence (≈0.02 g).
    case cycle
    /// Riding in a car with the phone lying in a holder: engine and road vibration at 6–25 Hz
    /// (≈0.05 g rms, within the 0.3–0.6 m/s² of ISO 2631-1 for car floors), suspension bounce at
    /// 1–2 Hz (≈0.02 g), accelerating, braking and cornering at 0.02–0.2 Hz (≈0.08 g), slow turns
    /// (20° rms heading at 0.005–0.05 Hz) and small body roll and pitch (0.3°).
    case drive
}
