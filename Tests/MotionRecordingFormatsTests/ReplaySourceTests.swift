import Foundation
import MotionFusion
@testable import MotionRecordingFormats
import MotionSources
import Testing

@Suite struct ReplaySourceTests {
    /// A CSV in the project's raw layout from samples, in the given order.
    func csv(_ samples: [RecordedSample]) -> String {
        "timestamp,sensor,x,y,z\n" + samples.map {
            "\($0.sample.timestamp),\($0.sample.sensor.rawValue),\($0.sample.value.x),\($0.sample.value.y),\($0.sample.value.z)"
        }.joined(separator: "\n") + "\n"
    }

    func temp(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "replay-\(UUID().uuidString)-\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Plays `source` on its virtual clock to the end; returns the samples and the final event.
    func play(_ source: ReplaySource) throws -> ([RawSample], SourceEvent?) {
        final class Box: @unchecked Sendable {
            let lock = NSLock()
            var samples: [RawSample] = []
            var end: SourceEvent?
            let done = DispatchSemaphore(value: 0)
        }
        let box = Box()
        try source.apply(SensorDemand(rates: [.accelerometer: 100, .gyro: 100, .magnetometer: 100])) { event in
            box.lock.lock()
            defer { box.lock.unlock() }
            if case .sample(let s) = event { box.samples.append(s) } else if box.end == nil { box.end = event; box.done.signal() }
        }
        #expect(box.done.wait(timeout: .now() + 10) == .success)
        try source.apply(.none) { _ in }
        box.lock.lock()
        defer { box.lock.unlock() }
        return (box.samples, box.end)
    }

    @Test func aZippedRecordingInPerSensorBlocksPlaysInTimeOrder() throws {
        let samples = syntheticSamples(seconds: 2)
        let zip = ZipFixture.archive([("rec.csv", csv(inBlocks(samples, block: 0.1)))])
        let source = try ReplaySource(path: try temp("export.zip", zip), clock: .virtual)
        #expect(Set(source.info.sensors.keys) == Set(SensorKind.motion))
        #expect(abs(source.info.sensors[.gyro]!.maximumRate - 100) < 1e-6)
        let (played, end) = try play(source)
        var merge = SampleMerge([MemoryStream(samples)])
        #expect(played == (try drain(&merge)).map(\.sample))
        #expect(end == .finished)
    }

    @Test func aBadLineDeliversEveryGoodSampleThenOneFailureNamingIt() throws {
        let good = syntheticSamples(seconds: 0.5)
        let text = csv(good) + "101,gyro,0,zero,0\n100.6,gyro,0,0,0\n"
        let path = try temp("bad.csv", Array(text.utf8))
        for _ in 0..<3 {
            let (played, end) = try play(try ReplaySource(path: path, clock: .virtual))
            #expect(played.count == good.count)
            guard case .failed(let error) = end else { Issue.record("expected a failure, got \(String(describing: end))"); continue }
            #expect(error.path == path && error.line == good.count + 2 && error.kind == .malformedInput)
        }
    }

    /// A timestamp of 1e308 (a damaged row): `coremotion fuse` rejects it at its line, and so must a
    /// real-time replay, instead of waiting for it forever. Good samples before it are delivered.
    @Test func aTimestampTooLargeIsRejectedAtItsLineInRealTimeToo() throws {
        let good = syntheticSamples(seconds: 0.2)
        let text = csv(good) + "1e308,gyro,0,0,0\n100.3,gyro,0,0,0\n"
        let path = try temp("huge.csv", Array(text.utf8))
        var merge = SampleMerge(try RecordingInput.open(path: path).streams)
        var fuseSees: RecordingError?
        do throws(RecordingError) { _ = try drain(&merge) } catch { fuseSees = error }
        #expect(fuseSees?.line == good.count + 2)
        for clock in [ReplaySource.Clock.realTime, .virtual] {
            let started = MonotonicClock.now()
            let (played, end) = try play(try ReplaySource(path: path, clock: clock))
            #expect(played.count == good.count, "\(clock)")
            guard case .failed(let error) = end else { Issue.record("\(clock): expected a failure, got \(String(describing: end))"); continue }
            #expect(error.line == fuseSees?.line && error.message == fuseSees?.message, "\(clock): \(error)")
            #expect(MonotonicClock.now() - started < 5, "\(clock)")
        }
    }

    /// A recording paused for two hours plays on in real time: the gap is compressed to one sample
    /// period, with one note naming the line, and the samples after it keep their spacing.
    @Test func aLongGapIsCompressedToOneSamplePeriodWithANote() throws {
        let before = syntheticSamples(seconds: 0.2, start: 100)
        let after = syntheticSamples(seconds: 0.2, start: 7300)
        let path = try temp("gap.csv", Array(csv(before + after).utf8))
        let notes = NotesBox()
        let source = try ReplaySource(path: path, clock: .realTime, notice: { notes.add($0) })
        let started = MonotonicClock.now()
        let (played, end) = try play(source)
        #expect(end == .finished)
        #expect(MonotonicClock.now() - started < 5)
        #expect(played.count == before.count + after.count)
        let times = played.map(\.timestamp)
        let split = before.count
        // One sample period (100 Hz) between the last sample before the gap and the first after it.
        #expect(abs(times[split] - times[split - 1] - 0.01) < 1e-6, "\(times[split] - times[split - 1])")
        // Spacing kept on both sides.
        #expect(abs((times[split - 1] - times[0]) - 0.19) < 1e-6)
        #expect(abs((times.last! - times[split]) - 0.19) < 1e-6)
        #expect(notes.lines.count == 1)
        #expect(notes.lines.first?.hasPrefix("\(path):") == true && notes.lines.first?.contains("a gap of 7199.81 s in the recording plays as 0.01 s") == true,
                "\(notes.lines)")
    }
}

/// Notes collected from the source's thread.
final class NotesBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func add(_ line: String) { lock.lock(); stored.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return stored }
}
