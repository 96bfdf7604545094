#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `CLOCK_MONOTONIC` in seconds: the base of sample timestamps and of
/// `ProcessInfo.processInfo.systemUptime` on Linux.
public enum MonotonicClock {
    /// Seconds since boot (`clock_gettime(CLOCK_MONOTONIC)`). Thread-safe, no allocation.
    @inlinable
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// `seconds` as a `timespec`, for absolute-deadline waits. Negative or non-finite values give 0;
    /// values beyond 10¹⁵ s (a replayed timestamp of 1e308) are clamped there rather than trapping.
    static func deadline(_ seconds: Double) -> timespec {
        guard seconds.isFinite, seconds > 0 else { return Glibc.timespec(tv_sec: 0, tv_nsec: 0) }
        let seconds = min(seconds, 1e15)
        let whole = seconds.rounded(.down)
        var nanos = Int((seconds - whole) * 1e9)
        var secs = Int(whole)
        if nanos >= 1_000_000_000 { secs += 1; nanos -= 1_000_000_000 }
        return Glibc.timespec(tv_sec: secs, tv_nsec: nanos)
    }
}
