import ArgumentParser
import Foundation

/// `--sysfs-root DIR` and `--dev-root DIR`, for any command that finds Linux sensors.
///
/// Without the options, the environment variables `COREMOTION_SYSFS_ROOT` and
/// `COREMOTION_DEV_ROOT` apply, else `/sys` and `/dev`.
package struct LinuxRootOptions: ParsableArguments {
    /// Where sysfs is mounted (a copy or a test tree, for debugging).
    @Option(name: .customLong("sysfs-root"), help: ArgumentHelp("Read sensors from this sysfs tree instead of /sys (env COREMOTION_SYSFS_ROOT).", valueName: "DIR"))
    package var sysfsRootOption: String?

    /// Where the device nodes are.
    @Option(name: .customLong("dev-root"), help: ArgumentHelp("Open device nodes under this directory instead of /dev (env COREMOTION_DEV_ROOT).", valueName: "DIR"))
    package var devRootOption: String?

    package init() {}

    /// The sysfs root in force: the option, else `COREMOTION_SYSFS_ROOT`, else `/sys`.
    package var sysfsRoot: String {
        sysfsRootOption ?? ProcessInfo.processInfo.environment["COREMOTION_SYSFS_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys"
    }

    /// The device root in force: the option, else `COREMOTION_DEV_ROOT`, else `/dev`.
    package var devRoot: String {
        devRootOption ?? ProcessInfo.processInfo.environment["COREMOTION_DEV_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/dev"
    }
}
