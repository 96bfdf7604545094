import Foundation
import Logging
import MotionRecordingFormats
import MotionSources

/// Turns source specifications such as `sim:handheld` into sources, and picks the default one.
enum SourceSelection {
    /// The source families of this build (``SourceCatalog/standard``).
    static let catalog = SourceCatalog.standard

    /// The process's default source: `COREMOTION_SOURCE` when set, else the first motion hardware
    /// found (IIO, then evdev, under `COREMOTION_SYSFS_ROOT` and `COREMOTION_DEV_ROOT` when set),
    /// else `nil`. Resolved once, on first use.
    static let defaultSource: (any SensorSource)? = {
        let env = ProcessInfo.processInfo.environment
        if let spec = env["COREMOTION_SOURCE"], !spec.isEmpty {
            do {
                return try CMMotionManager.source(named: spec)
            } catch {
                Logger(label: "OpenCoreMotion").error("COREMOTION_SOURCE=\(spec): \(String(describing: error))")
                return nil
            }
        }
        return CMMotionManager.firstLinuxSource()
    }()
}

extension CMMotionManager {
    /// The source a specification names (beyond Apple). Each call creates a new source.
    ///
    /// | spec | source | package trait |
    /// |---|---|---|
    /// | `sim`, `sim:SCENARIO`, `sim:SCENARIO:SEED` | the simulated device in real time; scenarios `still`, `handheld` (default), `rotate`, `walk`, `shake`; seed default 1 | always |
    /// | `replay:PATH` | any recording MotionRecordingFormats reads (file, folder or zip), merged by timestamp, played in real time | always |
    /// | `i2c`, `i2c:/dev/i2c-N`, `i2c:/dev/i2c-N:0xAA` | an MPU-6050/6500/9250, LSM6DSx, LSM9DS1 or BMI160 on an I2C bus, driven from user space (a Raspberry Pi's IMU without a kernel driver), under `COREMOTION_DEV_ROOT` when set | `LinuxHardware` |
    /// | `iio`, `iio:NAME`, `evdev`, `evdev:/dev/input/eventN` | Linux hardware, under `COREMOTION_SYSFS_ROOT` / `COREMOTION_DEV_ROOT` when set (see ``linuxSource(named:sysfsRoot:devRoot:)`` for other roots) | `LinuxHardware` |
    /// | `mqtt://[USER:PASS@]HOST:PORT/TOPIC_FILTER[?device=ID&silence=S&convention=apple]` (also `mqtts`, `mqtt+ws`, `mqtt+wss`) | an MQTT broker carrying Sensor Logger push messages (see `MQTTSensorSource`) | `NetworkSources` |
    /// | `sensorlogger://HOST:PORT`, `sensorserver://HOST:PORT`, `phyphox://HOST:PORT`, `sensorlog://HOST:PORT`, `hyperimu://HOST:PORT` | a phone app streaming over the network (see `PhoneSource`) | `NetworkSources` |
    ///
    /// The families come from the modules that implement them: a package that depends on OpenCoreMotion
    /// without a trait (`traits: []` has neither) gets an error naming the trait for that family's specs.
    /// The scheme (the text before the first `:`) is matched without regard to case.
    ///
    /// - Throws: `SourceError` `.unavailable` for an unknown spec or one whose trait is off (the message
    ///   names the trait), or the family's error for a source that cannot be opened.
    public static func source(named spec: String) throws(SourceError) -> any SensorSource {
        try SourceSelection.catalog.source(named: spec)
    }
}
