import MotionRecordingFormats
import Testing

/// Damaged input of every format must give samples or a RecordingError: never a crash, a trap or a hang.
@Suite struct RobustnessTests {
    static let fixtures: [String] = [
        "timestamp,sensor,x,y,z\n1,gyro,1,2,3\n2,accelerometer,0,0,-1\n3,magnetometer,1e308,-4.5,0\n",
        "timestamp,x,y,z\n# sensor=gyro\n1,2,3,4\n",
        "{\"timestamp\":1,\"sensor\":\"gyro\",\"x\":1,\"y\":2,\"z\":3}\n{\"timestamp\":2,\"sensor\":\"magnetometer\",\"x\":1,\"y\":2,\"z\":3}\n",
        "# BROAD trial x; sampling_rate_hz=100\nt,acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z,mag_x,mag_y,mag_z,q_w\n0,0,0,9.8,0,0,0,1,2,3,\n",
        "[{\"sensor\":\"GyroscopeUncalibrated\",\"time\":\"1698501144401773000\",\"x\":\"1\",\"y\":\"2\",\"z\":\"3\"},{\"sensor\":\"Metadata\",\"platform\":\"android\"}]",
        SensorLogTests.header + "\nt,0,1000.010,0.01,-0.02,-0.99,1000.012,0.1,0.2,0.3,1000.005,20,-5,-40,-1\n",
        "\"Time (s)\";\"Gyroscope x (rad/s)\";\"Gyroscope y (rad/s)\";\"Gyroscope z (rad/s)\"\n0,5;0,1;-0,2;3,0E-1\n1,0;NaN;NaN;NaN\n",
        "@ HyperIMU\n@ Sampling Time: 20ms\ntimestamp,A_Accelerometer.x,A_Accelerometer.y,A_Accelerometer.z\n1000,0,0,9.8\n",
        "@ HyperIMU\n@Sensors: Accelerometer, Gyroscope\n@ SamplingTime: 20ms\n0,0,9.8,1,2,3\n",
    ]

    static let noise: [UInt8] = Array(",;\t\"\n\r{}[]:#@.eE-+0919 \u{0}".utf8) + [0xFF, 0xC3]

    /// Reads whatever can be read; returns the number of samples, or -1 for a RecordingError.
    @discardableResult
    static func drain(_ bytes: [UInt8], format: RecordingFormat? = nil) -> Int {
        do {
            var input = try RecordingInput.open(bytes: bytes, name: "f", format: format)
            return try input.readAllInFileOrder().count
        } catch {
            return -1
        }
    }

    @Test func everyFixtureReads() {
        for f in Self.fixtures { #expect(Self.drain(Array(f.utf8)) > 0, "\(f)") }
    }

    @Test func mutatedFixturesNeverCrash() {
        var rng = SplitMix(seed: 8)
        for fixture in Self.fixtures {
            let base = Array(fixture.utf8)
            for _ in 0..<300 {
                var b = base
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let i = b.isEmpty ? 0 : Int.random(in: 0..<b.count, using: &rng)
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0 where !b.isEmpty: b[i] = Self.noise.randomElement(using: &rng)!
                    case 1: b.insert(Self.noise.randomElement(using: &rng)!, at: i)
                    case 2 where !b.isEmpty: b.remove(at: i)
                    default: b = Array(b.prefix(i))
                    }
                }
                Self.drain(b)
                Self.drain(b, format: RecordingFormat.allCases.randomElement(using: &rng)!)
            }
        }
    }

    @Test func everyFormatForcedOnEveryFixture() {
        for fixture in Self.fixtures {
            for format in RecordingFormat.allCases { Self.drain(Array(fixture.utf8), format: format) }
        }
    }

    @Test func randomBytesAndZipDamage() {
        var rng = SplitMix(seed: 3)
        for n in [0, 1, 3, 4, 22, 100, 5000] {
            for _ in 0..<20 {
                var b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if n >= 4, Bool.random(using: &rng) { b[0] = 0x50; b[1] = 0x4B; b[2] = 3; b[3] = 4 }
                #expect(Self.drain(b) <= 0)
            }
        }
        let zip = ZipFixture.archive([("Metadata.csv", "platform\nios\n"), ("Gyroscope.csv", "time,seconds_elapsed,z,y,x\n1,0,1,2,3\n")])
        for _ in 0..<500 {
            var b = zip
            b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            Self.drain(b)
        }
    }
}

/// A small seeded generator, so failures reproduce.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
