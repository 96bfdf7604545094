import Foundation
import MotionFusion
import MotionSources
import MotionTestSupport
@testable import OpenCoreMotion
import Testing

@Suite struct FailureTests {
    @Test func aFailingSourceReachesTheHandlerOnceAndStopsUpdates() async {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        let samples = Recorder<Double>()
        let errors = Recorder<NSError>()
        let q = serialQueue()
        manager.startAccelerometerUpdates(to: q) { data, error in
            if let data { samples.append(data.timestamp) }
            if let error { errors.append(error as NSError) }
        }
        source.emit(accel(1))
        source.emit(accel(1.01))
        source.fail(SourceError(.deviceRemoved, "device unplugged", path: "/dev/iio:device0"))
        source.emit(accel(1.02))
        #expect(await drained(q))
        #expect(samples.all == [1, 1.01])
        #expect(errors.count == 1)
        let e = errors.all.first
        #expect(e?.domain == CMErrorDomain)
        #expect(e?.code == Int(CMErrorNotAvailable.rawValue))
        let message = e?.localizedDescription ?? ""
        #expect(message.contains("unplugged"))
        #expect(!manager.isAccelerometerActive)
        #expect(manager.accelerometerData?.timestamp == 1.01, "data already accepted stays")
    }

    @Test func anInterruptionReachesEveryConsumerOnceAndSamplesResume() async {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        let other = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.001
        other.deviceMotionUpdateInterval = 0.01
        let samples = Recorder<Double>()
        let errors = Recorder<NSError>()
        let motionErrors = Recorder<NSError>()
        let q = serialQueue()
        manager.startAccelerometerUpdates(to: q) { data, error in
            if let data { samples.append(data.timestamp) }
            if let error { errors.append(error as NSError) }
        }
        other.startDeviceMotionUpdates(to: q) { _, error in
            if let error { motionErrors.append(error as NSError) }
        }
        source.emit(accel(1))
        source.interrupt(SourceError(.unavailable, "no data from the phone for 2 s"))
        source.interrupt(SourceError(.unavailable, "still nothing"))
        source.emit(accel(1.01))
        source.interrupt(SourceError(.unavailable, "silent again"))
        source.emit(accel(1.02))
        #expect(await drained(q))
        #expect(samples.all == [1, 1.01, 1.02], "delivery resumes after each interruption")
        #expect(errors.all.map(\.localizedDescription).map { $0.contains("phone") || $0.contains("silent") } == [true, true],
                "one error per interruption, none for a repeat before a sample")
        #expect(errors.all.allSatisfy { $0.domain == CMErrorDomain && $0.code == Int(CMErrorNotAvailable.rawValue) })
        #expect(motionErrors.count == 2, "device motion consumers hear it too")
        #expect(manager.isAccelerometerActive && other.isDeviceMotionActive, "consumers stay registered")
        #expect(source.demand.rates[.accelerometer] != nil, "the source keeps running")
    }

    @Test func anAsyncSequenceSkipsAnInterruption() async throws {
        let source = ObservedSource()
        let manager = CMMotionManager(source: source)
        let reader = Task {
            var got: [Double] = []
            for try await sample in manager.accelerometerUpdates(interval: 0.01) {
                got.append(sample.timestamp)
                if got.count == 2 { break }
            }
            return got
        }
        #expect(await source.until { source.demand.rates[.accelerometer] != nil })
        source.emit(accel(1))
        source.interrupt(SourceError(.unavailable, "no data for 2 s"))
        source.emit(accel(1.01))
        #expect(try await reader.value == [1, 1.01])
    }

    @Test func nonFiniteAndBackwardSamplesAreDropped() async {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.001
        let seen = Recorder<Double>()
        let q = serialQueue()
        manager.startAccelerometerUpdates(to: q) { d, _ in seen.append(d!.timestamp) }
        source.emit(accel(1))
        source.emit(RawSample(sensor: .accelerometer, timestamp: 1.01, value: Vector3(.nan, 0, -1)))
        source.emit(RawSample(sensor: .accelerometer, timestamp: 1.02, value: Vector3(0, .infinity, -1)))
        source.emit(accel(0.5))
        source.emit(accel(1.03))
        #expect(await drained(q))
        #expect(seen.all == [1, 1.03])
    }
}

