#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kernel's clocks, read with their nanoseconds (`clock_gettime(2)`).
package enum SystemClock {
    /// `CLOCK_MONOTONIC`: the clock systemd compares `MONOTONIC_USEC=` with, which neither jumps
    /// with the wall clock nor counts time suspended.
    case monotonic
    /// `CLOCK_REALTIME`, the wall clock: the time since 1970, the clock file times are stamped
    /// with, so compared with a file's `st_ctim` it says how long ago the file changed.
    case realTime

    /// The clock's reading. Both clocks always exist on Linux and the arguments are always valid,
    /// so the call cannot fail.
    package func now() -> Duration {
        var now = timespec()
        _ = clock_gettime(self == .monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}
