import Foundation
import GRDB

/// Poison marks (see ``PoisonMarkLedger``) on the SQLite ledger: the `intakePoison` table.
extension DeliveryLedger {
    /// Marks `sourcePath` as in hand (durable before this returns).
    package func markInHand(_ sourcePath: String, at date: Date) throws {
        do {
            try pool.write { db in
                try db.execute(sql: """
                    INSERT INTO intakePoison (sourcePath, startedAt) VALUES (?, ?)
                    ON CONFLICT (sourcePath) DO UPDATE SET startedAt = excluded.startedAt
                    """, arguments: [sourcePath, date.ledgerValue])
            }
        } catch {
            throw Self.ledgerError("mark \(sourcePath) as in hand", error)
        }
    }

    /// Removes the mark of `sourcePath`: the daemon is done with it.
    package func clearInHand(_ sourcePath: String) throws {
        do {
            try pool.write { db in
                try db.execute(sql: "DELETE FROM intakePoison WHERE sourcePath = ?", arguments: [sourcePath])
            }
        } catch {
            throw Self.ledgerError("clear the mark of \(sourcePath)", error)
        }
    }

    /// At start: every mark is an input the last run stopped with. Counts the interruption, and
    /// poisons them all when that run crashed. Returns the poisoned marks.
    package func settleMarks(previousRunCrashed: Bool) throws -> [PoisonMark] {
        do {
            return try pool.write { db in
                try db.execute(sql: "UPDATE intakePoison SET interruptions = interruptions + 1 WHERE poisoned = 0")
                if previousRunCrashed {
                    try db.execute(sql: "UPDATE intakePoison SET poisoned = 1")
                }
                return try Row.fetchAll(db, sql: "SELECT sourcePath, startedAt, interruptions, poisoned FROM intakePoison WHERE poisoned = 1")
                    .map { PoisonMark(sourcePath: $0["sourcePath"], startedAt: Date.fromLedger($0["startedAt"]) ?? Date(timeIntervalSince1970: 0), interruptions: $0["interruptions"], poisoned: true) }
            }
        } catch {
            throw Self.ledgerError("read the marks of inputs in hand at the last stop", error)
        }
    }
}