@Suite struct AsyncSequenceTests {
    @Test func leavingTheLoopStopsTheSensor() async throws {
        let source = ObservedSource()
        // Shared with the reading task: like Apple's, the manager is not `Sendable`, but it is callable
        // from any thread (its state is behind a lock).
        nonisolated(unsafe) let manager = CMMotionManager(source: source)
        let reader = Task {
            var got: [Double] = []
            for try await sample in manager.gyroUpdates(interval: 0.01) {
                got.append(sample.timestamp)
                if got.count == 3 { break }
            }
            return got
        }
        #expect(await source.until { source.demand.rates[.gyro] == 100 })
        for i in 0..<3 { source.emit(gyro(Double(i) * 0.01)) }
        let got = try await reader.value
        #expect(got == [0, 0.01, 0.02])
        #expect(await source.until { source.demand.isEmpty })
        #expect(!manager.isGyroActive, "a sequence is its own consumer")
    }

    @Test func cancellingTheTaskStopsTheSensorUnlessAnotherConsumerNeedsIt() async throws {
        let source = ObservedSource()
        // Shared with the reading task; see leavingTheLoopStopsTheSensor.
        nonisolated(unsafe) let manager = CMMotionManager(source: source)
        manager.gyroUpdateInterval = 0.1
        manager.startGyroUpdates()
        let reader = Task {
            var n = 0
            for try await _ in manager.gyroUpdates(interval: 0.01) { n += 1 }
            return n
        }
        #expect(await source.until { source.demand.rates[.gyro] == 100 })
        source.emit(gyro(1))
        reader.cancel()
        _ = try? await reader.value
        #expect(await source.until { source.demand.rates[.gyro] == 10 }, "the pull consumer still needs 10 Hz")
        manager.stopGyroUpdates()
        #expect(await source.until { source.demand.isEmpty })
    }

    @Test func anUnavailableSensorThrowsNotAvailable() async {
        let manager = CMMotionManager(source: ManualSource(sensors: [.accelerometer]))
        do {
            for try await _ in manager.magnetometerUpdates() {}
            Issue.record("expected an error")
        } catch {
            #expect((error as NSError).code == Int(CMErrorNotAvailable.rawValue))
        }
    }

    @Test func aSourceFailureEndsTheSequenceWithTheError() async {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        let stream = manager.accelerometerUpdates()
        source.emit(accel(1))
        source.fail(SourceError(.malformedInput, "bad row", path: "x.csv", line: 7))
        var count = 0
        do {
            for try await _ in stream { count += 1 }
            Issue.record("expected an error")
        } catch {
            let e = error as NSError
            #expect(e.domain == CMErrorDomain)
            #expect(e.userInfo[CMErrorLineNumberKey] as? Int == 7)
        }
        #expect(count == 1)
    }
}

@Suite struct ConcurrencyTests {
    /// Start, stop, re-rate and read from many threads while the source streams: run under
    /// `swift test --sanitize=thread` this must report no race.
    @Test func membersAreCallableFromAnyThread() async throws {
        let source = ObservedSource()
        // The managers are documented as callable from any thread (their state is behind a lock), which
        // is what this test checks; like Apple's, the class is not `Sendable`.
        nonisolated(unsafe) let managers = (0..<3).map { _ in CMMotionManager(source: source) }
        let emitted = Locked(false)
        let emitter = Thread {
            for i in 0..<3000 {
                source.emit(accel(Double(i) * 0.001))
                source.emit(gyro(Double(i) * 0.001))
            }
            emitted.withLock { $0 = true }
            source.changes.signal()
        }
        emitter.start()
        // The managers' threads block (each waits for its queue): each on a thread of its own
        // (``offThePool(_:)``), not on the dispatch pool's, which `concurrentPerform` would use and
        // which the queues' operations need.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for k in managers.indices { group.addTask { try await offThePool {
            let m = managers[k]
            do {
                do {
                    let q = OperationQueue()
                    for j in 0..<100 {
                        m.accelerometerUpdateInterval = 0.001 * Double(1 + (j + k) % 5)
                        if j % 2 == 0 {
                            m.startAccelerometerUpdates(to: q) { _, _ in }
                            m.startGyroUpdates()
                            m.startDeviceMotionUpdates()
                        } else {
                            _ = m.accelerometerData
                            _ = m.deviceMotion?.attitude.roll
                            m.stopAccelerometerUpdates()
                            m.stopGyroUpdates()
                            m.stopDeviceMotionUpdates()
                        }
                    }
                    m.stopAccelerometerUpdates()
                    m.stopGyroUpdates()
                    m.stopDeviceMotionUpdates()
                    q.waitUntilAllOperationsAreFinished()
                }
            }
            } } }
            try await group.waitForAll()
        }
        #expect(await source.until { emitted.withLock { $0 } && source.demand.isEmpty })
    }
}
