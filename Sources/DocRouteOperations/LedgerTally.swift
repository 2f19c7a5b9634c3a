import DocRouteLedger
import DocRoutePlatform
import Foundation

/// The ledger's counts per handler and state, and what each handler got today, kept in memory:
/// read from the ledger once at start, then moved by the daemon's own commits and
/// acknowledgements, so `status` costs no ledger scan.
///
/// Pure: the caller passes the time.
package struct LedgerTally: Sendable {
    /// Deliveries per handler (as its manifest spells it) and state.
    private(set) var counts: [String: [LedgerRecord.State: Int]]
    /// Committed since `day` began, per handler.
    private var today: [String: Int]
    /// The start of the day `today` counts.
    private var day: Date
    /// The start of the day after it: a commit before it is on the same day, with no calendar
    /// arithmetic (`startOfDay` took 3 µs a file, under the activity lock, in a burst).
    private var nextDay: Date
    let days: Days

    /// Where days begin: the host's local midnight (``local``), or a calendar's (tests).
    package struct Days: Sendable {
        /// The first moment of the day a date falls in.
        let start: @Sendable (Date) -> Date
        /// The first moment of the day after the one a date falls in.
        let startOfNext: @Sendable (Date) -> Date

        /// The host's time zone, through the C library (``LocalDay``): no ICU in the daemon.
        package static let local = Days(start: LocalDay.start(of:), startOfNext: LocalDay.startOfNextDay(after:))

        /// `calendar`'s days, in its time zone.
        package static func calendar(_ calendar: Calendar) -> Days {
            Days(start: { calendar.startOfDay(for: $0) }, startOfNext: { date in
                let start = calendar.startOfDay(for: date)
                return calendar.date(byAdding: .day, value: 1, to: start).map { calendar.startOfDay(for: $0) } ?? start.addingTimeInterval(86_400)
            })
        }
    }

    init(statistics: LedgerStatistics?, now: Date, days: Days = .local) {
        self.counts = statistics?.counts ?? [:]
        self.today = statistics?.deliveredTodayByHandler ?? [:]
        self.day = days.start(now)
        self.nextDay = days.startOfNext(now)
        self.days = days
    }

    /// A delivery was committed for `handler` at `now`.
    mutating func committed(_ handler: String, at now: Date) {
        rollOver(now)
        counts[handler, default: [:]][.committed, default: 0] += 1
        today[handler, default: 0] += 1
    }

    /// A committed delivery was acknowledged (`handled`) or declined.
    mutating func acknowledged(_ handler: String, handled: Bool) {
        let pending = counts[handler]?[.committed] ?? 0
        counts[handler, default: [:]][.committed] = max(0, pending - 1)
        counts[handler, default: [:]][handled ? .acknowledged : .declined, default: 0] += 1
    }

    /// Committed for `handler` since local midnight.
    func deliveredToday(_ handler: String, at now: Date) -> Int {
        days.start(now) == day ? today[handler] ?? 0 : 0
    }

    /// Committed for any handler since local midnight.
    func deliveredToday(at now: Date) -> Int {
        days.start(now) == day ? today.values.reduce(0, +) : 0
    }

    private mutating func rollOver(_ now: Date) {
        guard now < day || now >= nextDay else { return }
        let start = days.start(now)
        nextDay = days.startOfNext(now)
        guard start != day else { return }
        day = start
        today = [:]
    }
}
