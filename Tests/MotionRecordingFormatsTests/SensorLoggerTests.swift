import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing

/// Fixtures written from the format description (shared/docs/phone-formats.md §3), not recordings.
@Suite struct SensorLoggerTests {
    static let t0: Int64 = 1_698_501_144_401_773_000

    static func metadata(platform: String, standardisation: String? = nil) -> String {
        var header = "version,device name,recording time,platform,appVersion,device id,sensors,sampleRateMs"
        var row = "3,\"Test, phone\",2024-01-02_10-00-00,\(platform),1.40.1,abc,Accelerometer|Gyroscope,10|10"
        if let standardisation {
            header += ",recording epoch time,recording timezone,standardisation"
            row += ",1698501144401,Europe/Berlin,\(standardisation)"
        }
        return header + "\n" + row
    }

    /// `time,seconds_elapsed,z,y,x` rows at 100 Hz from `t0`.
    static func xyz(_ rows: [(Int64, Double, Double, Double)], order: String = "time,seconds_elapsed,z,y,x") -> String {
        var s = order + "\n"
        for (i, r) in rows.enumerated() {
            var cells: [String: String] = ["time": "\(t0 + r.0)", "seconds_elapsed": "\(Double(i) * 0.01)", "x": "\(r.1)", "y": "\(r.2)", "z": "\(r.3)"]
            cells["extra"] = "0"
            s += order.split(separator: ",").map { cells[String($0)] ?? "" }.joined(separator: ",") + "\n"
        }
        return s
    }

    @Test func iOSZipRawStreamsPreferredInGAppleSign() throws {
        let staleDaysEarlier: Int64 = -328_883 * 1_000_000_000
        let zip = ZipFixture.archive([
            ("2024-01-02_10-00-00/Metadata.csv", Self.metadata(platform: "ios")),
            ("2024-01-02_10-00-00/AccelerometerUncalibrated.csv",
             Self.xyz([(staleDaysEarlier, 0, 0, 0), (0, 0.01, -0.02, -1.02), (10_000_000, 0.02, -0.01, -0.99), (10_000_000, 0.02, -0.01, -0.99)])),
            ("2024-01-02_10-00-00/Accelerometer.csv", Self.xyz([(0, 5, 5, 5)])),
            ("2024-01-02_10-00-00/Gravity.csv", Self.xyz([(0, 5, 5, 5)])),
            ("2024-01-02_10-00-00/Gyroscope.csv", Self.xyz([(0, 0.1, 0.2, 0.3)], order: "x,time,z,seconds_elapsed,y")),
            ("2024-01-02_10-00-00/MagnetometerUncalibrated.csv", Self.xyz([(5_000_000, 20, -5, -40)])),
            ("2024-01-02_10-00-00/Orientation.csv", "time,seconds_elapsed,yaw,qx,qz,roll,qw,qy,pitch\n1,0,0,0,0,0,1,0,0\n"),
            ("2024-01-02_10-00-00/Annotation.csv", ""),
        ])
        var input = try RecordingInput.open(bytes: zip, name: "export.zip")
        #expect(input.format == .sensorlogger)
        #expect(input.metadata["platform"] == "ios")
        #expect(input.metadata["device"] == "Test, phone")
        #expect(input.metadata["appVersion"] == "1.40.1")
        let s = try input.readAllInFileOrder()
        let acc = s.filter { $0.sample.sensor == .accelerometer }
        // Stale all-zero first row and the repeated last row are skipped; values unchanged (g, Apple's sign).
        #expect(acc.map(\.sample.value) == [Vector3(0.01, -0.02, -1.02), Vector3(0.02, -0.01, -0.99)])
        #expect(acc.map(\.line) == [3, 4])
        #expect(acc[0].path == "export.zip/2024-01-02_10-00-00/AccelerometerUncalibrated.csv")
        #expect(acc[0].sample.timestamp == 1_698_501_144.401773)
        #expect(abs(acc[1].sample.timestamp - acc[0].sample.timestamp - 0.01) < 1e-6)
        let gyro = s.filter { $0.sample.sensor == .gyro }
        #expect(gyro.map(\.sample.value) == [Vector3(0.1, 0.2, 0.3)])
        let mag = s.filter { $0.sample.sensor == .magnetometer }
        #expect(mag.map(\.sample.value) == [Vector3(20, -5, -40)])
    }

