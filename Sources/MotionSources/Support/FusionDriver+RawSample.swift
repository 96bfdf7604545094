import MotionFusion

extension FusionDriver {
    /// Feeds one raw sample to the filter by its sensor (see ``FusionDriver``'s rules); a pressure
    /// sample is ignored.
    /// - Returns: `true` when the sample is a fused update (an accepted gyroscope sample once an
    ///   accelerometer sample has been accepted): read ``FusionDriver/estimate`` for its output.
    @inlinable
    public mutating func update(_ sample: RawSample) -> Bool {
        switch sample.sensor {
        case .accelerometer:
            updateAccelerometer(sample.value, timestamp: sample.timestamp)
            return false
        case .magnetometer:
            updateMagnetometer(sample.value, timestamp: sample.timestamp)
            return false
        case .gyro:
            return updateGyro(sample.value, timestamp: sample.timestamp)
        case .pressure:
            return false
        }
    }
}
