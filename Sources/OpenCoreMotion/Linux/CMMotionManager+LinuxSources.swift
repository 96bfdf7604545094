import MotionSources
#if LinuxHardware
import MotionSourcesLinux
#endif

extension CMMotionManager {
    /// A source from a spec, Linux hardware included (beyond Apple):
    /// `iio`, `iio:NAME`, `evdev`, `evdev:/dev/input/eventN`, `i2c`, `i2c:/dev/i2c-N`, `i2c:/dev/i2c-N:0xAA`
    /// go to `LinuxSensorDiscovery` (MotionSourcesLinux); every
    /// other spec (`sim…`, `replay:PATH`) to ``source(named:)``.
    ///
    /// - Parameters:
    ///   - spec: the spec.
    ///   - sysfsRoot: sysfs root; `nil` uses `COREMOTION_SYSFS_ROOT`, else `/sys`.
    ///   - devRoot: device root; `nil` uses `COREMOTION_DEV_ROOT`, else `/dev`.
    public static func linuxSource(named spec: String, sysfsRoot: String? = nil, devRoot: String? = nil) throws(SourceError) -> any SensorSource {
        let kind = spec.split(separator: ":", maxSplits: 1).first.map(String.init) ?? spec
        if kind == "iio" || kind == "evdev" || kind == "i2c" {
            #if LinuxHardware
            return try LinuxSensorDiscovery.source(forSpec: spec, options: .fromEnvironment(sysfsRoot: sysfsRoot, devRoot: devRoot))
            #else
            throw SourceError(.unavailable, "'\(spec)': OpenCoreMotion was built without its LinuxHardware trait (IIO, evdev and I2C sources)")
            #endif
        }
        return try source(named: spec)
    }

    /// The first motion hardware found under the roots (IIO first, then evdev), or `nil` (beyond Apple).
    /// Always `nil` when OpenCoreMotion is built without its `LinuxHardware` trait.
    public static func firstLinuxSource(sysfsRoot: String? = nil, devRoot: String? = nil) -> (any SensorSource)? {
        #if LinuxHardware
        LinuxSensorDiscovery.firstAvailable(options: .fromEnvironment(sysfsRoot: sysfsRoot, devRoot: devRoot))
        #else
        nil
        #endif
    }
}