    @Test func androidFolderIsConvertedToGAndAppleSign() throws {
        let (input, s) = try readAll(entries: [
            "Metadata.csv": Self.metadata(platform: "android"),
            "AccelerometerUncalibrated.csv": Self.xyz([(0, 0.980665, -1.96133, 9.80665)]),
            "GyroscopeUncalibrated.csv": Self.xyz([(0, 0.1, -0.2, 0.3)]),
            "Gyroscope.csv": Self.xyz([(0, 9, 9, 9)]),
            "Magnetometer.csv": Self.xyz([(0, 10, 20, 30)]),
        ])
        #expect(input.format == .sensorlogger)
        #expect(input.metadata["container"] == "folder")
        expectClose(s.first { $0.sample.sensor == .accelerometer }!.sample.value, Vector3(-0.1, 0.2, -1))
        #expect(s.first { $0.sample.sensor == .gyro }!.sample.value == Vector3(0.1, -0.2, 0.3))
        #expect(s.first { $0.sample.sensor == .magnetometer }!.sample.value == Vector3(10, 20, 30))
    }

    @Test func calibratedAccelerometerPlusGravityBothPlatforms() throws {
        // iOS: user acceleration + gravity in m/s², Apple's sign. Gravity rows at 50 Hz, acceleration at 100 Hz.
        let user = Self.xyz([(0, 0.1, 0, 0), (10_000_000, 0, 0.2, 0), (20_000_000, 0, 0, 0.3)])
        let gravity = Self.xyz([(0, 0, 0, -9.80665), (20_000_000, 0, -9.80665, 0)])
        let (_, ios) = try readAll(entries: ["Metadata.csv": Self.metadata(platform: "ios"), "Accelerometer.csv": user, "Gravity.csv": gravity])
        let g = 9.80665
        #expect(ios.count == 3)
        expectClose(ios[0].sample.value, Vector3(0.1 / g, 0, -1))
        expectClose(ios[1].sample.value, Vector3(0, 0.2 / g, -1))  // latest gravity at or before
        expectClose(ios[2].sample.value, Vector3(0, -1, 0.3 / g))
        // Android: the same numbers with Android's sign (gravity +9.81 up) give the opposite.
        let (_, android) = try readAll(entries: [
            "Metadata.csv": Self.metadata(platform: "android"), "Accelerometer.csv": user,
            "Gravity.csv": Self.xyz([(0, 0, 0, 9.80665), (20_000_000, 0, 9.80665, 0)]),
        ])
        expectClose(android[0].sample.value, Vector3(-0.1 / g, 0, -1))
        expectClose(android[2].sample.value, Vector3(0, -1, -0.3 / g))
        #expect(errorText { _ = try readAll(entries: ["Metadata.csv": Self.metadata(platform: "ios"), "Accelerometer.csv": user]) }
                == "export: Accelerometer holds user acceleration only, and there is no Gravity to add to it (nor AccelerometerUncalibrated)")
    }

    @Test func standardisedIOSExportUsesAndroidConvention() throws {
        let (input, s) = try readAll(entries: [
            "Metadata.csv": Self.metadata(platform: "ios", standardisation: "true"),
            "AccelerometerUncalibrated.csv": Self.xyz([(0, 0, 0, 9.80665)]),
        ])
        expectClose(s[0].sample.value, Vector3(0, 0, -1))
        #expect(input.metadata["conversion"]?.contains("Android's sign") == true)
        let (_, plain) = try readAll(entries: [
            "Metadata.csv": Self.metadata(platform: "ios", standardisation: "false"),
            "AccelerometerUncalibrated.csv": Self.xyz([(0, 0, 0, -1)]),
        ])
        #expect(plain[0].sample.value == Vector3(0, 0, -1))
    }

    @Test func jsonExportWithoutClosingBracket() throws {
        func record(_ sensor: String, _ dt: Int64, _ x: Double, _ y: Double, _ z: Double) -> String {
            "{\"sensor\":\"\(sensor)\",\"time\":\"\(Self.t0 + dt)\",\"seconds_elapsed\":\"0.0\",\"z\":\"\(z)\",\"y\":\"\(y)\",\"x\":\"\(x)\"}"
        }
        let records = [
            record("AccelerometerUncalibrated", -300_000_000_000_000, 0, 0, 0),
            record("AccelerometerUncalibrated", 0, 0, 0, -1),
            record("AccelerometerUncalibrated", 10_000_000, 0.5, 0, -1),
            record("Gyroscope", 0, 0.1, 0.2, 0.3),
            "{\"sensor\":\"Metadata\",\"platform\":\"ios\",\"appVersion\":\"1.6.0\",\"version\":\"2\"}",
        ]
        let text = "[\n" + records.joined(separator: ",\n")  // no closing bracket
        var input = try RecordingInput.open(bytes: Array(text.utf8), name: "export.json")
        #expect(input.format == .sensorlogger)
        #expect(input.metadata["appVersion"] == "1.6.0")
        let s = try input.readAllInFileOrder()
        #expect(s.map(\.sample.sensor) == [.accelerometer, .accelerometer, .gyro])
        #expect(s.map(\.sample.value) == [Vector3(0, 0, -1), Vector3(0.5, 0, -1), Vector3(0.1, 0.2, 0.3)])
        #expect(s.map(\.line) == [3, 4, 5])
        // With the bracket, on one line, the same samples.
        var closed = try RecordingInput.open(bytes: Array(("[" + records.joined(separator: ",") + "]").utf8), name: "export.json")
        #expect(try closed.readAllInFileOrder().map(\.sample) == s.map(\.sample))
    }

    /// When the metadata does not tell the convention (no Metadata.csv, no platform, or a
    /// standardisation value this reader does not know), the raw acceleration's size does: about 1
    /// is g with Apple's sign (iOS), about 9.8 is m/s² with Android's sign.
    @Test func conventionInferredFromRawAccelerationWhenMetadataDoesNotTell() throws {
        let iosRaw = Self.xyz([(0, 0.01, -0.02, -1.0), (10_000_000, 0.0, -0.01, -1.01)])
        let androidRaw = Self.xyz([(0, -0.1, 0.2, 9.8), (10_000_000, 0.0, 0.1, 9.81)])
        for (meta, raw, expectedZ) in [
            (nil, iosRaw, -1.0),
            (nil, androidRaw, -9.8 / 9.80665),
            (Self.metadata(platform: "ios", standardisation: "Some New Value"), iosRaw, -1.0),
            (Self.metadata(platform: "ios", standardisation: "Some New Value"), androidRaw, -9.8 / 9.80665),
            (Self.metadata(platform: ""), androidRaw, -9.8 / 9.80665),
        ] as [(String?, String, Double)] {
            var entries = ["AccelerometerUncalibrated.csv": raw, "Gyroscope.csv": Self.xyz([(0, 0.1, 0.2, 0.3)])]
            if let meta { entries["Metadata.csv"] = meta }
            let acc = try readAll(entries: entries).1.filter { $0.sample.sensor == .accelerometer }
            #expect(acc.count == 2)
            #expect(abs(acc[0].sample.value.z - expectedZ) < 1e-12, "\(meta ?? "no metadata"): \(acc[0].sample.value)")
        }
        // Metadata that says the platform still decides, whatever the data.
        let stated = try readAll(entries: ["Metadata.csv": Self.metadata(platform: "android"), "AccelerometerUncalibrated.csv": iosRaw]).1
        #expect(abs(stated[0].sample.value.z - 1.0 / 9.80665) < 1e-12)
    }

    @Test func errorsNameFileAndLine() {
        let meta = Self.metadata(platform: "ios")
        #expect(errorText { _ = try readAll(entries: ["Metadata.csv": meta, "Gyroscope.csv": "time,seconds_elapsed,z,y,x\n1,0,1,2,nan\n"]) }
                == "export/Gyroscope.csv:2: 'nan' is not a finite number")
        #expect(errorText { _ = try readAll(entries: ["Metadata.csv": meta, "Gyroscope.csv": "time,seconds_elapsed,z,y,x\n12:00,0,1,2,3\n"]) }
                == "export/Gyroscope.csv:2: time '12:00' is not a number")
        #expect(errorText { _ = try readAll(entries: ["Metadata.csv": meta, "Gyroscope.csv": "time,seconds_elapsed,a,b,c\n1,0,1,2,3\n"]) }
                == "export/Gyroscope.csv:1: no column 'x' in the header")
        #expect(errorText { _ = try readAll(entries: ["Gyroscope.csv": "time,seconds_elapsed,z,y,x\n1,0,1,2,3\n", "Gravity.csv": "time,seconds_elapsed,z,y,x\n"]) }
                == "export: no Metadata.csv: it says whether the export is from iOS (g, Apple's sign) or Android (m/s², opposite sign)")
        #expect(errorText { _ = try readAll(entries: ["Metadata.csv": Self.metadata(platform: "windows"), "Gyroscope.csv": "time,seconds_elapsed,z,y,x\n"]) }
                == "export: unknown platform 'windows' in the metadata (expected ios or android)")
        #expect(errorText { _ = try readAll("[{\"sensor\":\"Gyroscope\",\"time\":\"1\",\"x\":\"1\",\"y\":\"2\",\"z\":\"3\"},\n{\"sensor\":\"Metadata\",\"platform\":\"ios\"},\n{\"sensor\":\"Gyro", name: "e.json") }
                == "e.json:3: the input ends inside a JSON object")
        #expect(errorText { _ = try readAll("time,seconds_elapsed,z,y,x\n1,0,1,2,3\n", name: "Gyroscope.csv") }
                == "Gyroscope.csv: a Sensor Logger CSV file alone cannot be read: open the whole export (folder or zip), whose Metadata.csv says the platform")
    }
}
