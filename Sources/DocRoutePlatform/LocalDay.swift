import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the host's days begin, in its own time zone (`TZ`, else `/etc/localtime`), through the
/// C library: the days `date`, `journalctl --since today` and `status`'s `deliveredToday` agree on.
///
/// Why not `Calendar.current`: on Linux it loads ICU's calendar, locale and time-zone data, which
/// leaves 5.5 MiB of pages resident in the static daemon (measured with a static probe, see
/// docs/BENCHMARKS.md, "Memory at 100,000 files") for one question asked once a day.
package enum LocalDay {
    /// The first moment of the local day `date` falls in: midnight, or the first minute after it
    /// where a clock change skips midnight.
    package static func start(of date: Date) -> Date {
        start(of: date, daysLater: 0)
    }

    /// The first moment of the local day after the one `date` falls in: 24 hours after its start,
    /// or 23 or 25 on a clock change.
    package static func startOfNextDay(after date: Date) -> Date {
        start(of: date, daysLater: 1)
    }

    static func start(of date: Date, daysLater: Int32) -> Date {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var fields = tm()
        guard localtime_r(&seconds, &fields) != nil else { return utcDayStart(of: date, daysLater: daysLater) }
        fields.tm_mday += daysLater
        (fields.tm_hour, fields.tm_min, fields.tm_sec) = (0, 0, 0)
        // Let mktime decide whether daylight saving time is in effect at that midnight.
        fields.tm_isdst = -1
        let midnight = mktime(&fields)
        guard midnight != -1 else { return utcDayStart(of: date, daysLater: daysLater) }
        return Date(timeIntervalSince1970: TimeInterval(midnight))
    }

    /// Whole UTC days, for a date out of the C library's range: all that is left to say.
    static func utcDayStart(of date: Date, daysLater: Int32) -> Date {
        let day = (date.timeIntervalSince1970 / 86_400).rounded(.down) + Double(daysLater)
        return Date(timeIntervalSince1970: day * 86_400)
    }
}
