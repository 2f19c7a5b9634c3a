import DocRoutePlatform
import DocRouteProtocol
import Foundation
import GRDB

extension DeliveryLedger {
    /// Counts per handler and state, and what was delivered today (since the local midnight
    /// before `now`).
    package func stats(now: Date = Date()) throws -> LedgerStatistics {
        try read("count deliveries") { db in try Self.statistics(now: now, db) }
    }

    package func statistics(now: Date) async throws -> LedgerStatistics {
        try await readAsync("count deliveries") { db in try Self.statistics(now: now, db) }
    }

    static func statistics(now: Date, _ db: Database) throws -> LedgerStatistics {
        let midnight = UTCTimestamp(LocalDay.start(of: now)).ledgerText
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
        return LedgerStatistics(counts: counts, deliveredTodayByHandler: today)
    }
}
