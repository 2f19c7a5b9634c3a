import Foundation

/// A moment as UTC calendar fields, by arithmetic alone: the ledger's stored dates and the
/// RFC 3339 times in `status` and quarantine notes.
///
/// Why not Foundation's formatters: `DateFormatter`, `ISO8601DateFormatter` and
/// `Date.formatted(.iso8601)` all go through ICU on Linux. Touching them maps ICU's code and
/// time-zone data into the daemon: 4 to 8 MiB of resident pages in the static build for a few
/// fixed-format UTC strings (measured with a static probe, docs/BENCHMARKS.md).
public struct UTCTimestamp: Sendable, Hashable {
    public var year: Int
    /// 1 to 12.
    public var month: Int
    /// 1 to 31.
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// 0 to 999: the fraction truncated, as `DateFormatter`'s `SSS` does.
    public var millisecond: Int

    /// The fields of `date` in UTC (proleptic Gregorian calendar).
    public init(_ date: Date) {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (days, millisecondOfDay) = Self.floorDivide(totalMilliseconds, 86_400_000)
        (year, month, day) = Self.civil(fromDays: days)
        hour = Int(millisecondOfDay / 3_600_000)
        minute = Int(millisecondOfDay / 60_000 % 60)
        second = Int(millisecondOfDay / 1000 % 60)
        millisecond = Int(millisecondOfDay % 1000)
    }

    /// The moment these fields name.
    public var date: Date {
        let days = Self.days(fromCivil: year, month, day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        return Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(millisecond) / 1000)
    }

    /// `2026-11-24T09:30:00Z`: RFC 3339 in UTC, whole seconds (what `ISO8601DateFormatter` writes).
    public var rfc3339: String {
        "\(Self.digits(year, 4))-\(Self.digits(month, 2))-\(Self.digits(day, 2))T\(Self.digits(hour, 2)):\(Self.digits(minute, 2)):\(Self.digits(second, 2))Z"
    }

    /// `2026-11-24 09:30:00.125`: how the ledger stores a date (GRDB's format, UTC, so SQLite's
    /// date functions and older ledgers read it alike).
    public var ledgerText: String {
        "\(Self.digits(year, 4))-\(Self.digits(month, 2))-\(Self.digits(day, 2)) \(Self.digits(hour, 2)):\(Self.digits(minute, 2)):\(Self.digits(second, 2)).\(Self.digits(millisecond, 3))"
    }

    /// Reads ``ledgerText`` (`yyyy-MM-dd HH:mm:ss.SSS`, the fraction optional); nil for anything
    /// else, or a field out of range.
    public init?(ledgerText text: String) {
        var utf8 = Array(text.utf8)
        guard utf8.count == 19 || utf8.count == 23 else { return nil }
        if utf8.count == 19 { utf8 += Array(".000".utf8) }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in utf8[range] {
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, " "), (13, ":"), (16, ":"), (19, ".")]
        guard separators.allSatisfy({ utf8[$0.0] == $0.1.asciiValue }),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              let millisecond = number(20..<23),
              (1...12).contains(month), (1...Self.daysIn(month, of: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second, self.millisecond) = (hour, minute, second, millisecond)
    }

    static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Days since 1970-01-01 and back, by eras of 400 years (Howard Hinnant's
    // `civil_from_days` and `days_from_civil`).
    static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        let year = Int64(month <= 2 ? year - 1 : year)
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let monthIndex = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthIndex + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
