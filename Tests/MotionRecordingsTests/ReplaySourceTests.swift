import Foundation
import MotionFusion
@testable import MotionRecordings
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
        #expect(Set(source.info.sensors.keys) == Set(SensorKind.allCases))
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
}
