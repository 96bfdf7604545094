import MotionRecordingFormats
import MotionSources
#if LinuxHardware
import MotionSourcesLinux
#endif
#if NetworkSources
import MotionMQTT
import MotionPhones
#endif

extension SourceCatalog {
    /// The families this build of OpenCoreMotion has, each registered by the module that implements it:
    /// the simulator and replay always; Linux hardware with the `LinuxHardware` trait; MQTT brokers and
    /// phones with `NetworkSources`. A family whose trait is off is listed as missing, so its specs fail
    /// with an error that names the trait. This list is the only place that knows the traits.
    static let standard: SourceCatalog = {
        var providers: [SourceProvider] = [.simulator, .replay]
        var missing: [MissingSourceFamily] = []
        #if LinuxHardware
        providers.append(.linuxHardware)
        #else
        missing.append(MissingSourceFamily(schemes: SourceSchemes.linuxHardware, trait: "LinuxHardware",
                                           what: "IIO, evdev and I2C sources and IIO barometers"))
        #endif
        #if NetworkSources
        providers += [.mqtt, .phones]
        #else
        missing.append(MissingSourceFamily(schemes: SourceSchemes.mqtt + SourceSchemes.phones, trait: "NetworkSources",
                                           what: "MQTT brokers and phone apps over the network, SwiftNIO"))
        #endif
        return SourceCatalog(providers: providers, missing: missing)
    }()
}
