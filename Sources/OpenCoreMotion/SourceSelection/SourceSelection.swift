import Foundation
import Logging
import MotionMQTT
import MotionPhones
import MotionRecordings
import MotionSources

/// Turns source specifications such as `sim:handheld` into sources, and picks the default one.
enum SourceSelection {
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
    /// | spec | source |
    /// |---|---|
    /// | `sim`, `sim:SCENARIO`, `sim:SCENARIO:SEED` | the simulated device in real time; scenarios `still`, `handheld` (default), `rotate`, `walk`, `shake`; seed default 1 |
    /// | `replay:PATH` | any recording MotionRecordings reads (file, folder or zip), merged by timestamp, played in real time |
    /// | `mqtt://[USER:PASS@]HOST:PORT/TOPIC_FILTER[?device=ID&silence=S&convention=apple]` | an MQTT broker carrying Sensor Logger push messages (see `MQTTSensorSource`) |
    /// | `sensorlogger://HOST:PORT`, `sensorserver://HOST:PORT`, `phyphox://HOST:PORT`, `sensorlog://HOST:PORT`, `hyperimu://HOST:PORT` | a phone app streaming over the network (see `PhoneSource`) |
    /// | `i2c`, `i2c:/dev/i2c-N`, `i2c:/dev/i2c-N:0xAA` | an MPU-6050/6500/9250, LSM6DSx, LSM9DS1 or BMI160 on an I2C bus, driven from user space (a Raspberry Pi's IMU without a kernel driver), under `COREMOTION_DEV_ROOT` when set |
    /// | `iio`, `iio:NAME`, `evdev`, `evdev:/dev/input/eventN` | Linux hardware, under `COREMOTION_SYSFS_ROOT` / `COREMOTION_DEV_ROOT` when set (see ``linuxSource(named:sysfsRoot:devRoot:)`` for other roots) |
    ///
    /// - Throws: `SourceError` for an unknown spec or a source that cannot be opened.
    public static func source(named spec: String) throws(SourceError) -> any SensorSource {
        let (kind, argument) = spec.split(separator: ":", maxSplits: 1).map(String.init).splitPair
        switch kind {
        case "sim":
            guard let device = SimulatedDevice(specification: spec) else {
                let scenarios = SimulationScenario.allCases.map(\.rawValue).joined(separator: ", ")
                throw SourceError(.unavailable, "unknown simulator '\(spec)'; expected sim:SCENARIO[:SEED] with SCENARIO one of \(scenarios)")
            }
            return device
        case "replay":
            guard let path = argument, !path.isEmpty else {
                throw SourceError(.unavailable, "replay needs a file: replay:PATH")
            }
            return try ReplaySource(path: path)
        case "iio", "evdev", "i2c":
            return try linuxSource(named: spec)
        case "mqtt", "mqtts", "mqtt+ws", "mqtt+wss":
            return try MQTTSensorSource(spec: spec)
        case "sensorlogger", "sensorserver", "phyphox", "sensorlog", "hyperimu":
            return try PhoneSource.shared(spec: spec)
        default:
            throw SourceError(.unavailable, "unknown source '\(spec)'; expected sim[:SCENARIO], replay:PATH, iio[:NAME], evdev[:PATH], i2c[:/dev/i2c-N[:0xAA]], mqtt://HOST:PORT/TOPIC or a phone: sensorlogger://, sensorserver://, phyphox://, sensorlog://, hyperimu://HOST:PORT")
        }
    }
}

extension Array where Element == String {
    fileprivate var splitPair: (String, String?) {
        (first ?? "", count > 1 ? self[1] : nil)
    }
}
