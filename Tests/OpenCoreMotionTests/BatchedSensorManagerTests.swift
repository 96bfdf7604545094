import Foundation
import MotionFusion
import MotionSources
import Testing
@testable import OpenCoreMotion

@Suite struct BatchedSensorManagerTests {
    @Test func accelerometerBatchesSpanOneSecondAtTheDataFrequency() async throws {
        let device = SimulatedDevice(scenario: .still, seed: 3, clock: .virtual(startTime: 100))
        let manager = CMBatchedSensorManager(source: device)
        #expect(manager.accelerometerDataFrequency == 800)
        var batches: [[CMAccelerometerData]] = []
        for try await batch in manager.accelerometerUpdates() {
            batches.append(batch)
            if batches.count == 2 { break }
        }
        for batch in batches {
            #expect((795...801).contains(batch.count), "about one second at 800 Hz, got \(batch.count)")
            let steps = zip(batch, batch.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(steps.allSatisfy { abs($0 - 1.0 / 800) < 1e-6 }, "consecutive samples 1/800 s apart")
            #expect(batch.allSatisfy { abs($0.acceleration.z + 1) < 0.1 }, "lying still, face up")
        }
        #expect(batches[1][0].timestamp > batches[0].last!.timestamp, "batches follow each other in time")
        #expect(abs(batches[1][0].timestamp - batches[0].last!.timestamp - 1.0 / 800) < 1e-6, "no sample lost between batches")
    }

    @Test func deviceMotionBatchesThroughTheHandler() async throws {
        let device = SimulatedDevice(scenario: .still, seed: 4, clock: .virtual(startTime: 100))
        let manager = CMBatchedSensorManager(source: device)
        #expect(manager.deviceMotionDataFrequency == 200)
        let got = Recorder<[CMDeviceMotion]>()
        manager.startDeviceMotionUpdates { batch, _ in
            if let batch { got.append(batch) }
        }
        #expect(manager.isDeviceMotionActive)
        #expect(await got.until { got.count >= 1 })
        manager.stopDeviceMotionUpdates()
        #expect(!manager.isDeviceMotionActive)
        let first = try #require(got.all.first)
        #expect((195...201).contains(first.count), "about one second at 200 Hz, got \(first.count)")
        #expect(first.allSatisfy { $0.gravity.z < -0.9 }, "lying face up: gravity along −z")
        #expect(manager.deviceMotionBatch?.count == got.all.last?.count)
    }

    @Test func withoutTheSensorsUpdatesFailWithNotAvailable() async throws {
        let accelerometerOnly = ManualSource(sensors: [.accelerometer])
        let manager = CMBatchedSensorManager(source: accelerometerOnly)
        #expect(manager.deviceMotionDataFrequency == 0)
        do {
            for try await _ in manager.deviceMotionUpdates() {}
            Issue.record("a source without a gyroscope cannot give device motion")
        } catch let error as NSError {
            #expect(error.domain == CMErrorDomain)
            #expect(error.code == Int(CMErrorNotAvailable.rawValue))
        }
    }

    @Test func theSourceMayHoldSamplesForOneBatch() async {
        let source = ObservedSource(sensors: [.accelerometer], maximumRate: 400)
        let manager = CMBatchedSensorManager(source: source)
        #expect(manager.accelerometerDataFrequency == 400, "the source's highest rate when below 800 Hz")
        manager.startAccelerometerUpdates()
        #expect(await source.until { source.demand.rates[.accelerometer] != nil })
        #expect(source.demand.rates[.accelerometer] == 400)
        #expect(source.demand.maximumLatency == CMBatchedSensorManager.batchDuration)
        for k in 0..<401 { source.emit(accel(10 + Double(k) / 400)) }
        #expect(await eventually { manager.accelerometerBatch != nil })
        #expect(manager.accelerometerBatch?.count == 400)
        manager.stopAccelerometerUpdates()
        #expect(await source.until { source.demand.rates.isEmpty })
    }

    @Test func headphoneManagersCompileAndReportUnavailable() async {
        let motion = CMHeadphoneMotionManager()
        #expect(!motion.isDeviceMotionAvailable)
        #expect(CMHeadphoneMotionManager.authorizationStatus() == .restricted)
        let code: Int? = await withCheckedContinuation { continuation in
            motion.startDeviceMotionUpdates(to: OperationQueue()) { data, error in
                continuation.resume(returning: data == nil ? (error as NSError?)?.code : nil)
            }
        }
        #expect(code == Int(CMErrorNotAvailable.rawValue))
        #expect(motion.deviceMotion == nil)
        let activity = CMHeadphoneActivityManager()
        #expect(!activity.isActivityAvailable && !activity.isStatusAvailable)
        let status: CMHeadphoneActivityManager.Status = await withCheckedContinuation { continuation in
            activity.startStatusUpdates(to: OperationQueue()) { status, _ in continuation.resume(returning: status) }
        }
        #expect(status == .disconnected)
    }
}
