import Foundation
import MotionFusion
import MotionSources
import NIOConcurrencyHelpers
import OpenCoreMotion
import MotionTestSupport
import Testing
@testable import MotionPhones

/// `?motion=phone`: device motion from the phone's own attitude and gravity, over loopback, with the
/// Python emulator playing a phone lying face up, still, at a known yaw.
@Suite(.serialized) struct PhoneOwnAttitudeTests {
    /// The emulated phone's yaw, radians counter-clockwise from magnetic north.
    static let yaw = 0.7
    static let still = ["PHONE_RATE_Z": "0", "PHONE_YAW": String(yaw)]

    /// Device motion in `frame` from a manager on `source`.
    final class Motions: @unchecked Sendable {
        // Sendable: like Apple's, CMMotionManager and CMDeviceMotion are not `Sendable`, but the manager is
        // callable from any thread and the samples are immutable; the list is behind a lock.
        let manager: CMMotionManager
        let got = NIOLockedValueBox<[CMDeviceMotion]>([])
        /// When collecting began (seconds since boot), before the phone started.
        let began = MonotonicClock.now()
        init(_ source: PhoneSource, frame: CMAttitudeReferenceFrame) {
            manager = CMMotionManager(source: source)
            manager.deviceMotionUpdateInterval = 0.01
            manager.startDeviceMotionUpdates(using: frame, to: OperationQueue()) { [got] motion, _ in
                if let motion { got.withLockedValue { $0.append(motion) } }
            }
        }
        var all: [CMDeviceMotion] { got.withLockedValue { $0 } }
        func stop() { manager.stopDeviceMotionUpdates() }
    }

