import MotionFusion
@testable import MotionRecordingFormats
import MotionSources
import Testing

@Suite struct RecordingFusionTests {
    func fuse(_ samples: [RecordedSample], _ options: RecordingFusion.Options) throws(RecordingError) -> [FusedMotion] {
        var merge = SampleMerge([MemoryStream(samples)])
        var rows: [FusedMotion] = []
        try RecordingFusion.run(&merge, name: "rec.csv", options: options) { (m: FusedMotion) throws(RecordingError) in rows.append(m) }
        return rows
    }

    @Test(arguments: [AttitudeReferenceFrame.magneticNorth, .arbitrary, .arbitraryCorrected, .trueNorth(declination: 0.1)])
    func aRecordingInPerSensorBlocksFusesExactlyLikeTheInterleavedOne(frame: AttitudeReferenceFrame) throws {
        let interleaved = syntheticSamples(seconds: 5)
        let a = try fuse(interleaved, .init(frame: frame))
        let b = try fuse(inBlocks(interleaved, block: 0.1), .init(frame: frame))
        #expect(a.count == 500, "one row per gyroscope sample")
        #expect(a == b)
    }

    @Test func noRowBeforeTheFirstAccelerometerAndGyroscopeSamples() throws {
        // Gyro starts 0.2 s before the accelerometer: its first 20 samples give no row.
        var samples = syntheticSamples(seconds: 2)
        samples.removeAll { $0.sample.sensor == .accelerometer && $0.sample.timestamp < 100.195 }
        let rows = try fuse(samples, .init(frame: .arbitrary))
        #expect(rows.count == 180)
        #expect(abs(rows[0].timestamp - 100.2) < 1e-9)
        #expect(rows.allSatisfy { ($0.userAcceleration + $0.gravity - Vector3(0, 0, -1)).length < 0.2 })
    }

    @Test func offlineWritesExactlyTheRowsOfTheCausalMode() throws {
        var samples = inBlocks(syntheticSamples(seconds: 4), block: 0.1)
        samples.removeAll { $0.sample.sensor == .accelerometer && $0.sample.timestamp < 100.05 }
        for frame in [AttitudeReferenceFrame.magneticNorth, .arbitrary] {
            let causal = try fuse(samples, .init(frame: frame))
            let offline = try fuse(samples, .init(frame: frame, offline: true))
            #expect(causal.map(\.timestamp) == offline.map(\.timestamp))
            #expect(offline.allSatisfy { $0.attitude.isFinite && abs($0.attitude.length - 1) < 1e-9 })
        }
    }

    @Test func missingSensorsAreClearErrorsBeforeAnyRow() {
        let all = syntheticSamples(seconds: 1)
        let accelerometerOnly = all.filter { $0.sample.sensor == .accelerometer }
        #expect(throws: RecordingError("the recording has no gyroscope samples: device motion needs an accelerometer and a gyroscope", path: "rec.csv")) {
            _ = try fuse(accelerometerOnly, .init(frame: .arbitrary))
        }
        let noMagnetometer = all.filter { $0.sample.sensor != .magnetometer }
        #expect(throws: RecordingError("the recording has no magnetometer samples, which the reference frame xMagneticNorthZVertical needs: use --no-magnetometer or --reference-frame xArbitraryZVertical", path: "rec.csv")) {
            _ = try fuse(noMagnetometer, .init(frame: .magneticNorth))
        }
        #expect(throws: RecordingError("the recording has no accelerometer or gyroscope samples: device motion needs an accelerometer and a gyroscope", path: "rec.csv")) {
            _ = try fuse([], .init(frame: .arbitrary))
        }
    }

    @Test func aBadLineAfterGoodRowsKeepsThoseRows() {
        let good = syntheticSamples(seconds: 1)
        var merge = SampleMerge([MemoryStream(good, failure: RecordingError("bad", path: "rec.csv", line: 300))])
        var rows = 0
        #expect(throws: RecordingError("bad", path: "rec.csv", line: 300)) {
            try RecordingFusion.run(&merge, name: "rec.csv", options: .init(frame: .magneticNorth)) { (_: FusedMotion) throws(RecordingError) in rows += 1 }
        }
        #expect(rows == 100)
    }
}
