import DocRoutePlatform
import DocRouteProtocol
import Foundation
import GRDB

extension DeliveryLedger {
    /// Counts for `status` and metrics.
    package struct Statistics: Sendable, Hashable {
        /// Deliveries per handler and state.
        package var counts: [String: [LedgerRecord.State: Int]]
        /// Deliveries committed since local midnight, per handler.
        package var deliveredTodayByHandler: [String: Int]

        /// Deliveries committed since local midnight, all handlers.
        package var deliveredToday: Int { deliveredTodayByHandler.values.reduce(0, +) }

        /// How many deliveries of `bundleIdentifier` are in `state`.
        package func count(_ bundleIdentifier: String, _ state: LedgerRecord.State) -> Int {
            counts[bundleIdentifier]?[state] ?? 0
        }
    }

    /// Counts per handler and state, and what was delivered today (since the local midnight
    /// before `now`).
    package func stats(now: Date = Date()) throws -> Statistics {
        let midnight = UTCTimestamp(LocalDay.start(of: now)).ledgerText
        return try read("count deliveries") { db in
            var counts: [String: [LedgerRecord.State: Int]] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT bundleIdentifier, state, COUNT(*) FROM delivery GROUP BY bundleIdentifier, state")
            while let row = try rows.next() {
                let bundleIdentifier: String = row[0]
                let stateText: String = row[1]
                guard let state = LedgerRecord.State(rawValue: stateText) else { continue }
                counts[bundleIdentifier, default: [:]][state] = row[2]
            }
            var today: [String: Int] = [:]
            let todayRows = try Row.fetchCursor(db, sql: """
                SELECT bundleIdentifier, COUNT(*) FROM delivery WHERE committedAt >= ? GROUP BY bundleIdentifier
                """, arguments: [midnight])
            while let row = try todayRows.next() {
                today[row[0]] = row[1]
            }
            return Statistics(counts: counts, deliveredTodayByHandler: today)
        }
    }
}
