import Foundation
import GRDB

extension DeliveryLedger {
    /// A copy in a handler's sandbox that its handler acknowledged, as the ledger recorded it
    /// when it was delivered: what a retention sweep may remove, and how to tell it is still
    /// that very file.
    package struct AcknowledgedCopy: Sendable, Hashable {
        package var deliveryID: UUID
        /// The handler's container root the copy was written below.
        package var containerPath: String
        /// The copy's absolute path, `<containerPath>/Documents/Inbox/<mailbox>/<name>`.
        package var finalPath: String
        /// Device and inode of the copy when it was renamed into place; nil in a row that never
        /// recorded them, which a sweep then leaves alone.
        package var finalDevice: UInt64?
        package var finalInode: UInt64?
        /// Bytes, for the log.
        package var size: Int64?
        package var acknowledgedAt: Date
    }

    /// A place in the order of acknowledgement (the time as stored, then the row), so a sweep
    /// pages past copies it could not settle instead of reading them again.
    package struct Position: Sendable, Hashable {
        var acknowledgedAt: DatabaseValue
        var row: Int64
    }

    /// A page of acknowledged file deliveries of `bundleIdentifier`, acknowledged before `cutoff`,
    /// whose copies no sweep has settled yet, oldest acknowledgement first, starting past
    /// `position` (nil: from the first); `next` is where the following page starts, nil after the
    /// last. Committed (unacknowledged), declined and staged rows are never among them; a row
    /// without a copy's path is left out.
    package func acknowledgedCopies(of bundleIdentifier: String, acknowledgedBefore cutoff: Date, after position: Position?,
                                    limit: Int) throws -> (copies: [AcknowledgedCopy], next: Position?) {
        try read("read acknowledged copies past their retention") { db in
            let start = position ?? Position(acknowledgedAt: "".databaseValue, row: 0)
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, deliveryID, containerPath, finalPath, finalDevice, finalInode, size, acknowledgedAt FROM delivery
                WHERE bundleIdentifier = ? AND state = 'acknowledged' AND kind = 'file' AND copyRemovedAt IS NULL
                  AND acknowledgedAt < ? AND (acknowledgedAt, id) > (?, ?)
                ORDER BY acknowledgedAt, id LIMIT ?
                """, arguments: [bundleIdentifier, cutoff.ledgerValue, start.acknowledgedAt, start.row, limit])
            let last = rows.last.map { Position(acknowledgedAt: $0["acknowledgedAt"], row: $0["id"]) }
            let copies = rows.compactMap { row -> AcknowledgedCopy? in
                let identifier: String = row["deliveryID"]
                guard let deliveryID = UUID(canonicalText: identifier),
                      let acknowledgedAt = Date.fromLedger(row["acknowledgedAt"]),
                      let containerPath: String = row["containerPath"], let finalPath: String = row["finalPath"]
                else { return nil }
                return AcknowledgedCopy(
                    deliveryID: deliveryID, containerPath: containerPath, finalPath: finalPath,
                    finalDevice: (row["finalDevice"] as Int64?).map { UInt64(bitPattern: $0) },
                    finalInode: (row["finalInode"] as Int64?).map { UInt64(bitPattern: $0) },
                    size: row["size"], acknowledgedAt: acknowledgedAt)
            }
            return (copies, rows.count < limit ? nil : last)
        }
    }

    /// Notes that these deliveries' copies are settled: removed by a sweep, or found gone or
    /// replaced by another file, so no later sweep looks for them again.
    package func markCopiesSettled(_ deliveryIDs: [UUID], at date: Date = Date()) throws {
        guard !deliveryIDs.isEmpty else { return }
        try write("note copies removed from a sandbox") { db in
            let statement = try db.cachedStatement(sql: "UPDATE delivery SET copyRemovedAt = ? WHERE deliveryID = ?")
            let dateValue = date.ledgerValue
            for deliveryID in deliveryIDs {
                try statement.execute(arguments: [dateValue, deliveryID.ledgerText])
            }
        }
    }
}
