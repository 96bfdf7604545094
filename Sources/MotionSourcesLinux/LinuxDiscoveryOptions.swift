#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// Where and how the Linux sources look for sensors.
///
/// The defaults are the real system (`/sys`, `/dev`, udev's database and hwdb). With another
/// ``sysfsRoot`` (a test tree or a copy of a device's sysfs), udev's files are looked for beside it:
/// `<sysfsRoot>/../run/udev/data` and `<sysfsRoot>/../{lib,etc}/udev/hwdb.d`.
package struct LinuxDiscoveryOptions: Sendable {
    /// The sysfs mount point. Default `/sys`; `--sysfs-root` / `COREMOTION_SYSFS_ROOT` override it.
    package var sysfsRoot: String
    /// The device directory. Default `/dev`; `--dev-root` / `COREMOTION_DEV_ROOT` override it.
    package var devRoot: String
    /// udev's runtime database (`/run/udev/data`), read for `ACCEL_MOUNT_MATRIX`.
    package var udevDataRoot: String
    /// Directories searched for `*sensor*.hwdb` files (text form).
    package var hwdbDirectories: [String]
    /// A hwdb to use instead of loading one from ``hwdbDirectories``.
    package var hwdb: SensorHwdb?
    /// Per-device mount matrices that win over everything else, keyed by IIO device id
    /// (`iio:device0`), `name` or `label`, or by evdev node path or name. Also read from
    /// `COREMOTION_MOUNT_MATRIX` as `KEY=a,b,c;d,e,f;g,h,i`, several separated by `|`. An override is
    /// a rotation from the chip's axes to the device's, as the kernel's `mount_matrix`: the driver's
    /// sign rule still applies (see ``IIOUnits``, ``EvdevAxisMap``).
    package var mountMatrixOverrides: [String: MountMatrix]
    /// Prefer the buffer (`/dev/iio:deviceN`) over polling sysfs. Default `true`.
    package var preferBuffered: Bool
    /// The file system to use. Default the real one.
    package var fileSystem: any LinuxFileSystem
    /// Opens evdev nodes; `nil` for the real ``POSIXEvdevOpener``. Tests pass twins.
    package var evdevOpener: (any EvdevOpener)?
    /// Opens I2C buses (`/dev/i2c-N`); `nil` for the real ``POSIXI2CBusOpener``. Tests pass twins.
    package var i2cOpener: (any I2CBusOpener)?
    /// The clock the polling sources (sysfs polling of ``IIOSource``, ``I2CSource``) pace their reads
    /// on and stamp their samples with: seconds since boot. Default ``MonotonicSourceClock/shared``
    /// (`CLOCK_MONOTONIC`); tests pass a ``ManualClock``. A buffer's and an evdev node's samples keep
    /// the kernel's own stamps.
    package var clock: any SourceClock = MonotonicSourceClock.shared

    /// Creates options; with default arguments, the real system.
    package init(sysfsRoot: String = "/sys", devRoot: String = "/dev", udevDataRoot: String? = nil,
                hwdbDirectories: [String]? = nil, hwdb: SensorHwdb? = nil,
                mountMatrixOverrides: [String: MountMatrix] = [:], preferBuffered: Bool = true,
                fileSystem: any LinuxFileSystem = POSIXFileSystem()) {
        self.sysfsRoot = sysfsRoot
        self.devRoot = devRoot
        let real = sysfsRoot == "/sys" || sysfsRoot == "/sys/"
        let base = real ? "" : Self.parent(of: sysfsRoot)
        self.udevDataRoot = udevDataRoot ?? (real ? "/run/udev/data" : base + "/run/udev/data")
        self.hwdbDirectories = hwdbDirectories
            ?? (real ? SensorHwdb.defaultSearchDirectories : [base + "/lib/udev/hwdb.d", base + "/etc/udev/hwdb.d"])
        self.hwdb = hwdb
        self.mountMatrixOverrides = mountMatrixOverrides
        self.preferBuffered = preferBuffered
        self.fileSystem = fileSystem
    }

    /// Options from the environment: `COREMOTION_SYSFS_ROOT`, `COREMOTION_DEV_ROOT` and
    /// `COREMOTION_MOUNT_MATRIX`, each used only when the matching argument is `nil`.
    package static func fromEnvironment(sysfsRoot: String? = nil, devRoot: String? = nil) -> LinuxDiscoveryOptions {
        let env = { (k: String) -> String? in getenv(k).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        var o = LinuxDiscoveryOptions(sysfsRoot: sysfsRoot ?? env("COREMOTION_SYSFS_ROOT") ?? "/sys",
                                      devRoot: devRoot ?? env("COREMOTION_DEV_ROOT") ?? "/dev")
        if let spec = env("COREMOTION_MOUNT_MATRIX") { o.mountMatrixOverrides = parseOverrides(spec) }
        return o
    }

    /// Parses `KEY=matrix|KEY=matrix`; malformed entries are dropped.
    package static func parseOverrides(_ spec: String) -> [String: MountMatrix] {
        var out: [String: MountMatrix] = [:]
        for part in spec.split(separator: "|") {
            // The key may itself contain ':' (iio:device0) but never '='.
            guard let eq = part.firstIndex(of: "=") else { continue }
            let key = SysfsValue.trimmed(String(part[..<eq]))
            if let m = MountMatrix(parsing: String(part[part.index(after: eq)...])), !key.isEmpty { out[key] = m }
        }
        return out
    }

    static func parent(of path: String) -> String {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        guard let slash = p.lastIndex(of: "/") else { return "." }
        let r = String(p[..<slash])
        return r.isEmpty ? "" : r
    }
}
