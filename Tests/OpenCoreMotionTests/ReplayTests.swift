import Foundation
import MotionRecordingFormats
import MotionSources
@testable import OpenCoreMotion
import Testing

@Suite struct ReplayTests {
    func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "replay-\(UUID().uuidString).csv"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aMultiSensorRecordingPlaysBackEveryRowInOrder() async throws {
        let path = try write("""
            timestamp,sensor,x,y,z
            10.00,accelerometer,0,0,-1
            10.00,gyro,0.1,0,0
            10.01,accelerometer,0,0.5,-1
            10.01,gyro,0.2,0,0
            10.02,accelerometer,0,1,-1
            """)
        let source = try ReplaySource(path: path, clock: .virtual)
        #expect(Set(source.info.sensors.keys) == [.accelerometer, .gyro])
        #expect(abs(source.info.sensors[.accelerometer]!.maximumRate - 100) < 1e-6)
        let manager = CMMotionManager(source: source)
        let seen = Recorder<Double>()
        let q = serialQueue()
        manager.startAccelerometerUpdates(to: q) { d, _ in seen.append(d!.acceleration.y) }
        #expect(await seen.until { seen.count == 3 })
        #expect(await drained(q))
        #expect(seen.all == [0, 0.5, 1])
    }

    @Test func aOneSensorRecordingNamesItsSensorInAComment() throws {
        let path = try write("timestamp,x,y,z\n# sensor=gyro\n1,0.1,0.2,0.3\n1.01,0.1,0.2,0.3\n")
        let source = try ReplaySource(path: path, clock: .virtual)
        #expect(Array(source.info.sensors.keys) == [.gyro])
        let noName = try write("timestamp,x,y,z\n1,0.1,0.2,0.3\n")
        #expect(throws: SourceError.self) { try ReplaySource(path: noName) }
    }

    /// A bad row: the rows before it are delivered, then one error naming the line, then nothing.
    @Test(arguments: [
        ("10.02,accelerometer,0,abc,-1", "not a number"),
        ("10.02,accelerometer,0,nan,-1", "not a finite number"),
        ("10.02,accelerometer,0,1", "expected 5 columns"),
        // Back by more than the merge's 1 s reorder window (back by less is reordered, see below).
        ("8.5,accelerometer,0,1,-1", "reorder window"),
    ])
    func aMalformedRowStopsUpdatesWithOneErrorNamingTheLine(row: String, reason: String) async throws {
        let path = try write("""
            # recorded by a test
            timestamp,sensor,x,y,z
            10.00,accelerometer,0,0,-1
            10.01,accelerometer,0,0.5,-1
            \(row)
            10.03,accelerometer,0,2,-1
            """)
        let source = try ReplaySource(path: path, clock: .virtual)
        let manager = CMMotionManager(source: source)
        let samples = Recorder<Double>()
        let errors = Recorder<NSError>()
        let q = serialQueue()
        manager.startAccelerometerUpdates(to: q) { d, e in
            if let d { samples.append(d.timestamp) }
            if let e { errors.append(e as NSError) }
        }
        #expect(await errors.until { errors.count == 1 })
        #expect(await drained(q))
        #expect(samples.all == [10.00, 10.01])
        #expect(errors.count == 1)
        let e = try #require(errors.all.first)
        #expect(e.domain == CMErrorDomain)
        #expect(e.userInfo[CMErrorLineNumberKey] as? Int == 5)
        #expect(e.localizedDescription.contains(reason))
        #expect(e.localizedDescription.contains("\(path):5:"))
        #expect(!manager.isAccelerometerActive)
    }

    @Test func aMissingFileOrForeignHeaderIsRejectedAtOnce() throws {
        #expect(throws: SourceError.self) { try ReplaySource(path: "/nonexistent/recording.csv") }
        let foreign = try write("a,b,c\n1,2,3\n")
        do {
            _ = try ReplaySource(path: foreign)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .malformedInput)
            #expect(error.line == 1)
        }
    }

    @Test func realTimePlaybackKeepsTheRecordedSpacingFromNow() async throws {
        let path = try write("timestamp,sensor,x,y,z\n" + (0..<5).map { "\(500 + Double($0) * 0.02),gyro,0,0,0" }.joined(separator: "\n"))
        let source = try ReplaySource(path: path)
        let manager = CMMotionManager(source: source)
        let times = Recorder<Double>()
        let q = serialQueue()
        manager.gyroUpdateInterval = 0.02
        let before = ProcessInfo.processInfo.systemUptime
        manager.startGyroUpdates(to: q) { d, _ in times.append(d!.timestamp) }
        #expect(await times.until { times.count == 5 })
        let t = times.all
        #expect(t[0] >= before - 0.001 && t[0] < before + 1, "moved to start now")
        for (a, b) in zip(t, t.dropFirst()) { #expect(abs((b - a) - 0.02) < 1e-6) }
        #expect(ProcessInfo.processInfo.systemUptime - before >= 0.075, "paced, not instant")
    }
}
