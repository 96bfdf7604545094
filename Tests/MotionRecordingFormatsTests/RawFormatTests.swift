import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing

@Suite struct RawFormatTests {
    @Test func multiSensorCSV() throws {
        let s = try readAll("timestamp,sensor,x,y,z\n1.5,accelerometer,0.01,-0.02,-0.98\n1.51,gyro,0.1,0.2,0.3\n1.52,magnetometer,20,-5,-40\n")
        #expect(s.map(\.sample.sensor) == [.accelerometer, .gyro, .magnetometer])
        #expect(s[0].sample.timestamp == 1.5)
        #expect(s[0].sample.value == Vector3(0.01, -0.02, -0.98))
        #expect(s[2].sample.value == Vector3(20, -5, -40))
        #expect(s.map(\.line) == [2, 3, 4])
        #expect(s[1].path == "rec.csv")
    }

    @Test func oneSensorCSVWithComment() throws {
        let s = try readAll("timestamp,x,y,z\n# sensor=gyro\n0.5,1,2,3\n0.6,4,5,6\n# sensor=magnetometer\n0.7,7,8,9\n")
        #expect(s.map(\.sample.sensor) == [.gyro, .gyro, .magnetometer])
        #expect(s.map(\.line) == [3, 4, 6])
    }

    @Test func columnsInAnyOrderAndExtraColumnsIgnored() throws {
        let s = try readAll("x,y,z,sensor,timestamp,note\n1,2,3,gyro,7.25,hello\n")
        #expect(s.count == 1)
        #expect(s[0].sample == RawSample(sensor: .gyro, timestamp: 7.25, value: Vector3(1, 2, 3)))
    }

    @Test func textQuirksAccepted() throws {
        let plain = try readAll("timestamp,sensor,x,y,z\n1,gyro,1,2,3\n2,gyro,4,5,6\n")
        let quirky = "\u{FEFF}# a comment\r\n\r\ntimestamp,sensor,x,y,z  \r\n  # another\r\n1,gyro,1,2,3 \t\r\n\r\n2, gyro ,4,5,6"
        let s = try readAll(quirky)
        #expect(s.map(\.sample) == plain.map(\.sample))
        #expect(s.map(\.line) == [5, 7])
    }

