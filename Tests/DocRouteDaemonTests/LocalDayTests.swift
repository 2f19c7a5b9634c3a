import DocRoutePlatform
import Foundation
import Testing

/// `deliveredToday` counts from the host's local midnight, found through the C library instead of
/// Foundation's ICU calendar: both must name the same days, clock changes included, in whatever
/// zone the tests run in (`TZ`, else `/etc/localtime`).
@Suite struct LocalDayTests {
    @Test func daysStartWhereTheCurrentCalendarSaysTheyDo() {
        let calendar = Calendar.current
        // Every 61 minutes over two years: each hour of the day, both clock changes of each year.
        let first = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01 00:00 UTC
        for step in 0..<(2 * 365 * 24 * 60 / 61) {
            let date = first.addingTimeInterval(TimeInterval(step * 61 * 60))
            let start = calendar.startOfDay(for: date)
            #expect(LocalDay.start(of: date) == start, "\(date) in \(calendar.timeZone.identifier)")
            let next = calendar.date(byAdding: .day, value: 1, to: start).map { calendar.startOfDay(for: $0) }
            #expect(LocalDay.startOfNextDay(after: date) == next, "\(date) in \(calendar.timeZone.identifier)")
        }
    }

    @Test func aDayStartsAtOrBeforeEachMomentOfItAndEndsAfter() {
        let now = Date()
        let start = LocalDay.start(of: now), next = LocalDay.startOfNextDay(after: now)
        #expect(start <= now && now < next)
        #expect((23 * 3600...25 * 3600).contains(next.timeIntervalSince(start)))
        #expect(LocalDay.start(of: next) == next, "the next day's first moment starts a day")
    }
}
