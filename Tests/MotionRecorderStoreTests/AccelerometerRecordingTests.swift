import Foundation
import Testing
@testable import MotionRecorderStore

@Suite struct AccelerometerRecordingTests {
    @Test func theDurationCountsInSampleTimeFromTheFirstSample() throws {
        let store = try RecordingStore(location: .inMemory)
        let recording = try AccelerometerRecording(store: store, source: "test", duration: 3, wallClockOffset: 1_800_000_000)
        var accepted = 0
        for k in 0..<400 {
            let t = 1000 + Double(k) / 50
            if try recording.receive(timestamp: t, x: 0, y: 0, z: -1) { accepted += 1 } else { break }
        }
        #expect(accepted == 150, "3 s at 50 Hz")
        #expect(recording.isFinished)
        try recording.finish()
        let samples = try everything(store)
        #expect(samples.count == 150)
        #expect(samples.first?.reading.date == Date(timeIntervalSince1970: 1_800_001_000), "date = timestamp + offset")
        #expect(samples.last?.reading.timestamp == 1000 + 149.0 / 50)
        #expect(try store.sessions().map(\.source) == ["test"])
    }

    @Test func durationsAreClampedToTwelveHours() throws {
        #expect(AccelerometerRecording.clamp(13 * 3600) == 12 * 3600)
        #expect(AccelerometerRecording.clamp(.nan) == 0)
        #expect(AccelerometerRecording.clamp(-5) == 0)
        let store = try RecordingStore(location: .inMemory)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let recording = try AccelerometerRecording(store: store, source: "test", duration: .infinity, requestedAt: start)
        #expect(recording.duration == 12 * 3600)
        #expect(try store.sessions().first?.requestedEnd == start.addingTimeInterval(12 * 3600))
        let none = try AccelerometerRecording(store: store, source: "test", duration: 0)
        #expect(try none.receive(timestamp: 1, x: 0, y: 0, z: -1) == false, "nothing to record")
    }

    @Test func extendingMovesTheEndFromTheLatestSample() throws {
        let store = try RecordingStore(location: .inMemory)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let recording = try AccelerometerRecording(store: store, source: "test", duration: 1, requestedAt: start, wallClockOffset: 0)
        #expect(try recording.receive(timestamp: 10, x: 0, y: 0, z: -1))
        #expect(try recording.receive(timestamp: 10.5, x: 0, y: 0, z: -1))
        #expect(try recording.extend(by: 2, after: 10.5))
        #expect(recording.duration == 2.5)
        #expect(try recording.receive(timestamp: 12.4, x: 0, y: 0, z: -1))
        #expect(try recording.receive(timestamp: 12.5, x: 0, y: 0, z: -1) == false)
        #expect(try recording.extend(by: 5) == false, "over")
        try recording.finish()
        #expect(try store.sampleCount() == 3)
        #expect(try store.sessions().first?.requestedEnd == start.addingTimeInterval(2.5))
    }
}
