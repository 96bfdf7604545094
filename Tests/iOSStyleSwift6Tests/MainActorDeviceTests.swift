import Foundation
import Testing
#if canImport(UIKit)
import UIKit
#endif
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

/// What a screen needs of the device, as iOS apps abstract it: main-actor isolated, because UIKit's
/// `UIDevice` is, and adopted by `UIDevice` itself in an extension.
@MainActor protocol OrientationProviding: AnyObject {
    var orientation: UIDeviceOrientation { get }
    var isGeneratingDeviceOrientationNotifications: Bool { get }
}

extension UIDevice: OrientationProviding {}

/// A protocol mock, main-actor isolated as the protocol is.
@MainActor final class StubOrientation: OrientationProviding {
    var orientation: UIDeviceOrientation = .landscapeLeft
    var isGeneratingDeviceOrientationNotifications = true
}

/// A subclass mock of the device, as iOS suites write one: nothing restated (UIKit's `UIDevice` is
/// `@MainActor`, so a subclass needs no `Sendable` of its own). In Swift 6 mode this compiled with the
/// warning "must restate inherited '@unchecked Sendable' conformance" while the package's `UIDevice`
/// declared one; this target treats warnings as errors, so that would now fail the build.
final class MockDevice: UIDevice {
    var stubOrientation: UIDeviceOrientation = .portrait
    override var orientation: UIDeviceOrientation { stubOrientation }
    override var isGeneratingDeviceOrientationNotifications: Bool { true }
}

/// A screen's model as iOS apps write it: main-actor isolated, defaulting to `UIDevice.current`.
@MainActor final class OrientationBadge {
    private let device: any OrientationProviding
    init(device: any OrientationProviding = UIDevice.current) { self.device = device }
    var text: String {
        let o = device.orientation
        if o.isLandscape { return "landscape" }
        if o.isPortrait { return "portrait" }
        return device.isGeneratingDeviceOrientationNotifications ? "flat" : "unknown"
    }
}

/// On iOS, `UIDevice` is `@MainActor`: tests that touch it are main-actor tests, and the protocols an
/// app extends it to adopt are main-actor protocols. Both compile here in Swift 6 mode and behave as on
/// iOS (the package's `UIDevice` is usable from any thread, so the main actor is allowed, not required).
@Suite struct MainActorDeviceTests {
    init() { _ = defaultSourceChosen }

    @MainActor @Test func aMainActorModelReadsTheCurrentDevice() {
        // Nothing in this process begins orientation notifications: UIKit then reports unknown.
        #expect(!UIDevice.current.isGeneratingDeviceOrientationNotifications)
        #expect(UIDevice.current.orientation == .unknown)
        #expect(OrientationBadge().text == "unknown")
    }

    @MainActor @Test func aSubclassMockOfTheDeviceReachesTheModel() {
        let mock = MockDevice()
        let badge = OrientationBadge(device: mock)
        #expect(badge.text == "portrait")
        mock.stubOrientation = .landscapeRight
        #expect(badge.text == "landscape")
        mock.stubOrientation = .faceDown
        #expect(badge.text == "flat", "generating, neither portrait nor landscape")
        let device: UIDevice = mock
        #expect(device.orientation == .faceDown, "the override, through the base class")
        #expect(device.model == "Linux", "what the mock does not override is the package's")
    }

    @MainActor @Test func aMainActorProtocolMockStandsInForTheDevice() {
        let stub = StubOrientation()
        let badge = OrientationBadge(device: stub)
        #expect(badge.text == "landscape")
        stub.orientation = .portraitUpsideDown
        #expect(badge.text == "portrait")
        stub.orientation = .faceUp
        #expect(badge.text == "flat")
    }
}
