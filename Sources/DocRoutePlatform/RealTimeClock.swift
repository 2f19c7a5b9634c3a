#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The wall clock (`CLOCK_REALTIME`) with the kernel's nanoseconds, the clock file times are
/// stamped with: compared with a file's `st_ctim`, it says how long ago the file changed.
package enum RealTimeClock {
    /// The time since 1970 (`clock_gettime(2)`). `CLOCK_REALTIME` always exists and the argument is
    /// always valid, so the call cannot fail.
    package static func sinceEpoch() -> Duration {
        var now = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}
