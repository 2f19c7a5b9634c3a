import DocRoutePlatform
import Foundation

/// A time as an operator types it for `docroutectl history --since/--until`, in the host's local
/// time: `10:02` (today), `2026-11-26 10:02`, `2026-11-26`, or how long ago: `90s`, `15m`, `1h`, `2d`.
package enum HistoryTime {
    /// The forms ``parse(_:now:)`` accepts, for the message that refuses another.
    package static let acceptedForms = """
        HH:MM or HH:MM:SS (today, local time), YYYY-MM-DD HH:MM[:SS], YYYY-MM-DD (its midnight), \
        or how long ago: a number followed by s, m, h or d (90s, 15m, 1h, 2d)
        """

    /// The moment `text` stands for, or nil when it is none of the ``acceptedForms``.
    package static func parse(_ text: String, now: Date = Date()) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let ago = duration(text) { return now.addingTimeInterval(-ago) }
        let today = LocalTime(now)
        // `2026-11-26T10:02` too, as ISO 8601 writes it.
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "T" }).map(String.init)
        switch parts.count {
        case 1 where parts[0].contains("-"):
            guard let day = self.day(parts[0]) else { return nil }
            return LocalTime(year: day.0, month: day.1, day: day.2).date
        case 1:
            guard let clock = clock(parts[0]) else { return nil }
            return LocalTime(year: today.year, month: today.month, day: today.day, hour: clock.0, minute: clock.1, second: clock.2).date
        case 2:
            guard let day = self.day(parts[0]), let clock = clock(parts[1]) else { return nil }
            return LocalTime(year: day.0, month: day.1, day: day.2, hour: clock.0, minute: clock.1, second: clock.2).date
        default:
            return nil
        }
    }

    /// Seconds of `90s`, `15m`, `1h`, `2d`; nil for anything else.
    static func duration(_ text: String) -> TimeInterval? {
        guard let unit = text.last, let count = Int(text.dropLast()), count >= 0, !text.dropLast().contains("+") else { return nil }
        switch unit {
        case "s": return TimeInterval(count)
        case "m": return TimeInterval(count) * 60
        case "h": return TimeInterval(count) * 3_600
        case "d": return TimeInterval(count) * 86_400
        default: return nil
        }
    }

    /// `2026-11-26` as its three numbers.
    static func day(_ text: String) -> (Int, Int, Int)? {
        let fields = text.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].count == 4, fields[1].count == 2, fields[2].count == 2,
              fields.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let year = Int(fields[0]), let month = Int(fields[1]), let day = Int(fields[2]) else { return nil }
        return (year, month, day)
    }

    /// `10:02` or `10:02:03` as hour, minute and second.
    static func clock(_ text: String) -> (Int, Int, Int)? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3,
              fields.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let hour = Int(fields[0]), let minute = Int(fields[1]), hour < 24, minute < 60 else { return nil }
        let second = fields.count == 3 ? Int(fields[2]) ?? 60 : 0
        guard second < 60 else { return nil }
        return (hour, minute, second)
    }
}
