import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing

/// Fixtures written from the format descriptions (shared/docs/phone-formats.md), not recordings.
@Suite struct SensorLogTests {
    static let header = "loggingTime(txt),loggingSample(N),accelerometerTimestamp_sinceReboot(s),accelerometerAccelerationX(G),accelerometerAccelerationY(G),accelerometerAccelerationZ(G),gyroTimestamp_sinceReboot(s),gyroRotationX(rad/s),gyroRotationY(rad/s),gyroRotationZ(rad/s),magnetometerTimestamp_sinceReboot(s),magnetometerX(µT),magnetometerY(µT),magnetometerZ(µT),motionHeading(°)"

    @Test func perSensorClocksAndHeldValues() throws {
        let text = Self.header + "\r\n"
            + "2018-04-08 10:31:37.097,0,1000.010,0.01,-0.02,-0.99,1000.012,0.1,0.2,0.3,1000.005,20,-5,-40,-1\r\n"
            + "2018-04-08 10:31:37.107,1,1000.020,0.02,-0.02,-0.98,1000.012,0.1,0.2,0.3,1000.015,21,-5,-40,-1\r\n"
            + "2018-04-08 10:31:37.117,2,1000.020,0.02,-0.02,-0.98,1000.032,0.4,0.5,0.6,1000.015,21,-5,-40,-1"
        var input = try RecordingInput.open(bytes: Array(text.utf8), name: "log.csv")
        #expect(input.format == .sensorlog)
        let s = try input.readAllInFileOrder()
        #expect(s.map(\.sample.sensor) == [.magnetometer, .accelerometer, .gyro, .magnetometer, .accelerometer, .gyro])
        #expect(s.map(\.sample.timestamp) == [1000.005, 1000.010, 1000.012, 1000.015, 1000.020, 1000.032])
        #expect(s.map(\.line) == [2, 2, 2, 3, 3, 4])
        #expect(s[1].sample.value == Vector3(0.01, -0.02, -0.99))  // g, Apple's sign: unchanged
        #expect(s[5].sample.value == Vector3(0.4, 0.5, 0.6))
        #expect(s[0].sample.value == Vector3(20, -5, -40))
    }

    @Test func deviceMotionFallbackSemicolonsAndDecimalComma() throws {
        let text = "loggingTime(txt);motionTimestamp_sinceReboot(s);motionUserAccelerationX(G);motionUserAccelerationY(G);motionUserAccelerationZ(G);motionGravityX(G);motionGravityY(G);motionGravityZ(G);motionRotationRateX(rad/s);motionRotationRateY(rad/s);motionRotationRateZ(rad/s);motionMagneticFieldX(µT);motionMagneticFieldY(µT);motionMagneticFieldZ(µT);motionMagneticFieldCalibrationAccuracy(Z)\n"
            + "x;5,5;0,1;0;0;0;0;-1;0,01;0,02;0,03;0;0;0;-1\n"
            + "x;5,51;0;0,2;0;0;0;-1;0,01;0,02;0,03;30;0;-20;2\n"
        let s = try readAll(text, name: "log.csv")
        #expect(s.filter { $0.sample.sensor == .accelerometer }.map(\.sample.value) == [Vector3(0.1, 0, -1), Vector3(0, 0.2, -1)])
        #expect(s.filter { $0.sample.sensor == .gyro }.count == 2)
        // The uncalibrated (accuracy −1, all-zero) field is skipped.
        #expect(s.filter { $0.sample.sensor == .magnetometer }.map(\.sample) == [RawSample(sensor: .magnetometer, timestamp: 5.51, value: Vector3(30, 0, -20))])
    }

    @Test func unitsAndValuesAreChecked() {
        let bad = Self.header.replacingOccurrences("accelerometerAccelerationX(G)", "accelerometerAccelerationX(m/s^2)")
        #expect(errorText { _ = try readAll(bad + "\n", name: "log.csv") } == "log.csv:1: column accelerometerAccelerationX is in 'm/s^2', expected G")
        #expect(errorText { _ = try readAll(Self.header + "\nt,0,1000.010,0.01,abc,-0.99,1000.012,0.1,0.2,0.3,1000.005,20,-5,-40,-1\n", name: "log.csv") }
                == "log.csv:2: 'abc' is not a number")
        #expect(errorText { _ = try readAll("loggingTime(txt),locationLatitude(WGS84)\nx,1\n", name: "log.csv") }
                == "log.csv:1: no accelerometer, gyroscope or magnetometer columns with their …Timestamp_sinceReboot in this SensorLog header")
    }
}

@Suite struct PhyphoxTests {
    static let time = "\"event\",\"experiment time\",\"system time\",\"system time text\"\n"
        + "\"START\",0.000000000E0,1.750376006798000000E9,\"2025-06-19 20:33:26.798 UTC-04:00\"\n"
        + "\"PAUSE\",1.000000000E0,1.750376007798000000E9,\"2025-06-19 20:33:27.798 UTC-04:00\"\n"
        + "\"START\",1.000000000E0,1.750376017798000000E9,\"2025-06-19 20:33:37.798 UTC-04:00\"\n"

