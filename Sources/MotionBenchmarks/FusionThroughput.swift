import MotionFusion

/// Measures ``AttitudeFilter``'s throughput on one thread over a deterministic synthetic recording.
package enum FusionThroughput {
    /// Result of a throughput run.
    package struct Result: Sendable, Codable, Hashable {
        /// 9D samples (gyro + accelerometer + magnetometer) per second.
        package var samplesPerSecond9D: Double
        /// 6D samples (gyro + accelerometer) per second.
        package var samplesPerSecond6D: Double
        /// Samples per run.
        package var samples: Int

        enum CodingKeys: String, CodingKey {
            case samplesPerSecond9D = "samples_per_second_9d"
            case samplesPerSecond6D = "samples_per_second_6d"
            case samples
        }
    }

    /// A synthetic recording at 285.7 Hz: a device tumbling with varying rates, with linear acceleration
    /// bursts and a constant magnetic field (µT), in Core Motion's units and signs.
    package static func syntheticRecording(count: Int) -> (gyro: [Vector3], accelerometer: [Vector3], magnetometer: [Vector3]) {
        var gyro = [Vector3](), acc = [Vector3](), mag = [Vector3]()
        gyro.reserveCapacity(count); acc.reserveCapacity(count); mag.reserveCapacity(count)
        var q = Quaternion.identity
        let dt = 0.0035
        let field = Vector3(20, 0, -40)
        for i in 0..<count {
            let t = Double(i) * dt
            let w = Vector3(1.5 * sine(0.7 * t), 1.1 * sine(0.45 * t + 1), 0.8 * sine(0.3 * t + 2))
            q = (q * Quaternion(rotationVector: w * dt)).normalized
            let linear = Vector3(0.3 * sine(5 * t), 0, 0)
            gyro.append(w + Vector3(0.01, -0.02, 0.005))
            acc.append(q.inverseRotate(Vector3(0, 0, -1)) + linear)
            mag.append(q.inverseRotate(field))
        }
        return (gyro, acc, mag)
    }

    /// CPU time consumed by the calling thread, seconds (immune to time the thread spends descheduled
    /// on a busy machine).
    static func threadCPUTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Runs the filter `repetitions` times over `count` synthetic samples in each mode and keeps the best
    /// rate, measured in thread CPU time.
    package static func measure(count: Int = 1_000_000, repetitions: Int = 5) -> Result {
        let rec = syntheticRecording(count: count)
        func run(_ nine: Bool) -> Double {
            var best = 0.0
            for _ in 0..<repetitions {
                var f = AttitudeFilter(usesMagnetometer: nine)
                let dt = 0.0035
                let t0 = threadCPUTime()
                do {
                    rec.gyro.withUnsafeBufferPointer { g in
                        rec.accelerometer.withUnsafeBufferPointer { a in
                            rec.magnetometer.withUnsafeBufferPointer { m in
                                for i in 0..<count {
                                    f.updateGyro(g[i], dt: dt)
                                    f.updateAccelerometer(a[i], dt: dt)
                                    if nine { f.updateMagnetometer(m[i], dt: dt) }
                                }
                            }
                        }
                    }
                }
                let s = threadCPUTime() - t0
                blackHole(f.quaternion)
                if s > 0 { best = max(best, Double(count) / s) }
            }
            return best
        }
        return Result(samplesPerSecond9D: run(true), samplesPerSecond6D: run(false), samples: count)
    }
}

@inline(never)
func blackHole(_ q: Quaternion) {
    if q.w.isNaN && q.x == 12345 { print(q) }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

func sine(_ x: Double) -> Double { sin(x) }
