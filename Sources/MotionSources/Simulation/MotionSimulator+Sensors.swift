import MotionFusion

extension MotionSimulator {
    /// The sampling state and noise generator of one sensor.
    struct Channel: Sendable {
        let kind: SensorKind
        /// Hz; 0 when off.
        var rate: Double = 0
        /// Index of the next sample on the grid `startTime + index / rate`.
        var index: Int64 = 0
        /// Per-sample white-noise standard deviation, in the sensor's unit.
        var sigma: Double = 0
        var noise: NoiseGenerator

        init(kind: SensorKind, seed: UInt64) {
            self.kind = kind
            self.noise = NoiseGenerator(seed: seed)
        }

        @inline(__always)
        func nextTime(base: Double) -> Double { base + Double(index) / rate }

        /// The reading of this sensor for `truth`: the sensor model, then clipping and rounding.
        mutating func read(_ truth: SimulatedTruth, options: SimulationOptions) -> Vector3 {
            let (nx, ny, nz) = noise.gaussianVector(sigma: sigma)
            let n = Vector3(nx, ny, nz)
            let ideal: Vector3
            switch kind {
            case .accelerometer:
                ideal = truth.gravity + truth.userAcceleration + options.accelBias
            case .gyro:
                ideal = truth.rotationRate + options.gyroSensitivityError * truth.rotationRate + truth.gyroBias
            case .magnetometer:
                ideal = options.softIron * truth.magneticField + options.hardIron
            case .pressure:
                ideal = .zero  // no channel: the simulator's barometer is SimulatedBarometer
            }
            guard let capability = SimulatedSensorSpec.capability(kind) else { return ideal + n }
            return Self.convert(ideal + n, capability, quantize: options.quantizesOutput)
        }

        /// Clips each axis to the range and, when asked, rounds it to the resolution.
        static func convert(_ v: Vector3, _ c: SensorCapability, quantize: Bool) -> Vector3 {
            func axis(_ x: Double) -> Double {
                var y = x
                if let range = c.range { y = min(max(y, -range), range) }
                if quantize, let step = c.resolution, step > 0 { y = (y / step).rounded() * step }
                return y
            }
            return Vector3(axis(v.x), axis(v.y), axis(v.z))
        }
    }

    /// Per-sample standard deviation of white noise of one-sided density `N` sampled at `rate`:
    /// `N · √(rate / 2)` (the noise bandwidth of a sampled white process is the Nyquist frequency).
    /// The magnetometer's noise is specified as an rms value and does not depend on the rate.
    static func whiteNoiseSigma(_ kind: SensorKind, rate: Double, options: SimulationOptions) -> Double {
        switch kind {
        case .accelerometer: max(options.accelNoiseDensity, 0) * (rate / 2).squareRoot()
        case .gyro: max(options.gyroNoiseDensity, 0) * (rate / 2).squareRoot()
        case .magnetometer: max(options.magNoise, 0)
        case .pressure: 0
        }
    }
}