    /// The phone's attitude as Core Motion reports it: yaw in the magnetic-north frame, 0 in the
    /// arbitrary one, gravity straight down, no user acceleration, the raw field uncalibrated.
    /// `began`: when collecting began (seconds since boot), before the phone started.
    func checkOwnMotion(north: [CMDeviceMotion], arbitrary: [CMDeviceMotion], began: Double,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        let now = MonotonicClock.now()
        #expect(north.count >= 40 && arbitrary.count >= 40, "\(north.count), \(arbitrary.count) updates", sourceLocation: sourceLocation)
        #expect(zip(north.dropFirst(), north).allSatisfy { $0.0.timestamp > $0.1.timestamp }, sourceLocation: sourceLocation)
        // In this machine's boot time: sampled after collecting began (less a second for the network),
        // and not in the future.
        if let last = north.last { #expect(last.timestamp <= now && last.timestamp > began - 1, sourceLocation: sourceLocation) }
        // Core Motion's heading is where the device's top (y, 90° counter-clockwise from x) points,
        // clockwise from north.
        let headingDegrees = 270 - Self.yaw * 180 / .pi
        for m in north {
            #expect(abs(m.attitude.yaw - Self.yaw) < 1e-3 && abs(m.attitude.roll) < 1e-3 && abs(m.attitude.pitch) < 1e-3,
                    "attitude \(m.attitude.roll), \(m.attitude.pitch), \(m.attitude.yaw)", sourceLocation: sourceLocation)
            #expect(abs(m.gravity.z + 1) < 1e-3 && abs(m.gravity.x) < 1e-6 && abs(m.gravity.y) < 1e-6, "gravity \(m.gravity)", sourceLocation: sourceLocation)
            let u = m.userAcceleration
            #expect(abs(u.x) < 1e-3 && abs(u.y) < 1e-3 && abs(u.z) < 1e-3, "user acceleration \(u)", sourceLocation: sourceLocation)
            #expect(abs(m.rotationRate.z) < 1e-6, sourceLocation: sourceLocation)
            #expect(abs(m.heading - headingDegrees) < 0.1, "heading \(m.heading)", sourceLocation: sourceLocation)
            #expect(m.magneticField.accuracy == .uncalibrated, sourceLocation: sourceLocation)
            // The raw field of a still phone at this yaw: (20 cos yaw, −20 sin yaw, −40) µT.
            let f = m.magneticField.field
            if f.x != 0 || f.y != 0 || f.z != 0 {
                #expect(abs(f.x - 20 * cos(Self.yaw)) < 0.01 && abs(f.y + 20 * sin(Self.yaw)) < 0.01 && abs(f.z + 40) < 0.01,
                        "field \(f)", sourceLocation: sourceLocation)
            }
        }
        #expect(north.contains { $0.magneticField.field.z != 0 }, "the raw field is passed through", sourceLocation: sourceLocation)
        for m in arbitrary {
            #expect(abs(m.attitude.yaw) < 1e-3 && abs(m.gravity.z + 1) < 1e-3, "arbitrary frame \(m.attitude.yaw)", sourceLocation: sourceLocation)
            #expect(m.heading == -1, sourceLocation: sourceLocation)
        }
    }

    @Test func sensorLoggerOwnAttitude() async throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0?motion=phone"), log: quietLog)
        #expect(source.reportsOwnAttitude)
        let north = Motions(source, frame: .xMagneticNorthZVertical)
        let arbitrary = Motions(source, frame: .xArbitraryZVertical)
        let port = try #require(source.boundAddress?.port)
        let phone = try PhoneEmulator(["sensorlogger", "http://127.0.0.1:\(port)/", "1.0", "100"], environment: Self.still)
        #expect(await phone.wait() == 0)
        await collectAndCheck(source, north, arbitrary)
    }

    @Test func sensorServerOwnAttitude() async throws {
        try await checkServingPhone(["sensorserver", "1.0", "100"]) { "sensorserver://127.0.0.1:\($0)?motion=phone" }
    }

    @Test(arguments: ["android", "ios"]) func phyphoxOwnAttitude(platform: String) async throws {
        try await checkServingPhone(["phyphox", "1.0", "100", platform]) { "phyphox://127.0.0.1:\($0)?interval=0.03&motion=phone" }
    }

    /// An emulated phone app that serves on a port of its own (`emulator`: the emulator's arguments), read
    /// through the source `spec(port)` describes, then ``collectAndCheck(_:_:_:sourceLocation:)``.
    func checkServingPhone(_ emulator: [String], spec: (Int) -> String,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let phone = try PhoneEmulator(emulator, environment: Self.still)
        let port = try #require(await phone.port(), sourceLocation: sourceLocation)
        let source = try PhoneSource(spec: PhoneSpec(parsing: spec(port)), log: quietLog)
        let north = Motions(source, frame: .xMagneticNorthZVertical)
        let arbitrary = Motions(source, frame: .xArbitraryZVertical)
        _ = await phone.wait()
        await collectAndCheck(source, north, arbitrary, sourceLocation: sourceLocation)
    }

    /// Waits for 80 updates in the magnetic frame, stops both collectors, checks the phone's own motion
    /// in both frames (``checkOwnMotion(north:arbitrary:sourceLocation:)``) and that nothing was malformed.
    func collectAndCheck(_ source: PhoneSource, _ north: Motions, _ arbitrary: Motions,
                         sourceLocation: SourceLocation = #_sourceLocation) async {
        await eventually { north.all.count >= 80 }
        north.stop()
        arbitrary.stop()
        checkOwnMotion(north: north.all, arbitrary: arbitrary.all, began: north.began, sourceLocation: sourceLocation)
        #expect(source.statistics.malformed == 0, sourceLocation: sourceLocation)
    }

    /// A phone turning at +0.5 rad/s, batched (Sensor Logger, 0.1 s) or polled (phyphox, 30 ms): each
    /// update carries the attitude of its own moment (or, when the attitude comes after its sample, the
    /// one before), so the yaw advances by 0.5 rad/s × the spacing from one update to the next, not in
    /// steps of a batch.
    @Test(arguments: ["sensorlogger", "phyphox"]) func turningPhoneAttitudeFollowsEachSample(app: String) async throws {
        var phone: PhoneEmulator
        let source: PhoneSource
        let north: Motions
        if app == "sensorlogger" {
            source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0?motion=phone"), log: quietLog)
            north = Motions(source, frame: .xMagneticNorthZVertical)
            phone = try PhoneEmulator(["sensorlogger", "http://127.0.0.1:\(try #require(source.boundAddress?.port))/", "1.0", "100"])
        } else {
            phone = try PhoneEmulator(["phyphox", "1.0", "100"])
            let port = try #require(await phone.port())
            source = try PhoneSource(spec: PhoneSpec(parsing: "phyphox://127.0.0.1:\(port)?interval=0.03&motion=phone"), log: quietLog)
            north = Motions(source, frame: .xMagneticNorthZVertical)
        }
        _ = await phone.wait()
        // Everything is sent; under load (ThreadSanitizer beside other suites: 59 of 80 after 10 s once)
        // the last batches may still be on their way. The wait ends as soon as they are in.
        await eventually { north.all.count >= 80 }
        north.stop()
        let got = north.all
        #expect(got.count >= 60)
        // Yaw steps between updates: 0.005 rad per 10 ms sample. Sensor Logger sends each attitude with
        // its sample; phyphox's buffers in one answer may differ in length, so a poll's last gyroscope
        // sample may come before its attitude and get the previous one (a repeat, then a double step).
        // Taking the batch's last attitude instead would repeat it for 9 of 10 updates (Sensor Logger)
        // or 2 of 3 (phyphox) and then jump by 0.05 or 0.015 rad.
        var steps: [Double] = []
        var excesses: [Double] = []
        for (b, a) in zip(got.dropFirst(), got) {
            var dyaw = b.attitude.yaw - a.attitude.yaw
            if dyaw > .pi { dyaw -= 2 * .pi }
            if dyaw < -.pi { dyaw += 2 * .pi }
            steps.append(dyaw)
            // The emulator samples every 10 ms of phone time: the spacing in phone time is the nearest
            // multiple of 10 ms.
            let phoneSpacing = ((b.timestamp - a.timestamp) / 0.01).rounded() * 0.01
            excesses.append(dyaw - 0.5 * phoneSpacing)
            #expect(abs(b.rotationRate.z - 0.5) < 1e-6)
        }
        let repeats = steps.filter { abs($0) < 0.001 }.count
        // Never backwards, never ahead of the turn by more than one sample's 0.005 rad (the catch-up
        // after a repeat), whatever updates the hub thinned out.
        #expect(steps.allSatisfy { $0 > -1e-9 }, "smallest yaw step \(steps.min() ?? 0) rad")
        // The mapping to boot time follows the phone's clock through the network delay: when the
        // estimate of the smallest delay improves (rare; under load by up to 20 ms), one mapped spacing
        // shrinks. Attitude taken per batch or per poll would exceed on every 10th (Sensor Logger) or
        // 3rd (phyphox) update.
        let ahead = excesses.filter { $0 >= 0.0055 }
        #expect(ahead.count <= max(1, excesses.count / 30),
                "\(ahead.count) of \(excesses.count) yaw steps exceed the turn since the last update, by up to \(ahead.max() ?? 0) rad")
        #expect(Double(repeats) < Double(steps.count) * (app == "sensorlogger" ? 0.05 : 0.2), "\(repeats) of \(steps.count) updates repeat the attitude")
    }

    /// Without the option the same phone's device motion is fused here: it runs, reads gravity down,
    /// and its attitude is ours (its arbitrary frame starts at yaw 0 as well).
    @Test func withoutTheOptionDeviceMotionIsFused() async throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0"), log: quietLog)
        #expect(!source.reportsOwnAttitude)
        let arbitrary = Motions(source, frame: .xArbitraryZVertical)
        let port = try #require(source.boundAddress?.port)
        let phone = try PhoneEmulator(["sensorlogger", "http://127.0.0.1:\(port)/", "1.0", "100"], environment: Self.still)
        #expect(await phone.wait() == 0)
        await eventually { arbitrary.all.count >= 80 }
        arbitrary.stop()
        let got = arbitrary.all
        #expect(got.count >= 40)
        let last = try #require(got.last)
        #expect(abs(last.gravity.z + 1) < 0.05, "gravity \(last.gravity)")
        #expect(abs(last.attitude.yaw) < 0.05)
        // The phone's attitude arrived all the same, for `sensors` and `extras`.
        #expect(source.extras.attitude != nil)
    }

    @Test func badOrUnsupportedMotionOption() {
        #expect(throws: SourceError.self) { try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0?motion=both"), log: quietLog) }
        #expect(throws: SourceError.self) { try PhoneSource(spec: PhoneSpec(parsing: "hyperimu://127.0.0.1:0?motion=phone"), log: quietLog) }
        #expect((try? PhoneSource(spec: PhoneSpec(parsing: "sensorlog://127.0.0.1:1?motion=fused"), log: quietLog))?.reportsOwnAttitude == false)
        // `own`, the word a BNO055's i2c: source takes, means the same as `phone`.
        #expect((try? PhoneSource(spec: PhoneSpec(parsing: "sensorlog://127.0.0.1:1?motion=own"), log: quietLog))?.reportsOwnAttitude == true)
        #expect((try? PhoneSource(spec: PhoneSpec(parsing: "sensorlog://127.0.0.1:1?motion=phone"), log: quietLog))?.reportsOwnAttitude == true)
    }
}
