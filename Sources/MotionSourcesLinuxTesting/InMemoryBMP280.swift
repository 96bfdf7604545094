#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionSourcesLinux

/// A BMP280's pressure channel in an in-memory sysfs (`iio:device0`, reading 100.51234 kPa), found by the
/// barometer scan as tests of every layer need it; ``unplug()`` makes its value fail `ENODEV`.
package struct InMemoryBMP280: Sendable {
    /// The sysfs the chip lives in.
    package let fileSystem: InMemoryLinuxFileSystem
    /// The chip as the scan found it.
    package let sensor: IIOPressureSensor
    /// Its pressure value, `in_pressure_input`.
    package static let valuePath = "/sys/bus/iio/devices/iio:device0/in_pressure_input"

    /// Creates the chip and scans for it.
    /// - Throws: ``SourceError`` `.unavailable` when the scan does not find it.
    package init() throws(SourceError) {
        let fs = InMemoryLinuxFileSystem()
        fs.setFile("/sys/bus/iio/devices/iio:device0/name", "bmp280\n")
        fs.setFile(Self.valuePath, "100.512340000\n")
        guard let sensor = LinuxBarometers.scan(sysfsRoot: "/sys", fileSystem: fs).sensors.first else {
            throw SourceError(.unavailable, "the in-memory BMP280 was not found")
        }
        fileSystem = fs
        self.sensor = sensor
    }

    /// The device removed: every later read of its value fails `ENODEV`.
    package func unplug() { fileSystem.setReadError(Self.valuePath, ENODEV) }
}
