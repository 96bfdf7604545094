import Foundation
import MotionFusion
import MotionSources
import NIOConcurrencyHelpers
import OpenCoreMotion
import MotionTestSupport
import Testing

/// A source the test drives by hand: it sends whatever event the test asks for to the current sink.
final class ScriptedSource: SensorSource {
    let info = SourceInfo(identifier: "scripted", name: "Scripted source",
                          sensors: [.accelerometer: SensorCapability(minimumRate: 1, maximumRate: 100),
                                    .gyro: SensorCapability(minimumRate: 1, maximumRate: 100)])
    private let sink = NIOLockedValueBox<(@Sendable (SourceEvent) -> Void)?>(nil)

    func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        self.sink.withLockedValue { $0 = demand.isEmpty ? nil : sink }
        return demand.rates.mapValues { _ in 100 }
    }

    func send(_ event: SourceEvent) { sink.withLockedValue { $0 }?(event) }
    var running: Bool { sink.withLockedValue { $0 != nil } }

    func gyro(at t: Double) { send(.sample(RawSample(sensor: .gyro, timestamp: t, value: Vector3(0, 0, 0.5)))) }
}

/// `SourceEvent.interrupted` through `CMMotionManager`: the shared spec for non-fatal interruptions.
@Suite struct InterruptionThroughManagerTests {
    @Test func handlerGetsOneErrorStaysRegisteredAndResumes() async throws {
        let source = ScriptedSource()
        let manager = CMMotionManager(source: source)
        manager.gyroUpdateInterval = 0.01
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let events = NIOLockedValueBox<[String]>([])
        manager.startGyroUpdates(to: queue) { data, error in
            if let error = error as NSError? {
                events.withLockedValue { $0.append("error \(error.domain) \(error.code)") }
            } else if let data {
                events.withLockedValue { $0.append("data \(data.timestamp)") }
            }
        }
        #expect(source.running)
        source.gyro(at: 1)
        let lost = SourceError(.deviceRemoved, "no data for 5 s")
        source.send(.interrupted(lost))
        source.send(.interrupted(lost))  // a repeat before any sample: not passed on
        #expect(source.running, "an interruption keeps the source running")
        source.gyro(at: 2)
        source.send(.interrupted(SourceError(.io, "connection lost")))
        source.gyro(at: 3)
        // The wait on a thread of its own: the queue's deliveries need the pool this task runs on.
        try await offThePool { queue.waitUntilAllOperationsAreFinished() }
        let seen = events.withLockedValue { $0 }
        #expect(seen == ["data 1.0", "error \(CMErrorDomain) \(CMErrorNotAvailable.rawValue)", "data 2.0",
                         "error \(CMErrorDomain) \(CMErrorUnknown.rawValue)", "data 3.0"], "\(seen)")
        #expect(seen.filter { $0.hasPrefix("error") }.count == 2)
        #expect(seen.filter { $0.hasPrefix("data") } == ["data 1.0", "data 2.0", "data 3.0"])
        #expect(manager.isGyroActive)
        // `failed` stays fatal: one error, then nothing more.
        source.send(.failed(SourceError(.deviceRemoved, "gone")))
        source.gyro(at: 4)
        try await offThePool { queue.waitUntilAllOperationsAreFinished() }
        let after = events.withLockedValue { $0 }
        #expect(after.count == 6 && after.last?.hasPrefix("error") == true, "\(after)")
        manager.stopGyroUpdates()
    }

    @Test func asyncSequenceSkipsAnInterruption() async throws {
        let source = ScriptedSource()
        let manager = CMMotionManager(source: source)
        let updates = manager.gyroUpdates(interval: 0.01)
        let reader = Task { () -> [Double] in
            var out: [Double] = []
            for try await d in updates {
                out.append(d.timestamp)
                if out.count == 3 { break }
            }
            return out
        }
        for _ in 0..<200 where !source.running { try await Task.sleep(nanoseconds: 10_000_000) }
        source.gyro(at: 1)
        source.send(.interrupted(SourceError(.deviceRemoved, "silence")))
        source.gyro(at: 2)
        source.gyro(at: 3)
        let got = try await reader.value
        #expect(got == [1, 2, 3])
    }
}
