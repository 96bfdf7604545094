import Foundation
import MotionFusion
import MotionSources
@testable import OpenCoreMotion
import Testing

@Suite struct ActivityManagerTests {
    private func temporaryDatabase() -> String {
        NSTemporaryDirectory() + "cm-\(UUID().uuidString)-activity.sqlite"
    }

    private func serialQueue() -> OperationQueue {
        let q = OperationQueue()
        q.maxConcurrentOperationCount = 1
        return q
    }

    @Test func errorsAreInCMErrorDomain() async {
        let manager = CMMotionActivityManager(source: ManualSource(sensors: [.accelerometer]), databasePath: temporaryDatabase())
        let errors = Recorder<NSError>()
        manager.queryActivityStarting(from: Date(), to: Date().addingTimeInterval(-10), to: serialQueue()) { list, error in
            #expect(list == nil)
            if let error { errors.append(error as NSError) }
        }
        #expect(await errors.until { errors.count == 1 })
        let gyroOnly = CMMotionActivityManager(source: ManualSource(sensors: [.gyro]), databasePath: temporaryDatabase())
        gyroOnly.queryActivityStarting(from: Date().addingTimeInterval(-10), to: Date(), to: serialQueue()) { _, error in
            if let error { errors.append(error as NSError) }
        }
        let nils = Recorder<Bool>(signalling: errors.changes)
        gyroOnly.startActivityUpdates(to: serialQueue()) { activity in nils.append(activity == nil) }
        #expect(await errors.until { errors.count == 2 && nils.count == 1 })
        #expect(errors.all.allSatisfy { $0.domain == CMErrorDomain })
        #expect(errors.all.map(\.code) == [Int(CMErrorInvalidParameter.rawValue), Int(CMErrorMotionActivityNotAvailable.rawValue)])
        #expect(nils.all == [true])
    }

    @Test func anEmptyHistoryIsAnEmptyList() async {
        let manager = CMMotionActivityManager(source: ManualSource(sensors: [.accelerometer]), databasePath: temporaryDatabase())
        let lists = Recorder<Int>()
        manager.queryActivityStarting(from: Date().addingTimeInterval(-60), to: Date(), to: serialQueue()) { list, _ in
            lists.append(list?.count ?? -1)
        }
        #expect(await lists.until { lists.count == 1 })
        #expect(lists.all == [0])
    }

    @Test func aFailingSourceEndsUpdatesWithNilOnce() async throws {
        let source = ObservedSource(sensors: [.accelerometer])
        let manager = CMMotionActivityManager(source: source, databasePath: temporaryDatabase())
        let received = Recorder<Bool>()
        manager.startActivityUpdates(to: serialQueue()) { activity in received.append(activity == nil) }
        #expect(await source.until { source.demand.rates[.accelerometer] == 50 })
        source.fail(SourceError(.deviceRemoved, "unplugged"))
        #expect(await received.until { received.all.contains(true) })
        try await Task.sleep(nanoseconds: 100_000_000)  // room for a wrong second call; holds no thread
        #expect(received.all.filter { $0 }.count == 1)
    }

    @Test func asyncSequenceFollowsAWalk() async throws {
        let device = SimulatedDevice(scenario: .walk, seed: 2, clock: .virtual(startTime: 100))
        let manager = CMMotionActivityManager(source: device, databasePath: temporaryDatabase())
        var kinds: [ActivityKind] = []
        for try await activity in manager.activityUpdates() {
            kinds.append(activity.kind)
            #expect([activity.unknown, activity.stationary, activity.walking, activity.running,
                     activity.automotive, activity.cycling].filter { $0 }.count == 1)
            if activity.walking { break }
        }
        #expect(kinds.first == .unknown && kinds.last == .walking)
    }

    @Test func theAsyncSequenceThrowsWithoutAnAccelerometer() async {
        let manager = CMMotionActivityManager(source: ManualSource(sensors: [.gyro]), databasePath: temporaryDatabase())
        await #expect(throws: NSError.self) {
            for try await _ in manager.activityUpdates() {}
        }
    }
}
