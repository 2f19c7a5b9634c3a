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

    /// Blocks of `bytes` (128 KiB) or more that the heap has no room for get a mapping of their
    /// own, whatever was freed before. glibc's threshold is 128 KiB to start with, but it raises it
    /// to the size of every mapped block freed, up to 32 MiB: once a delivery batch's 1 MiB copy
    /// buffer is freed, a batch's item arrays (a few hundred KiB each, for 256 documents) grow the
    /// arenas instead, between long-lived blocks, and the pages they leave stay resident, more of
    /// them the longer the burst. Measured with `docroute-bench compare` at 100,000 files: peak
    /// 52.9 MiB (20.9 anonymous) with the threshold left to glibc, 50.0 MiB (17.3 anonymous) with
    /// it fixed, and 3,106 files/s against 2,815; at 10,000 files the peak is the same (47.6 and
    /// 47.7 MiB). Call it first thing.
    package static func fixMallocMapThreshold(_ bytes: Int32 = 128 * 1024) {
        _ = docroute_fix_malloc_map_threshold(bytes)
    }
}
