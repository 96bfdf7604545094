#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// Clocks, in nanoseconds.
package enum LinuxClock {
    /// `CLOCK_MONOTONIC` in ns: the base of ``MotionSources/RawSample/timestamp``.
    package static func monotonicNs() -> Int64 { read(CLOCK_MONOTONIC) }
    /// `CLOCK_REALTIME` in ns.
    package static func realtimeNs() -> Int64 { read(CLOCK_REALTIME) }
    /// `CLOCK_MONOTONIC` in seconds.
    package static func monotonic() -> Double { Double(monotonicNs()) / 1e9 }

    /// ns to add to a timestamp of the IIO clock `name` (`current_timestamp_clock`) to get
    /// `CLOCK_MONOTONIC`: 0 for `monotonic` and `monotonic_raw`, `monotonic − realtime` for
    /// `realtime` (read now, so it follows clock steps), likewise for `boottime` and `tai`.
    package static func offsetToMonotonic(from name: String) -> Int64 {
        let id: clockid_t
        switch name {
        case "monotonic", "monotonic_raw", "monotonic_coarse": return 0
        case "realtime", "realtime_coarse": id = CLOCK_REALTIME
        case "boottime": id = CLOCK_BOOTTIME
        case "tai": id = CLOCK_TAI
        default: id = CLOCK_REALTIME
        }
        // Bracket the other clock between two monotonic reads to halve the error.
        let a = read(CLOCK_MONOTONIC)
        let b = read(id)
        let c = read(CLOCK_MONOTONIC)
        return (a / 2 + c / 2) - b
    }

    private static func read(_ id: clockid_t) -> Int64 {
        var ts = timespec()
        clock_gettime(id, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
