import Foundation
import MotionFusion
import MotionSources
import Testing
@testable import OpenCoreMotion

/// A responder as a view controller overrides it.
final class ShakeCatcher: UIResponder {
    var calls: [(String, UIEvent.EventSubtype, UIEvent.EventType?)] = []
    override func motionBegan(_ motion: UIEvent.EventSubtype, with event: UIEvent?) { calls.append(("began", motion, event?.type)) }
    override func motionEnded(_ motion: UIEvent.EventSubtype, with event: UIEvent?) { calls.append(("ended", motion, event?.type)) }
}

/// A responder that overrides nothing, so UIKit's default passes events to `next`.
final class Forwarder: UIResponder {
    let target: UIResponder
    init(to target: UIResponder) {
        self.target = target
        super.init()
    }
    override var next: UIResponder? { target }
}

/// A device mock as iOS tests write it.
final class LandscapeDevice: UIDevice, @unchecked Sendable {
    override var orientation: UIDeviceOrientation { .landscapeLeft }
}

/// Polls `condition` on the main actor every millisecond, suspending in between so main-actor work runs;
/// `timeout` only bounds a failure.
@MainActor func onMain(timeout: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

@Suite struct UIKitNamesTests {
    /// `UIDevice()`, `UIDevice.current` and `CMSensorRecorder`'s class methods resolve the process's
    /// default source once: point it at the simulator first, as Apple's listings in this process do.
    init() { setenv("COREMOTION_SOURCE", "sim:handheld", 1) }

    @Test @MainActor func aShakeReachesTheResponderWithAMotionEvent() async {
        let source = ManualSource(sensors: [.accelerometer])
        let monitor = UIShakeMonitor(source: source)
        let catcher = ShakeCatcher()
        let forwarder = Forwarder(to: catcher)
        monitor.responder = forwarder
        #expect(monitor.responder === forwarder)
        #expect(await onMain { source.demand.rates[.accelerometer] != nil })
        var t = 100.0
        func emit(_ x: Double) {
            source.emit(RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(x, 0, -1)))
            t += 0.02
        }
        for _ in 0..<25 { emit(0) }                              // at rest, face up
        for k in 0..<30 { emit((k / 5) % 2 == 0 ? 2.5 : -2.5) }  // shaken along x, reversing every 0.1 s
        for _ in 0..<50 { emit(0) }                              // still again
        #expect(await onMain { catcher.calls.count >= 2 })
        #expect(catcher.calls.map(\.0) == ["began", "ended"])
        #expect(catcher.calls.allSatisfy { $0.1 == .motionShake && $0.2 == .motion })
        monitor.responder = nil
        withExtendedLifetime(forwarder) {}
    }

    @Test func appleNamesAndRawValues() {
        #expect(UIEvent.EventSubtype.motionShake.rawValue == 1)
        #expect(UIEvent.EventSubtype.remoteControlPlay.rawValue == 100)
        #expect(UIEvent.EventType.motion.rawValue == 1)
        let value: UIAccelerationValue = UIAcceleration(x: 0.5, y: 0, z: -1, timestamp: 3).x
        #expect(value == 0.5)
        let subtype: UIEventSubtype = .none
        #expect(subtype.rawValue == 0)
    }

    @Test func uiDeviceIsAnOverridableNSObject() {
        let device: UIDevice = LandscapeDevice()
        #expect(device.orientation == .landscapeLeft)
        #expect((device as NSObject).isKind(of: UIDevice.self))
        #expect(UIDevice.current === UIDevice.current)
        #expect(device.systemName == "Linux")
        let release = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(device.systemVersion == release)
        #expect(device.name == ProcessInfo.processInfo.hostName)
    }

    @Test func rotationRateAndPressureSamplesRoundTrip() throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let rate = CMRecordedRotationRateData(startDate: start, rotationRate: CMRotationRate(x: 0.1, y: -0.2, z: 0.3), timestamp: 5)
        let data = try NSKeyedArchiver.archivedData(withRootObject: rate, requiringSecureCoding: true)
        let decodedRate = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CMRecordedRotationRateData.self, from: data))
        #expect(decodedRate.rotationRate.y == -0.2 && decodedRate.startDate == start && decodedRate.timestamp == 5)
        let pressure = CMRecordedPressureData(identifier: 9, startDate: start, pressure: Measurement(value: 1013.25, unit: .hectopascals),
                                              temperature: Measurement(value: 293.15, unit: .kelvin), timestamp: 6)
        let archived = try NSKeyedArchiver.archivedData(withRootObject: pressure, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CMRecordedPressureData.self, from: archived))
        #expect(abs(decoded.pressure.converted(to: .kilopascals).value - 101.325) < 1e-9)
        #expect(abs(decoded.temperature.converted(to: .celsius).value - 20) < 1e-9)
        #expect(decoded.identifier == 9 && decoded.startDate == start)
        #expect(CMAmbientPressureData().pressure.value == 0 && CMRotationRateData().rotationRate.z == 0)
    }

    @Test func sensorRecorderAuthorisationAsApplesOlderCheck() {
        #expect(CMSensorRecorder.isAuthorizedForRecording() == (CMSensorRecorder.authorizationStatus() == .authorized))
    }
}
