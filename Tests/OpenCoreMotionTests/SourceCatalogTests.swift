import Foundation
import MotionSources
import Testing
@testable import OpenCoreMotion

/// The registry behind `CMMotionManager.source(named:)` (issue 21, item 4): families come from their
/// modules; a family a trait left out fails with an error naming the trait.
@Suite struct SourceCatalogTests {
    /// A catalog like a `traits: []` build's: simulator and replay only, the rest missing.
    private var light: SourceCatalog {
        SourceCatalog(providers: [.simulator, .replay], missing: [
            MissingSourceFamily(schemes: SourceSchemes.linuxHardware, trait: "LinuxHardware", what: "Linux hardware"),
            MissingSourceFamily(schemes: SourceSchemes.mqtt + SourceSchemes.phones, trait: "NetworkSources", what: "network"),
        ])
    }

    @Test(arguments: ["mqtt://localhost:1883/#", "MQTTS://h:8883/t", "phyphox://127.0.0.1:8080", "hyperimu://0.0.0.0:9"])
    func networkSpecsNameTheirTraitWhenItIsOff(spec: String) throws {
        let error = try #require(throws: SourceError.self) { try light.source(named: spec) }
        #expect(error.kind == .unavailable)
        #expect(error.message.contains("NetworkSources"), "\(error.message)")
        #expect(!error.message.contains("LinuxHardware"), "\(error.message)")
    }

    @Test(arguments: ["iio", "iio:bmi160", "evdev:/dev/input/event3", "i2c:/dev/i2c-1:0x68"])
    func linuxSpecsNameTheirTraitWhenItIsOff(spec: String) throws {
        let error = try #require(throws: SourceError.self) { try light.source(named: spec) }
        #expect(error.message.contains("LinuxHardware"), "\(error.message)")
        #expect(light.barometer(named: spec) == nil)
        #expect(light.firstSource(roots: SourceRoots(sysfsRoot: "/nonexistent", devRoot: "/nonexistent")) == nil)
    }

    @Test func aLightCatalogStillOpensTheSimulator() throws {
        let source = try light.source(named: "sim:walk:3")
        #expect(source is SimulatedDevice)
        #expect(source.info.identifier.contains("walk"))
        #expect(light.barometer(named: "sim:stairs")?.identifier == "sim:stairs")
    }

    @Test func anUnknownSpecListsWhatExistsAndWhatATraitWouldAdd() throws {
        let error = try #require(throws: SourceError.self) { try light.source(named: "nowhere") }
        #expect(error.message.contains("unknown source 'nowhere'"))
        #expect(error.message.contains("sim[:SCENARIO[:SEED]]") && error.message.contains("replay:PATH"))
        #expect(error.message.contains("trait NetworkSources") && error.message.contains("trait LinuxHardware"), "\(error.message)")
    }

    /// This package's own build has its default traits on: every family is present, none missing.
    @Test func theDefaultBuildHasEveryFamily() throws {
        let catalog = SourceCatalog.standard
        #expect(catalog.missing.isEmpty)
        for scheme in SourceSchemes.simulator + SourceSchemes.replay + SourceSchemes.linuxHardware + SourceSchemes.mqtt + SourceSchemes.phones {
            #expect(catalog.provider(for: scheme + ":x") != nil, "\(scheme)")
        }
        // A malformed MQTT spec reaches the MQTT family's own parser (not a trait error).
        let error = try #require(throws: SourceError.self) { try CMMotionManager.source(named: "mqtt://") }
        #expect(!error.message.contains("trait"), "\(error.message)")
    }
}
