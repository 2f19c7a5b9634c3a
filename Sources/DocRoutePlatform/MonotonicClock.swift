#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `CLOCK_MONOTONIC`: the clock systemd compares `MONOTONIC_USEC=` with, which neither jumps with
/// the wall clock nor counts time suspended.
package enum MonotonicClock {
    /// The clock's reading (`clock_gettime(2)`). `CLOCK_MONOTONIC` always exists on Linux and the
    /// argument is always valid, so the call cannot fail.
    package static func now() -> Duration {
        var now = timespec()
        _ = clock_gettime(CLOCK_MONOTONIC, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}
