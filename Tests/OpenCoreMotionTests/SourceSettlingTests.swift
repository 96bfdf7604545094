import Foundation
import MotionSources
import MotionTestSupport
import Testing
@testable import OpenCoreMotion

/// A ``ManualSource`` whose stop takes `stopSeconds`, as an I2C chip's reconfiguration or a fusion save
/// does: the stop is recorded (``stops``) only once it has finished.
private final class SlowStoppingSource: SensorSource {
    private let base: ManualSource
    private let stopSeconds: Double
    private let stopCount = Locked(0)
    var info: SourceInfo { base.info }

    init(identifier: String, stopSeconds: Double) {
        base = ManualSource(sensors: [.accelerometer], identifier: identifier)
        self.stopSeconds = stopSeconds
    }

    func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        if demand.isEmpty { Thread.sleep(forTimeInterval: stopSeconds) }
        let granted = try base.apply(demand, sink: sink)
        if demand.isEmpty { stopCount.withLock { $0 += 1 } }
        return granted
    }

    /// Stops that have finished.
    var stops: Int { stopCount.withLock { $0 } }
    var demand: SensorDemand { base.demand }
}

@Suite struct SourceSettlingTests {
    /// What `coremotion` does before it exits: a stop returns at once and the source is reconfigured on the
    /// hub's queue afterwards; waiting for every source to settle returns only once each stopped source
    /// has taken its stop, however many managers and sources the process used.
    @Test func waitingForEverySourceReturnsOnlyOnceEachStoppedSourceHasStopped() async throws {
        let sources = [SlowStoppingSource(identifier: "slow-a", stopSeconds: 1), SlowStoppingSource(identifier: "slow-b", stopSeconds: 1)]
        let managers = sources.map { CMMotionManager(source: $0) }
        for manager in managers {
            manager.accelerometerUpdateInterval = 0.01
            manager.startAccelerometerUpdates()
        }
        #expect(sources.allSatisfy { !$0.demand.isEmpty })
        let started = Date()
        for manager in managers { manager.stopAccelerometerUpdates() }
        // The stops returned without waiting for the sources (they take a second each).
        #expect(Date().timeIntervalSince(started) < 0.9)
        nonisolated(unsafe) let keep = managers
        try await offThePool {
            CMMotionManager.waitUntilEverySourceSettles()
            _ = keep
        }
        #expect(sources.map(\.stops) == [1, 1])
        #expect(sources.allSatisfy { $0.demand.isEmpty })
    }

    /// A source still running is left running: the wait returns without stopping it.
    @Test func aSourceStillRunningIsLeftRunning() async throws {
        let source = SlowStoppingSource(identifier: "running", stopSeconds: 0)
        let manager = CMMotionManager(source: source)
        manager.startAccelerometerUpdates()
        nonisolated(unsafe) let keep = manager
        try await offThePool {
            CMMotionManager.waitUntilEverySourceSettles()
            _ = keep
        }
        #expect(source.stops == 0)
        #expect(!source.demand.isEmpty)
        manager.stopAccelerometerUpdates()
    }
}
