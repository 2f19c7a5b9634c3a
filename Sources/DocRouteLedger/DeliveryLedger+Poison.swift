import Foundation
import GRDB

/// Poison marks: one input must never stop the daemon twice (else it crashes at every restart).
///
/// A mark is written, durably, before docrouted starts walking a package and removed once it is
/// done with it, delivered or not. A mark still there at the next start means the daemon stopped
/// while it had that input in hand. If the daemon crashed (its crash marker says so), the input is
/// poisoned at once. If it was only killed (SIGKILL, power loss), the kill says nothing about the
/// input: it is tried again (an administrator's `kill -9` must not cost a document its delivery),
/// and the interruptions are counted for the reason text. The intake quarantines a poisoned input,
/// with the reason, instead of touching it again.
extension DeliveryLedger {
    /// A mark left by a run that stopped.
    package struct PoisonMark: Sendable, Hashable {
        package var sourcePath: String
        package var startedAt: Date
        package var interruptions: Int
        package var poisoned: Bool
    }

    /// Marks `sourcePath` as in hand (durable before this returns).
    package func markInHand(_ sourcePath: String, at date: Date = Date()) throws {
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
