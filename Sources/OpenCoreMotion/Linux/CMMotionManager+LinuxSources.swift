import MotionSources

extension CMMotionManager {
    /// A source from a spec, with the roots Linux hardware is looked for under (beyond Apple):
    /// `iio`, `iio:NAME`, `evdev`, `evdev:/dev/input/eventN`, `i2c`, `i2c:/dev/i2c-N`, `i2c:/dev/i2c-N:0xAA`
    /// go to `LinuxSensorDiscovery` (MotionSourcesLinux, trait `LinuxHardware`); every
    /// other spec as ``source(named:)`` takes it.
    ///
    /// - Parameters:
    ///   - spec: the spec.
    ///   - sysfsRoot: sysfs root; `nil` uses `COREMOTION_SYSFS_ROOT`, else `/sys`.
    ///   - devRoot: device root; `nil` uses `COREMOTION_DEV_ROOT`, else `/dev`.
    /// - Throws: `SourceError` as ``source(named:)``; without the `LinuxHardware` trait, `.unavailable`
    ///   naming the trait for the Linux specs.
    public static func linuxSource(named spec: String, sysfsRoot: String? = nil, devRoot: String? = nil) throws(SourceError) -> any SensorSource {
        try SourceSelection.catalog.source(named: spec, roots: SourceRoots(sysfsRoot: sysfsRoot, devRoot: devRoot))
    }

    /// The first motion hardware found under the roots (IIO first, then evdev), or `nil` (beyond Apple).
    /// Always `nil` when OpenCoreMotion is built without its `LinuxHardware` trait.
    public static func firstLinuxSource(sysfsRoot: String? = nil, devRoot: String? = nil) -> (any SensorSource)? {
        SourceSelection.catalog.firstSource(roots: SourceRoots(sysfsRoot: sysfsRoot, devRoot: devRoot))
    }
}
