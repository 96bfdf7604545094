import Foundation
import MotionFusion
import MotionSources
@testable import OpenCoreMotion
import Testing

/// `SourceHubState` driven directly, as a state machine: which actions one event makes.
@Suite struct HubStateTests {
    let info = ManualSource().info

    /// A consumer of `stream` that counts what reaches it.
    func consumer(_ stream: MotionStream, _ seen: Recorder<String>, _ name: String) -> ConsumerSpec {
        ConsumerSpec(stream: stream, interval: 0.01, deliver: { output in
            switch output {
            case .accelerometer: seen.append("\(name) accelerometer")
            case .failure: seen.append("\(name) failure")
            case .notice: seen.append("\(name) notice")
            default: seen.append("\(name) other")
            }
        })
    }

    func perform(_ actions: HubActions) -> Int {
        var reconciliations = 0
        for action in actions {
            switch action {
            case .deliver(let deliver, let output): deliver(output)
            case .startReconciliation: reconciliations += 1
            case .saveLearned: break
            }
        }
        return reconciliations
    }

    /// More consumers than the actions kept inline: every one is served, in registration order.
    @Test func aSampleReachesEveryConsumerBeyondTheInlineActions() {
        var state = SourceHubState()
        let seen = Recorder<String>()
        let count = HubActions.inlineCapacity + 3
        for i in 0..<count { _ = state.add(consumer(.accelerometer, seen, "c\(i)")) }
        _ = state.add(consumer(.gyro, seen, "gyro"))
        let actions = state.handle(.sample(accel(1)), info: info)
        #expect(actions.count == count)
        #expect(perform(actions) == 0)
        #expect(seen.all == (0..<count).map { "c\($0) accelerometer" })
    }

    /// A failure reaches every consumer once, removes them all and asks for one reconciliation (the stop).
    @Test func aFailureReachesEveryConsumerThenStopsTheSource() {
        var state = SourceHubState()
        let seen = Recorder<String>()
        for i in 0..<6 { _ = state.add(consumer(.accelerometer, seen, "c\(i)")) }
        let actions = state.handle(.failed(SourceError(.deviceRemoved, "gone")), info: info)
        #expect(perform(actions) == 1)
        #expect(seen.all == (0..<6).map { "c\($0) failure" })
        #expect(state.consumers.isEmpty)
        #expect(state.handle(.sample(accel(2)), info: info).isEmpty)
    }

    /// Removing one consumer keeps the others and their order; an unknown identifier changes nothing.
    @Test func removingAConsumerKeepsTheOthersInOrder() {
        var state = SourceHubState()
        let seen = Recorder<String>()
        let ids = (0..<3).map { state.add(consumer(.accelerometer, seen, "c\($0)")) }
        #expect(perform(state.remove(ids[1])) == 1)
        #expect(state.remove(ids[1]).isEmpty)
        #expect(perform(state.handle(.sample(accel(1)), info: info)) == 0)
        #expect(seen.all == ["c0 accelerometer", "c2 accelerometer"])
    }

    /// Samples going back in time, repeated, or not finite are dropped; an interruption is passed once.
    @Test func badSamplesAreDroppedAndAnInterruptionIsPassedOnce() {
        var state = SourceHubState()
        let seen = Recorder<String>()
        _ = state.add(consumer(.accelerometer, seen, "c"))
        _ = perform(state.handle(.sample(accel(2)), info: info))
        #expect(state.handle(.sample(accel(2)), info: info).isEmpty)
        #expect(state.handle(.sample(accel(1)), info: info).isEmpty)
        #expect(state.handle(.sample(accel(.nan)), info: info).isEmpty)
        #expect(state.handle(.sample(RawSample(sensor: .accelerometer, timestamp: 3, value: Vector3(.infinity, 0, 0))), info: info).isEmpty)
        let gone = SourceError(.io, "no data")
        _ = perform(state.handle(.interrupted(gone), info: info))
        #expect(state.handle(.interrupted(gone), info: info).isEmpty)
        _ = perform(state.handle(.sample(accel(3)), info: info))
        #expect(seen.all == ["c accelerometer", "c notice", "c accelerometer"])
    }
}

/// The attitude of a delivered `CMDeviceMotion` is made when first read, and is then one object.
@Suite struct DeviceMotionAttitudeTests {
    func motion() -> CMDeviceMotion {
        CMDeviceMotion(timestamp: 1, rotation: Quaternion.aboutZ(0.5), rotationRate: CMRotationRate(),
                       gravity: CMAcceleration(x: 0, y: 0, z: -1), userAcceleration: CMAcceleration(),
                       magneticField: CMCalibratedMagneticField(), heading: -1)
    }

    @Test func everyReadGetsTheSameAttitudeAndSeesItsChanges() {
        let m = motion()
        #expect(abs(m.attitude.yaw - 0.5) < 1e-12)
        #expect(m.attitude === m.attitude)
        m.attitude.multiply(byInverseOf: CMAttitude(rotation: Quaternion.aboutZ(0.5)))
        #expect(abs(m.attitude.yaw) < 1e-12, "a change to the attitude is kept, as on Apple platforms")
    }

    @Test func threadsReadingTheAttitudeFirstAllGetOneObject() {
        for _ in 0..<50 {
            // Samples are not Sendable (as Apple's), but the package's are safe to share: that is what is tested.
            let m = UncheckedSendable(motion())
            let seen = Recorder<ObjectIdentifier>()
            DispatchQueue.concurrentPerform(iterations: 8) { _ in seen.append(ObjectIdentifier(m.value.attitude)) }
            #expect(Set(seen.all).count == 1)
        }
    }

    @Test func anAttitudeGivenAtCreationIsTheOneRead() {
        let given = CMAttitude(rotation: Quaternion.aboutZ(1))
        let m = CMDeviceMotion(timestamp: 1, attitude: given, rotationRate: CMRotationRate(),
                               gravity: CMAcceleration(), userAcceleration: CMAcceleration())
        #expect(m.attitude === given)
        #expect(CMDeviceMotion().attitude.quaternion.w == 1)
    }
}