    @Test func jsonLines() throws {
        let s = try readAll("{\"timestamp\":1.25,\"sensor\":\"accelerometer\",\"x\":0,\"y\":0,\"z\":-1}\r\n\n{\"z\":3,\"y\":2,\"x\":1,\"sensor\":\"gyro\",\"timestamp\":1.5,\"extra\":{\"a\":[1,2]}}",
                            name: "rec.jsonl")
        #expect(s.map(\.sample) == [
            RawSample(sensor: .accelerometer, timestamp: 1.25, value: Vector3(0, 0, -1)),
            RawSample(sensor: .gyro, timestamp: 1.5, value: Vector3(1, 2, 3)),
        ])
        #expect(s.map(\.line) == [1, 3])
    }

    @Test func hugeNumbersAreValuesNotTraps() throws {
        let s = try readAll("timestamp,sensor,x,y,z\n1e308,gyro,-1.7976931348623157e308,4.9e-324,1e-400\n")
        #expect(s[0].sample.timestamp == 1e308)
        #expect(s[0].sample.value.x == -Double.greatestFiniteMagnitude)
        #expect(s[0].sample.value.y == Double.leastNonzeroMagnitude)
        #expect(s[0].sample.value.z == 0)
    }

    @Test func errorsNameFileLineAndText() {
        let header = "timestamp,sensor,x,y,z\n"
        let cases: [(String, String)] = [
            (header + "1,gyro,1,2,3\n2,gyro,abc,2,3\n", "rec.csv:3: 'abc' is not a number"),
            (header + "1,gyro,nan,2,3\n", "rec.csv:2: 'nan' is not a finite number"),
            (header + "1,gyro,1,-inf,3\n", "rec.csv:2: '-inf' is not a finite number"),
            (header + "1,gyro,1,2,1e400\n", "rec.csv:2: '1e400' is not a finite number"),
            (header + "1,gyro,1,2\n", "rec.csv:2: expected 5 columns, found 4"),
            (header + "1,gyro,1,,3\n", "rec.csv:2: empty field where a number is expected"),
            (header + "1,compass,1,2,3\n", "rec.csv:2: unknown sensor 'compass': expected accelerometer, gyro or magnetometer"),
            (header + "1,gyro,1.2.3,2,3\n", "rec.csv:2: '1.2.3' is not a number"),
            (header + "1,gyro,0x10,2,3\n", "rec.csv:2: '0x10' is not a number"),
            ("timestamp,x,y,z\n1,2,3,4\n", "rec.csv:2: a one-sensor recording needs a '# sensor=NAME' comment before its first row"),
            ("timestamp,q_w,q_x,q_y,q_z\n", "rec.csv:1: this is a device-motion recording (attitude, gravity…), not raw sensor samples: record with '--sensor raw'"),
        ]
        for (text, expected) in cases {
            #expect(errorText { _ = try readAll(text) } == expected, "\(text)")
        }
    }

    @Test func goodRowsBeforeAnErrorAreReturned() throws {
        var input = try RecordingInput.open(bytes: Array("timestamp,sensor,x,y,z\n1,gyro,1,2,3\n2,gyro,x,2,3\n".utf8), name: "rec.csv")
        #expect(try input.streams[0].next()?.sample.timestamp == 1)
        #expect(throws: RecordingError("'x' is not a number", path: "rec.csv", line: 3)) { try input.streams[0].next() }
    }

    @Test func forcedFormatReadsAnyName() throws {
        let s = try readAll("timestamp,sensor,x,y,z\n1,gyro,1,2,3\n", name: "weird.bin", format: .csv)
        #expect(s.count == 1)
        #expect(errorText { _ = try readAll("hello\n", format: .csv) }?.hasPrefix("rec.csv:1: unrecognised header 'hello'") == true)
        #expect(errorText { _ = try readAll("", format: .csv) } == "rec.csv: no header line: expected 'timestamp,sensor,x,y,z' or 'timestamp,x,y,z'")
    }

    @Test func roundTripIsBitExact() throws {
        var rng = SystemRandomNumberGenerator()
        var samples: [RawSample] = []
        let specials: [Double] = [0, -0.0, 1e308, -1e-300, .leastNonzeroMagnitude, 0.1, 1.0 / 3.0, 123456.789, -9.80665, 1e22, 1e23]
        for i in 0..<2000 {
            let kind = SensorKind.motion[i % 3]
            func value() -> Double {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: return specials.randomElement(using: &rng)!
                case 1: return Double.random(in: -20...20, using: &rng)
                case 2: return Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng) & 0x7FEF_FFFF_FFFF_FFFF) * (Bool.random(using: &rng) ? 1 : -1)
                default: return Double(Int.random(in: -1000...1000, using: &rng)) / 1000
                }
            }
            samples.append(RawSample(sensor: kind, timestamp: 1000 + Double(i) * 0.01 + Double.random(in: 0..<0.001, using: &rng),
                                     value: Vector3(value(), value(), value())))
        }
        for encoding in RawRecordingWriter.Encoding.allCases {
            let writer = RawRecordingWriter(encoding: encoding)
            var text = writer.header
            for s in samples { try writer.append(s, to: &text) }
            let back = try readAll(text)
            #expect(back.count == samples.count)
            for (a, b) in zip(back.map(\.sample), samples) {
                #expect(a.sensor == b.sensor)
                #expect(a.timestamp.bitPattern == b.timestamp.bitPattern)
                #expect(a.value.x.bitPattern == b.value.x.bitPattern && a.value.y.bitPattern == b.value.y.bitPattern
                        && a.value.z.bitPattern == b.value.z.bitPattern, "\(a) vs \(b)")
            }
        }
        // One sensor per file.
        for kind in SensorKind.motion {
            let writer = RawRecordingWriter(encoding: .csv, sensor: kind)
            var text = writer.header
            for s in samples where s.sensor == kind { try writer.append(s, to: &text) }
            #expect(try readAll(text).map(\.sample) == samples.filter { $0.sensor == kind })
        }
    }

    @Test func writerRefusesNonFiniteAndForeignSensors() throws {
        let w = RawRecordingWriter(encoding: .csv, sensor: .gyro)
        #expect(w.header == "timestamp,x,y,z\n# sensor=gyro\n")
        #expect(throws: RecordingError.self) { try w.line(RawSample(sensor: .gyro, timestamp: 1, value: Vector3(.nan, 0, 0))) }
        #expect(throws: RecordingError.self) { try w.line(RawSample(sensor: .accelerometer, timestamp: 1, value: Vector3(0, 0, 0))) }
        #expect(try RawRecordingWriter(encoding: .jsonl).line(RawSample(sensor: .magnetometer, timestamp: 2.5, value: Vector3(1, -2, 0.5)))
                == "{\"timestamp\":2.5,\"sensor\":\"magnetometer\",\"x\":1.0,\"y\":-2.0,\"z\":0.5}\n")
    }

    @Test func longLinesAreErrorsNotMemory() {
        let long = String(repeating: "1", count: (1 << 20) + 10)
        #expect(errorText { _ = try readAll("timestamp,sensor,x,y,z\n" + long, format: .csv) }
                == "rec.csv:2: line longer than 1 MiB: binary data or not a recording")
    }

    @Test func linesAcrossBufferBoundaries() throws {
        // Enough rows that lines straddle the 64 KiB read buffer many times.
        var text = "timestamp,sensor,x,y,z\r\n"
        for i in 0..<20_000 { text += "\(Double(i) * 0.01),gyro,\(i),-\(i).5,1e-3\r\n" }
        let s = try readAll(text)
        #expect(s.count == 20_000)
        #expect(s.last?.sample.value == Vector3(19_999, -19_999.5, 0.001))
        #expect(s.last?.line == 20_001)
    }
}
