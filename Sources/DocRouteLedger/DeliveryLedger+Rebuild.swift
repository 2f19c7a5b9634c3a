import Foundation
import GRDB
import SystemPackage

extension DeliveryLedger {
    /// Rows that can still be read from a damaged ledger at `path` (opened read-only; its
    /// `-wal` beside it is read too), in staging order, up to the first unreadable page.
    package static func salvage(_ path: FilePath) -> (records: [LedgerRecord], complete: Bool) {
        var configuration = Configuration()
        configuration.readonly = true
        var records: [LedgerRecord] = []
        do {
            let queue = try DatabaseQueue(path: path.string, configuration: configuration)
            defer { try? queue.close() }
            try queue.read { db in
                let rows = try Row.fetchCursor(db, sql: "SELECT * FROM delivery ORDER BY id")
                while let row = try rows.next() {
                    if let record = try? LedgerRecord(row: row) { records.append(record) }
                }
            }
            return (records, true)
        } catch {
            return (records, false)
        }
    }

    /// Writes `records` into this (new, empty) ledger in one transaction, in the order given:
    /// each row keeps its state, and its id, the next, is its sequence.
    package func rebuild(_ records: [LedgerRecord]) throws {
        try write("rebuild the ledger") { db in
            let ids = try Self.insert(records, db)
            committing { last in last = max(last, ids.last ?? 0) }
        }
        try loadPendingTally()
    }
}

extension DeliveryLedger {
    /// Adds one document a ledger rebuild left for later, in one transaction, with the next
    /// sequence (unless it is staged): false, and nothing written, when a file row already names
    /// its path or its identifier (written before a crash, or a delivery made meanwhile).
    package func addRebuilt(_ record: LedgerRecord) throws -> Bool {
        var owed: [PendingTally.Change] = []
        let added = try write("add a rebuilt delivery") { db in
            owed.removeAll()
            let taken = try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM delivery WHERE deliveryID = ? OR (kind = 'file' AND finalPath = ?))
                """, arguments: [record.deliveryID.ledgerText, record.finalPath]) ?? false
            guard !taken else { return false }
            guard record.state != .staged else {
                _ = try Self.insert([record], db)
                return true
            }
            // Its id, the next, is its sequence: it comes after everything committed before.
            _ = try insertCommitted(record, db, owed: &owed)
            // Acknowledged or declined: kept for the history, owed to nobody.
            if record.state != .committed { owed.removeAll() }
            return true
        }
        pendingTally.record(owed)
        return added
    }
}
