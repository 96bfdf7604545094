#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension MonotonicClock {
    /// Unix time in seconds at which ``now()`` read 0 (this machine's boot): `unix time = timestamp +
    /// unixTimeAtBoot()` for any timestamp in seconds since boot. The one place the package converts
    /// between the two clocks.
    ///
    /// Read now from `CLOCK_REALTIME` and `CLOCK_MONOTONIC` (the clocks behind `Date()` and
    /// `ProcessInfo.processInfo.systemUptime` on Linux), so it follows wall-clock steps (NTP, the
    /// user setting the time): read it once per recording or connection, not per sample.
    /// Thread-safe, no allocation.
    package static func unixTimeAtBoot() -> Double {
        var wall = timespec(), monotonic = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let seconds = Double(wall.tv_sec - monotonic.tv_sec)
        return seconds + Double(wall.tv_nsec - monotonic.tv_nsec) * 1e-9
    }
}
