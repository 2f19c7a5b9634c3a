import DocRouteProtocol
import Foundation
import Testing

/// The ledger's dates and the RFC 3339 times in `status` are written by arithmetic, not by
/// Foundation's formatters: the text must be theirs exactly, or ledgers written before (by GRDB's
/// `DateFormatter`) and SQLite's date comparisons would no longer agree.
@Suite struct UTCTimestampTests {
    /// GRDB's storage format, as GRDB builds its formatter.
    static let ledgerFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        return formatter
    }()

    /// Random moments from 1601 to 2400 at whole milliseconds plus 0.4 ms (away from the float
    /// boundaries where two correct truncations may differ), and the edges of months and eras.
    static func moments(_ count: Int) -> [Date] {
        var generator = SystemRandomNumberGenerator()
        var dates = (0..<count).map { _ in
            Date(timeIntervalSince1970: TimeInterval(Int64.random(in: -11_644_473_600_000...13_569_465_600_000, using: &generator)) / 1000 + 0.0004)
        }
        for text in ["1970-01-01 00:00:00.000", "1969-12-31 23:59:59.999", "2000-02-29 12:00:00.000", "2100-03-01 00:00:00.000",
                     "2024-12-31 23:59:59.500", "1900-02-28 23:59:59.000", "2026-11-24 09:30:00.125"] {
            if let date = ledgerFormatter.date(from: text) { dates.append(date.addingTimeInterval(0.0004)) }
        }
        return dates
    }

    @Test func ledgerTextIsGRDBsFormatterText() {
        for date in Self.moments(3_000) {
            #expect(UTCTimestamp(date).ledgerText == Self.ledgerFormatter.string(from: date), "\(date.timeIntervalSince1970)")
        }
    }

    @Test func ledgerTextReadsBackToTheSameMillisecond() throws {
        for date in Self.moments(3_000) {
            let text = UTCTimestamp(date).ledgerText
            let read = try #require(UTCTimestamp(ledgerText: text), "\(text)")
            #expect(read.ledgerText == text)
            #expect(abs(read.date.timeIntervalSince(date)) < 0.001, "\(text)")
            #expect(read.date == Self.ledgerFormatter.date(from: text), "\(text)")
        }
        #expect(UTCTimestamp(ledgerText: "2026-11-24 09:30:00")?.ledgerText == "2026-11-24 09:30:00.000")
    }

    @Test func malformedOrImpossibleLedgerTextIsRefused() {
        for text in ["", "2026-11-24", "2026-11-24T09:30:00.000", "2026-13-01 00:00:00.000", "2026-02-29 00:00:00.000",
                     "2026-11-31 00:00:00.000", "2026-11-24 24:00:00.000", "2026-11-24 09:60:00.000", "2026-11-24 09:30:60.000",
                     "2026-11-24 09:30:00.12", "2026-11-24 09:30:00,125", "+026-11-24 09:30:00.125", "２026-11-24 09:30:00.125"] {
            #expect(UTCTimestamp(ledgerText: text) == nil, "\(text)")
        }
        #expect(UTCTimestamp(ledgerText: "2024-02-29 00:00:00.000") != nil)
    }

    @Test func rfc3339IsISO8601DateFormattersText() {
        let formatter = ISO8601DateFormatter()
        for date in Self.moments(2_000) where date.timeIntervalSince1970 >= -62_135_596_800 {
            #expect(UTCTimestamp(date).rfc3339 == formatter.string(from: date), "\(date.timeIntervalSince1970)")
        }
        #expect(UTCTimestamp(Date(timeIntervalSince1970: 1_795_512_600)).rfc3339 == "2026-11-24T09:30:00Z")
    }
}