    @Test func zipWithMetaTimeCommaSeparated() throws {
        let raw = "\"Time (s)\",\"Acceleration x (m/s^2)\",\"Acceleration y (m/s^2)\",\"Acceleration z (m/s^2)\",\"Absolute acceleration (m/s^2)\"\n"
            + "5.000000000E-1,9.810000000E-1,0.000000000E0,9.810000000E0,9.859E0\n"
            + "1.500000000E0,0.000000000E0,-1.962000000E0,9.810000000E0,NaN\n"
        let zip = ZipFixture.archive([
            ("Raw Data.csv", raw),
            ("meta/time.csv", Self.time),
            ("meta/device.csv", "\"property\",\"value\"\n\"version\",\"1.2.0\"\n\"deviceBrand\",\"Apple\"\n\"deviceModel\",\"iPhone15,2\"\n"),
        ])
        var input = try RecordingInput.open(bytes: zip, name: "phyphox.zip")
        #expect(input.format == .phyphox)
        #expect(input.metadata["platform"] == "ios")
        #expect(input.metadata["device"] == "Apple iPhone15,2")
        let s = try input.readAllInFileOrder()
        #expect(s.count == 2)
        // Android's sign, m/s² over phyphox's 9.81 → g with Apple's sign.
        expectClose(s[0].sample.value, Vector3(-0.1, 0, -1))
        expectClose(s[1].sample.value, Vector3(0, 0.2, -1))
        // Epoch from the START event before each sample (the pause is skipped).
        #expect(abs(s[0].sample.timestamp - 1_750_376_007.298) < 1e-6)
        #expect(abs(s[1].sample.timestamp - 1_750_376_018.298) < 1e-6)
        #expect(s[1].path == "phyphox.zip/Raw Data.csv")
        #expect(s[1].line == 3)
    }

    @Test func semicolonTabDecimalCommaAndGaps() throws {
        let gyro = "\"Time (s)\";\"Gyroscope x (rad/s)\";\"Gyroscope y (rad/s)\";\"Gyroscope z (rad/s)\"\n"
            + "0,5;0,1;-0,2;3,0E-1\n1,0;NaN;NaN;NaN\n1,5;1;2;3\n"
        let mag = "\"Time (s)\"\t\"Magnetic field x (µT)\"\t\"Magnetic field y (µT)\"\t\"Magnetic field z (µT)\"\n0,25\t20,5\t-5\t-40\n"
        let linear = "\"Time (s)\",\"Linear Acceleration x (m/s^2)\",\"Linear Acceleration y (m/s^2)\",\"Linear Acceleration z (m/s^2)\"\n0,1,1,1\n"
        let (input, s) = try readAll(entries: ["Gyroscope.csv": gyro, "Magnetometer.csv": mag, "Linear.csv": linear, "meta/device.csv": "\"property\",\"value\"\n"])
        #expect(input.format == .phyphox)
        #expect(input.metadata["timeBase"] == "seconds since the experiment started (no meta/time.csv)")
        #expect(s.map(\.sample) == [
            RawSample(sensor: .gyro, timestamp: 0.5, value: Vector3(0.1, -0.2, 0.3)),
            RawSample(sensor: .gyro, timestamp: 1.5, value: Vector3(1, 2, 3)),
            RawSample(sensor: .magnetometer, timestamp: 0.25, value: Vector3(20.5, -5, -40)),
        ])
    }

    @Test func singleFileAndErrors() throws {
        let s = try readAll("\"Time (s)\",\"X (m/s^2)\",\"Y (m/s^2)\",\"Z (m/s^2)\"\n0,0,0,9.81\n", name: "Raw Data.csv")
        expectClose(s[0].sample.value, Vector3(0, 0, -1))
        #expect(errorText { _ = try readAll("\"Time (s)\",\"X (m/s^2)\",\"Y (m/s^2)\",\"Z (m/s^2)\"\n0,0,x,9.81\n", name: "Raw Data.csv") }
                == "Raw Data.csv:2: 'x' is not a number")
        #expect(errorText { _ = try readAll("\"Time (s)\",\"Pressure (hPa)\"\n0,1000\n", name: "p.csv") }
                == "p.csv: no accelerometer (with g), gyroscope or magnetometer columns in this phyphox export")
    }
}

