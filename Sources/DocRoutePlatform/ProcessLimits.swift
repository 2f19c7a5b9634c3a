import CDocRouteShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Limits of the whole process, set once at start.
package enum ProcessLimits {
    /// Raises the soft limit on open descriptors to the hard limit (at most `ceiling`) and
    /// returns the limit now in effect.
    ///
    /// The daemon holds a batch of sources open while the batch before it commits, plus one
    /// descriptor per connection; the customary soft limit of 1,024 exists for `select(2)`, which
    /// docrouted does not use, and systemd leaves raising it to the program.
    @discardableResult
    package static func raiseDescriptorLimit(ceiling: UInt = 65_536) -> UInt {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let wanted = min(UInt(limit.rlim_max), ceiling)
        if UInt(limit.rlim_cur) < wanted {
            var raised = limit
            raised.rlim_cur = rlim_t(wanted)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return wanted }
        }
        return UInt(limit.rlim_cur)
    }

    /// Two malloc arenas at most. glibc gives each thread that allocates an arena of its own (up
    /// to eight per core), and each keeps what it freed: with the delivery, copy, ledger and
    /// event-loop threads, megabytes stay resident after a burst for nothing. Call it first thing.
    package static func limitMallocArenas(_ count: Int32 = 2) {
        _ = docroute_limit_malloc_arenas(count)
    }
}
