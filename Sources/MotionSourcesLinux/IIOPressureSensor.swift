import MotionSources

/// An IIO pressure sensor (bmp280, ms5611, lps22hb, hid-sensor-press, …) read through sysfs, as a
/// ``BarometerSource`` for `CMAltimeter`.
///
/// The kernel's IIO ABI gives pressure in kPa: either processed (`in_pressure_input`) or raw with a
/// scale and optional offset (`(in_pressure_raw + in_pressure_offset) × in_pressure_scale`). Indexed
/// channels (`in_pressure0_…`) are accepted too. Each ``readPressure(at:)`` reads the attribute once
/// (a conversion in the driver; fine at the 25 Hz `CMAltimeter` uses).
///
/// Most pressure chips also measure their temperature (to compensate pressure): when the device has
/// `in_temp_input`, or `in_temp_raw` with optional `in_temp_scale` and `in_temp_offset`, in milli °C
/// after scale and offset (the kernel's `sysfs-bus-iio` ABI), ``readTemperature(at:)`` reports it in °C.
///
/// ## Threading
/// Immutable apart from the file system; ``readPressure(at:)`` may be called from any thread.
package final class IIOPressureSensor: BarometerSource {
    /// `iio:NAME` (the device's `name` attribute).
    package let identifier: String
    /// The device's name and directory.
    package let name: String
    /// Always `nil`: readings follow the real clock.
    package let virtualStartTime: Double? = nil
    /// The device's sysfs directory.
    package let directory: String
    /// The attribute read for each sample.
    package let valuePath: String
    /// The factor from the attribute to kPa (1 for `…_input`).
    package let scale: Double
    /// The offset added to a raw value before scaling (0 for `…_input`).
    package let offset: Double
    /// The temperature attribute, its factor to milli °C and its offset, or `nil` when the device
    /// reports no (usable) temperature.
    package let temperatureChannel: (path: String, scale: Double, offset: Double)?
    let fileSystem: any LinuxFileSystem

    /// Describes the pressure channel of the IIO device in `directory`, or returns `nil` when it has
    /// none. Throws when the channel exists but its scale or offset cannot be read as a number.
    package init?(directory: String, fileSystem: any LinuxFileSystem = POSIXFileSystem()) throws(SourceError) {
        self.directory = directory
        self.fileSystem = fileSystem
        let entries = Set((try? fileSystem.contents(ofDirectory: directory)) ?? [])
        let device = fileSystem.attribute(joinPath(directory, "name")) ?? (directory.split(separator: "/").last.map(String.init) ?? directory)
        identifier = "iio:\(device)"
        name = "\(device) (\(directory))"
        var chosen: (String, Double, Double)?
        for prefix in ["in_pressure", "in_pressure0"] where chosen == nil {
            if entries.contains(prefix + "_input") {
                chosen = (joinPath(directory, prefix + "_input"), 1, 0)
            } else if entries.contains(prefix + "_raw") {
                var scale = 1.0, offset = 0.0
                if entries.contains(prefix + "_scale") {
                    let path = joinPath(directory, prefix + "_scale")
                    guard let text = fileSystem.attribute(path), let v = SysfsValue.double(text), v.isFinite, v > 0 else {
                        throw SourceError(.malformedInput, "pressure scale is not a positive number", path: path)
                    }
                    scale = v
                }
                if entries.contains(prefix + "_offset") {
                    let path = joinPath(directory, prefix + "_offset")
                    guard let text = fileSystem.attribute(path), let v = SysfsValue.double(text), v.isFinite else {
                        throw SourceError(.malformedInput, "pressure offset is not a number", path: path)
                    }
                    offset = v
                }
                chosen = (joinPath(directory, prefix + "_raw"), scale, offset)
            }
        }
        guard let chosen else { return nil }
        (valuePath, scale, offset) = chosen
        temperatureChannel = Self.temperatureChannel(directory: directory, entries: entries, fileSystem: fileSystem)
    }

    /// `in_temp_input` (scale 1), or `in_temp_raw` with its scale and offset when they are numbers;
    /// `nil` otherwise (a temperature channel that cannot be used does not make the pressure unusable).
    private static func temperatureChannel(directory: String, entries: Set<String>, fileSystem: any LinuxFileSystem)
        -> (path: String, scale: Double, offset: Double)? {
        if entries.contains("in_temp_input") { return (joinPath(directory, "in_temp_input"), 1, 0) }
        guard entries.contains("in_temp_raw") else { return nil }
        var scale = 1.0, offset = 0.0
        if entries.contains("in_temp_scale") {
            guard let text = fileSystem.attribute(joinPath(directory, "in_temp_scale")),
                  let v = SysfsValue.double(text), v.isFinite, v > 0 else { return nil }
            scale = v
        }
        if entries.contains("in_temp_offset") {
            guard let text = fileSystem.attribute(joinPath(directory, "in_temp_offset")),
                  let v = SysfsValue.double(text), v.isFinite else { return nil }
            offset = v
        }
        return (joinPath(directory, "in_temp_raw"), scale, offset)
    }

    /// The chip's temperature in °C now (`timestamp` is ignored), from its IIO temperature channel
    /// (milli °C after scale and offset); `nil` when it has none or the read fails or is not a number.
    package func readTemperature(at timestamp: Double) -> Double? {
        guard let channel = temperatureChannel,
              let text = try? fileSystem.readText(channel.path),
              let v = SysfsValue.double(SysfsValue.trimmed(text)) else { return nil }
        let celsius = (v + channel.offset) * channel.scale / 1000
        return celsius.isFinite ? celsius : nil
    }

    /// The pressure in kPa now (`timestamp` is ignored: the device is read at once).
    /// - Throws: ``SourceError`` `.deviceRemoved`, `.permissionDenied`, `.io` or `.malformedInput`.
    package func readPressure(at timestamp: Double) throws(SourceError) -> Double {
        let text: String
        do {
            text = try fileSystem.readText(valuePath)
        } catch {
            throw error.sourceError("cannot read the pressure", permissionFix: LinuxIOError.sysfsPermissionFix)
        }
        guard let v = SysfsValue.double(SysfsValue.trimmed(text)), v.isFinite else {
            throw SourceError(.malformedInput, "'\(SysfsValue.trimmed(text))' is not a pressure", path: valuePath)
        }
        return (v + offset) * scale
    }
}

