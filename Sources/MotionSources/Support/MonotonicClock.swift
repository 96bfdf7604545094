#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Seconds since boot on `CLOCK_MONOTONIC`: Core Motion's time base for every `timestamp`.
///
/// It is the clock behind Foundation's `ProcessInfo.processInfo.systemUptime` on Linux. It does not
/// jump when the wall clock is set and does not advance while the system is suspended.
public enum MonotonicClock {
    /// The current time in seconds since boot.
    @inlinable
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
