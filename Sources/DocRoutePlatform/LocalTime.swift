import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A moment as the host's clock on the wall shows it, in its own time zone (`TZ`, else
/// `/etc/localtime`), through the C library, as ``LocalDay`` reads days: what an operator types
/// (`10:02`) and reads (`2026-11-26 10:02:03`) means local time, as `date` and `journalctl` show it.
package struct LocalTime: Sendable, Hashable {
    package var year: Int
    package var month: Int
    package var day: Int
    package var hour: Int
    package var minute: Int
    package var second: Int

    package init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// The local clock's reading at `date` (whole seconds, rounded down).
    package init(_ date: Date) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var fields = tm()
        if localtime_r(&seconds, &fields) == nil { gmtime_r(&seconds, &fields) }
        self.init(year: Int(fields.tm_year) + 1900, month: Int(fields.tm_mon) + 1, day: Int(fields.tm_mday),
                  hour: Int(fields.tm_hour), minute: Int(fields.tm_min), second: Int(fields.tm_sec))
    }

    /// The moment this reading stands for; nil when a field is out of range (month 13, 25:00,
    /// February 30th), since `mktime` would otherwise roll it over into another day in silence.
    package var date: Date? {
        guard (1...12).contains(month), (1...31).contains(day), (0..<24).contains(hour), (0..<60).contains(minute),
              (0..<61).contains(second), year >= 1900, year < 10_000 else { return nil }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month - 1)
        fields.tm_mday = Int32(day)
        (fields.tm_hour, fields.tm_min, fields.tm_sec) = (Int32(hour), Int32(minute), Int32(second))
        // Let mktime decide whether daylight saving time is in effect then.
        fields.tm_isdst = -1
        let seconds = mktime(&fields)
        guard seconds != -1, fields.tm_mday == Int32(day), fields.tm_mon == Int32(month - 1) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `2026-11-24T00:18:51+0000`: `date` on the local clock with its offset from UTC, as swift-log's
    /// StreamLogHandler stamps its lines (`localtime_r`, `strftime`).
    package static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `2026-11-26`.
    package var dayText: String { "\(Self.digits(year, 4))-\(Self.digits(month, 2))-\(Self.digits(day, 2))" }

    /// `10:02:03`.
    package var clockText: String { "\(Self.digits(hour, 2)):\(Self.digits(minute, 2)):\(Self.digits(second, 2))" }

    static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