/// Finds IIO pressure sensors under a sysfs root.
package enum LinuxBarometers {
    /// Every IIO device with a pressure channel under `sysfsRoot` (`bus/iio/devices/iio:deviceN`), in
    /// device order, with the devices whose pressure channel is unusable and why.
    package static func scan(sysfsRoot: String, fileSystem: any LinuxFileSystem = POSIXFileSystem())
        -> (sensors: [IIOPressureSensor], skipped: [(id: String, error: SourceError)]) {
        let base = joinPath(sysfsRoot, "bus/iio/devices")
        guard let names = try? fileSystem.contents(ofDirectory: base) else { return ([], []) }
        var sensors: [IIOPressureSensor] = []
        var skipped: [(String, SourceError)] = []
        for id in names.filter({ $0.hasPrefix("iio:device") }).sorted(by: { IIODiscovery.numericSuffix($0) < IIODiscovery.numericSuffix($1) }) {
            do {
                if let s = try IIOPressureSensor(directory: joinPath(base, id), fileSystem: fileSystem) { sensors.append(s) }
            } catch {
                skipped.append((id, error))
            }
        }
        return (sensors, skipped)
    }

    /// The first pressure sensor, or the one whose `name` attribute is `name`; `nil` when none.
    package static func first(sysfsRoot: String, name: String?, fileSystem: any LinuxFileSystem = POSIXFileSystem()) -> IIOPressureSensor? {
        scan(sysfsRoot: sysfsRoot, fileSystem: fileSystem).sensors.first { name == nil || $0.identifier == "iio:\(name ?? "")" }
    }
}
