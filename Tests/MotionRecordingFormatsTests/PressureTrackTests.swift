import Foundation
import MotionRecordingFormats
import MotionSources
import Testing

/// Recorded pressure: every format that carries it, read as a track and replayed as a barometer.
@Suite struct PressureTrackTests {
    /// Writes `files` into a new temporary folder; returns its path.
    func folder(_ files: [String: String]) throws -> String {
        let dir = NSTemporaryDirectory() + "cm-pressure-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (name, text) in files {
            try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        }
        return dir
    }

    @Test func rawCSVPressureRowsAreReadAndSkippedByTheMotionReader() throws {
        let csv = """
            timestamp,sensor,x,y,z
            1.00,accelerometer,0,0,-1
            1.00,pressure,101.300,0,0
            1.02,accelerometer,0,0,-1
            1.04,pressure,101.290,0,0
            1.04,pressure,101.290,0,0
            1.06,gyro,0.1,0,0

            """
        let dir = try folder(["rec.csv": csv])
        let track = try #require(try PressureTrack.read(path: dir + "/rec.csv"))
        #expect(track.timestamps == [1.00, 1.04] && track.pressures == [101.300, 101.290])
        #expect(abs((track.pressure(at: 1.02) ?? 0) - 101.295) < 1e-9)
        #expect(track.pressure(at: 0) == 101.3 && track.pressure(at: 9) == 101.29)
        let samples = try readAll(csv)
        #expect(samples.map(\.sample.sensor) == [.accelerometer, .accelerometer, .gyro])
    }

    @Test func sensorLoggerBarometerIsInHectopascals() throws {
        let dir = try folder([
            "Metadata.csv": "version,device name,recording time,platform,appVersion,standardisation\n2,iPhone,2024-01-01,ios,1.30,false\n",
            "Accelerometer.csv": "time,seconds_elapsed,z,y,x\n1700000000000000000,0,-9.8,0,0\n",
            "Barometer.csv": "time,seconds_elapsed,relativeAltitude,pressure\n1700000000000000000,0,0,1013.25\n1700000000500000000,0.5,0.1,1013.10\n",
        ])
        let track = try #require(try PressureTrack.read(path: dir))
        #expect(track.count == 2)
        #expect(abs(track.timestamps[0] - 1_700_000_000) < 1e-6 && abs(track.timestamps[1] - 1_700_000_000.5) < 1e-6)
        #expect(abs(track.pressures[0] - 101.325) < 1e-9 && abs(track.pressures[1] - 101.310) < 1e-9)
    }

    @Test func sensorLogAltimeterColumnsSkipRepeats() throws {
        let csv = """
            loggingTime(txt),accelerometerTimestamp_sinceReboot(s),accelerometerAccelerationX(G),altimeterTimestamp_sinceReboot(s),altimeterReset(bool),altimeterRelativeAltitude(m),altimeterPressure(kPa)
            2024-01-01 10:00:00.000,100.00,0.0,,,,
            2024-01-01 10:00:00.100,100.10,0.0,100.05,0,0,100.512
            2024-01-01 10:00:00.200,100.20,0.0,100.05,0,0,100.512
            2024-01-01 10:00:00.300,100.30,0.0,101.05,0,-0.1,100.513

            """
        let dir = try folder(["log.csv": csv])
        let track = try #require(try PressureTrack.read(path: dir + "/log.csv"))
        #expect(track.timestamps == [100.05, 101.05] && track.pressures == [100.512, 100.513])
    }

    @Test func phyphoxPressureWithDecimalComma() throws {
        let dir = try folder(["Pressure.csv": "\"Time (s)\";\"Pressure (hPa)\"\n0,0;1001,5\n0,5;1001,4\n"])
        let track = try #require(try PressureTrack.read(path: dir))
        #expect(track.timestamps == [0, 0.5])
        #expect(abs(track.pressures[0] - 100.15) < 1e-9 && abs(track.pressures[1] - 100.14) < 1e-9)
    }

    @Test func aRecordingWithoutPressureHasNoTrack() throws {
        let dir = try folder(["rec.csv": "timestamp,sensor,x,y,z\n1,accelerometer,0,0,-1\n"])
        #expect(try PressureTrack.read(path: dir + "/rec.csv") == nil)
        #expect(try RecordedBarometerSource(path: dir + "/rec.csv") == nil)
    }

    @Test func badPressureRowsAreErrorsWithTheirLine() throws {
        let nan = try folder(["rec.csv": "timestamp,sensor,x,y,z\n1,pressure,101,0,0\n2,pressure,nan,0,0\n"])
        #expect(errorText { _ = try PressureTrack.read(path: nan + "/rec.csv") }?.contains("rec.csv:3:") == true)
        let backwards = try folder(["rec.csv": "timestamp,sensor,x,y,z\n2,pressure,101,0,0\n1,pressure,101,0,0\n"])
        #expect(errorText { _ = try PressureTrack.read(path: backwards + "/rec.csv") }?.contains("backwards") == true)
        let negative = try folder(["rec.csv": "timestamp,sensor,x,y,z\n1,pressure,-3,0,0\n"])
        #expect(errorText { _ = try PressureTrack.read(path: negative + "/rec.csv") }?.contains("positive") == true)
        #expect(errorText { _ = try PressureTrack.read(path: "/nonexistent/rec.csv") } != nil)
    }

    @Test func theReplayedBarometerInterpolatesAndEnds() throws {
        let dir = try folder(["rec.csv": "timestamp,sensor,x,y,z\n10,pressure,101.0,0,0\n20,pressure,100.9,0,0\n"])
        let barometer = try #require(try RecordedBarometerSource(path: dir + "/rec.csv"))
        #expect(barometer.virtualStartTime == 10)
        #expect(abs(try barometer.readPressure(at: 15) - 100.95) < 1e-9)
        #expect(throws: SourceError.self) { _ = try barometer.readPressure(at: 22) }
    }
}
