/// The converter characteristics of the simulated sensors: phone-class parts with 16-bit outputs.
enum SimulatedSensorSpec {
    /// Accelerometer: ±16 g (BMI160's widest range), 16 bits ⇒ 0.488 mg per count, 1…1000 Hz.
    static let accelerometer = SensorCapability(minimumRate: 1, maximumRate: 1000, range: 16, resolution: 16.0 / 32768)
    /// Gyro: ±2000 °/s = ±34.9 rad/s, 16 bits ⇒ 0.061 °/s (1.07e-3 rad/s) per count, 1…1000 Hz.
    static let gyro = SensorCapability(
        minimumRate: 1, maximumRate: 1000,
        range: 2000 * Double.pi / 180, resolution: 2000 * Double.pi / 180 / 32768
    )
    /// Magnetometer: ±4912 µT at 0.15 µT per count (AK09916 class), 1…100 Hz.
    static let magnetometer = SensorCapability(minimumRate: 1, maximumRate: 100, range: 4912, resolution: 0.15)

    static let all: [SensorKind: SensorCapability] = [
        .accelerometer: accelerometer, .gyro: gyro, .magnetometer: magnetometer,
    ]

    /// The capability of a motion sensor; `nil` for the barometer, which a simulated device does not
    /// carry (``SimulatedBarometerSource`` is one of its own).
    static func capability(_ kind: SensorKind) -> SensorCapability? {
        switch kind {
        case .accelerometer: accelerometer
        case .gyro: gyro
        case .magnetometer: magnetometer
        case .pressure: nil
        }
    }
}