@Suite struct HyperIMUTests {
    @Test func preambleHeaderEpochMillisecondsAndRepeats() throws {
        let text = "@ HyperIMU - ianovir - 2017\r\n@ Date: Mon Jan 01 10:00:00 GMT 2024 Sampling Time: 20ms\r\n\r\n"
            + "timestamp,BMI160_Accelerometer.x,BMI160_Accelerometer.y,BMI160_Accelerometer.z,BMI160_Gyroscope.x,BMI160_Gyroscope.y,BMI160_Gyroscope.z,"
            + "AK09915_Magnetometer.x,AK09915_Magnetometer.y,AK09915_Magnetometer.z,MPL_Rotation_Vector.x,MPL_Rotation_Vector.y,MPL_Rotation_Vector.z\r\n"
            + "1704103200000,0.980665,0.0,9.80665,0.1,0.2,0.3,20,-5,-40,0,0,0\r\n"
            + "1704103200000,0.980665,0.0,9.80665,0.1,0.2,0.3,20,-5,-40,0,0,0\r\n"
            + "1704103200023,0.0,-1.96133,9.80665,0.4,0.5,0.6,21,-5,-40,0,0,0#\r\n"
        var input = try RecordingInput.open(bytes: Array(text.utf8), name: "HIMU.csv")
        #expect(input.format == .hyperimu)
        let s = try input.readAllInFileOrder()
        #expect(s.count == 6)
        let acc = s.filter { $0.sample.sensor == .accelerometer }
        expectClose(acc[0].sample.value, Vector3(-0.1, 0, -1))
        expectClose(acc[1].sample.value, Vector3(0, 0.2, -1))
        #expect(acc.map(\.sample.timestamp) == [1_704_103_200.0, 1_704_103_200.023])
        #expect(acc.map(\.line) == [5, 7])
        #expect(s.filter { $0.sample.sensor == .gyro }.map(\.sample.value) == [Vector3(0.1, 0.2, 0.3), Vector3(0.4, 0.5, 0.6)])
        #expect(s.filter { $0.sample.sensor == .magnetometer }.count == 2)
    }

    @Test func olderFileWithoutColumnRow() throws {
        let text = "@ HyperIMU - ianovir - 2017\n@Sensors: LSM6DS3 Accelerometer, LSM6DS3 Gyroscope\n@ SamplingTime: 20ms\n0,0,9.80665,0.1,0.2,0.3\n0,0,-9.80665,0.1,0.2,0.3\n"
        let s = try readAll(text, name: "old.csv")
        #expect(s.map(\.sample.timestamp) == [0, 0, 0.02, 0.02])
        expectClose(s[0].sample.value, Vector3(0, 0, -1))
        expectClose(s[2].sample.value, Vector3(0, 0, 1))
    }

    @Test func errors() {
        #expect(errorText { _ = try readAll("@ HyperIMU\ntimestamp,A.x,A.y,A.z\n1,2,3,4\n", name: "h.csv") }
                == "h.csv:2: no accelerometer, gyroscope or magnetometer columns in this HyperIMU file")
        #expect(errorText { _ = try readAll("@ HyperIMU\ntimestamp,Accelerometer.x,Accelerometer.y,Accelerometer.z\n1,2,3\n", name: "h.csv") }
                == "h.csv:3: expected 4 columns or more, found 3")
    }
}

extension String {
    func replacingOccurrences(_ a: String, _ b: String) -> String { replacing(a, with: b) }
}

@Suite struct BroadFormatTests {
    @Test func fixtureRowsBecomeThreeSamplesAtIndexOverRate() throws {
        let text = "# BROAD trial demo; sampling_rate_hz=200; CC-BY-4.0\nt,acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z,mag_x,mag_y,mag_z,q_w,q_x,q_y,q_z,movement\n"
            + "0.000,0.980665,0,9.80665,0.1,0.2,0.3,10,20,-40,,,,,0\n0.005,0,-1.96133,9.80665,0.4,0.5,0.6,11,21,-41,1,0,0,0,1\n"
        var input = try RecordingInput.open(bytes: Array(text.utf8), name: "b.csv")
        #expect(input.format == .broad)
        #expect(input.metadata["samplingRate"] == "200.0")
        let s = try input.readAllInFileOrder()
        #expect(s.map(\.sample.sensor) == [.accelerometer, .gyro, .magnetometer, .accelerometer, .gyro, .magnetometer])
        #expect(s.map(\.sample.timestamp) == [0, 0, 0, 0.005, 0.005, 0.005])
        expectClose(s[0].sample.value, Vector3(-0.1, 0, -1))  // specific force → Apple's sign, g
        expectClose(s[3].sample.value, Vector3(0, 0.2, -1))
        #expect(s[4].sample.value == Vector3(0.4, 0.5, 0.6))
        #expect(s[5].sample.value == Vector3(11, 21, -41))
        #expect(s[5].line == 4)
    }

    @Test func sharedTrialReads() throws {
        let path = "../shared/data/broad/01_undisturbed_slow_rotation_A.csv"
        var input = try RecordingInput.open(path: path)
        #expect(input.format == .broad)
        var count = 0
        var first: RecordedSample? = nil
        var last: RecordedSample? = nil
        while let s = try input.streams[0].next() {
            if first == nil { first = s }
            last = s
            count += 1
        }
        #expect(count % 3 == 0 && count > 30_000)
        // Row 1: acc (-0.2361874, -0.3631649, 9.919315) m/s².
        expectClose(first!.sample.value, Vector3(0.2361874, 0.3631649, -9.919315) / 9.80665)
        #expect(abs(last!.sample.timestamp - Double(count / 3 - 1) / 285.7142857142857) < 1e-9)
    }
}
