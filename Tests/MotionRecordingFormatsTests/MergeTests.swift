import MotionFusion
@testable import MotionRecordingFormats
import MotionSources
import Testing

/// A part made of samples in memory, optionally failing after them.
struct MemoryStream: SampleStream {
    var samples: [RecordedSample]
    var failure: RecordingError?
    var index = 0

    init(_ samples: [RecordedSample], failure: RecordingError? = nil) {
        self.samples = samples
        self.failure = failure
    }

    mutating func next() throws(RecordingError) -> RecordedSample? {
        if index < samples.count {
            index += 1
            return samples[index - 1]
        }
        if let failure { throw failure }
        return nil
    }
}

/// A simulated-looking recording: gyro and accelerometer at 100 Hz, magnetometer at 50 Hz.
func syntheticSamples(seconds: Double, path: String = "rec.csv", start: Double = 100) -> [RecordedSample] {
    var out: [RecordedSample] = []
    let n = Int(seconds * 100)
    var line = 2
    for i in 0..<n {
        let t = start + Double(i) * 0.01
        let phase = Double(i) * 0.05
        func add(_ s: SensorKind, _ v: Vector3) {
            out.append(RecordedSample(sample: RawSample(sensor: s, timestamp: t, value: v), path: path, line: line))
            line += 1
        }
        add(.gyro, Vector3(0.3 * sinApprox(phase), -0.2, 0.5 * sinApprox(phase * 0.7)))
        add(.accelerometer, Vector3(0.1 * sinApprox(phase), 0.05, -1 + 0.02 * sinApprox(phase * 1.3)))
        if i % 2 == 0 { add(.magnetometer, Vector3(20 + sinApprox(phase), 3, -40)) }
    }
    return out
}

/// sin without libc, accurate enough for test signals.
func sinApprox(_ x: Double) -> Double {
    var a = x.truncatingRemainder(dividingBy: 2 * Double.pi)
    if a > Double.pi { a -= 2 * Double.pi }
    if a < -Double.pi { a += 2 * Double.pi }
    let a2 = a * a
    return a * (1 - a2 / 6 * (1 - a2 / 20 * (1 - a2 / 42 * (1 - a2 / 72 * (1 - a2 / 110)))))
}

/// The same samples as `coremotion stream` writes them: blocks of `block` seconds per sensor.
func inBlocks(_ samples: [RecordedSample], block: Double) -> [RecordedSample] {
    guard let t0 = samples.first?.sample.timestamp else { return [] }
    var groups: [[RecordedSample]] = []
    var keys: [String] = []
    for s in samples {
        let k = "\(Int((s.sample.timestamp - t0) / block + 1e-9))-\(s.sample.sensor.rawValue)"
        if let i = keys.firstIndex(of: k) { groups[i].append(s) } else { keys.append(k); groups.append([s]) }
    }
    var line = 2
    return groups.joined().map { s in
        var s = s
        s.line = line
        line += 1
        return s
    }
}

func drain(_ merge: inout SampleMerge) throws(RecordingError) -> [RecordedSample] {
    var out: [RecordedSample] = []
    while let s = try merge.next() { out.append(s) }
    return out
}

@Suite struct MergeTests {
    @Test func perSensorBlocksComeOutInTimeOrderLikeTheInterleavedFile() throws {
        let interleaved = syntheticSamples(seconds: 3)
        let blocks = inBlocks(interleaved, block: 0.1)
        #expect(blocks.map(\.sample) != interleaved.map(\.sample), "the blocks are out of order")
        var a = SampleMerge([MemoryStream(interleaved)])
        var b = SampleMerge([MemoryStream(blocks)])
        let x = try drain(&a).map(\.sample), y = try drain(&b).map(\.sample)
        #expect(x.count == interleaved.count)
        #expect(x == y)
        #expect(zip(x, x.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
    }

    @Test func severalPerSensorFilesMergeAndTiesFollowTheSensorOrder() throws {
        let all = syntheticSamples(seconds: 1)
        let parts = SensorKind.motion.map { k in MemoryStream(all.filter { $0.sample.sensor == k }) }
        var merge = SampleMerge(parts)
        let out = try drain(&merge)
        #expect(out.count == all.count)
        for (p, n) in zip(out, out.dropFirst()) {
            #expect(p.sample.timestamp <= n.sample.timestamp)
            if p.sample.timestamp == n.sample.timestamp {
                #expect(SampleMerge.rank(p.sample.sensor) <= SampleMerge.rank(n.sample.sensor))
            }
        }
        #expect(out.last?.sample.sensor == .gyro, "the last instant has no magnetometer sample (50 Hz)")
        #expect(merge.count(of: .magnetometer) == all.filter { $0.sample.sensor == .magnetometer }.count)
    }

    @Test func aSampleOlderThanTheWindowIsAnErrorNamingItsLineAfterTheSamplesBeforeIt() {
        func s(_ t: Double, _ line: Int) -> RecordedSample {
            RecordedSample(sample: RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, -1)), path: "r.csv", line: line)
        }
        var merge = SampleMerge([MemoryStream([s(10, 2), s(10.5, 3), s(12, 4), s(10.9, 5), s(13, 6)])], reorderWindow: 1)
        var got: [Double] = []
        do {
            while let x = try merge.next() { got.append(x.sample.timestamp) }
            Issue.record("expected an error")
        } catch {
            #expect(error.path == "r.csv" && error.line == 5)
            #expect(error.description == "r.csv:5: timestamp 10.9 is 1.1 s before 12 (line 4), more than the merge's reorder window of 1 s")
        }
        #expect(got == [10, 10.5, 12])
    }

    @Test func aSampleWithinTheWindowIsReordered() throws {
        func s(_ t: Double) -> RecordedSample {
            RecordedSample(sample: RawSample(sensor: .gyro, timestamp: t, value: .zero), path: "r.csv", line: 1)
        }
        var merge = SampleMerge([MemoryStream([s(1), s(1.5), s(1.2), s(2), s(1.9)])], reorderWindow: 0.5)
        #expect(try drain(&merge).map(\.sample.timestamp) == [1, 1.2, 1.5, 1.9, 2])
    }

    @Test func aFailingPartDeliversEverySampleReadBeforeItsError() {
        let good = syntheticSamples(seconds: 0.5)
        let bad = RecordingError("'abc' is not a number", path: "rec.csv", line: 999)
        for _ in 0..<3 {
            var merge = SampleMerge([MemoryStream(good, failure: bad)])
            var count = 0
            do {
                while try merge.next() != nil { count += 1 }
                Issue.record("expected an error")
            } catch {
                #expect(error == bad)
            }
            #expect(count == good.count)
            #expect((try? merge.next()) == nil, "nothing after the error")
        }
    }

    @Test func memoryIsBoundedByTheWindowNotTheLength() throws {
        var merge = SampleMerge([MemoryStream(inBlocks(syntheticSamples(seconds: 60), block: 0.1))], reorderWindow: 1)
        var peak = 0
        while try merge.next() != nil { peak = max(peak, merge.pendingCount) }
        // 1.1 s of 250 samples/s at most, whatever the 60 s length.
        #expect(peak > 0 && peak <= 300)
    }
}
