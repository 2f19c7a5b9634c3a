import Foundation
import GRDB

extension DeliveryLedger {
    /// A page of acknowledged file deliveries of `bundleIdentifier`, acknowledged before `cutoff`,
    /// whose copies no sweep has settled yet, oldest acknowledgement first, starting past
    /// `position` (nil: from the first); `next` is where the following page starts, nil after the
    /// last. Committed (unacknowledged), declined and staged rows are never among them; a row
    /// without a copy's path is left out.
    package func acknowledgedCopies(of bundleIdentifier: String, acknowledgedBefore cutoff: Date, after position: RetentionPosition?,
                                    limit: Int) throws -> (copies: [AcknowledgedCopy], next: RetentionPosition?) {
        try read("read acknowledged copies past their retention") { db in
            let start = position ?? RetentionPosition(acknowledgedAt: "".databaseValue, row: 0)
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, deliveryID, containerPath, finalPath, finalDevice, finalInode, size, acknowledgedAt FROM delivery
                WHERE bundleIdentifier = ? AND state = 'acknowledged' AND kind = 'file' AND copyRemovedAt IS NULL
                  AND acknowledgedAt < ? AND (acknowledgedAt, id) > (?, ?)
                ORDER BY acknowledgedAt, id LIMIT ?
                """, arguments: [bundleIdentifier, cutoff.ledgerValue, start.acknowledgedAt, start.row, limit])
            let last = rows.last.map { RetentionPosition(acknowledgedAt: $0["acknowledgedAt"], row: $0["id"]) }
            let copies = rows.compactMap { row -> AcknowledgedCopy? in
                let identifier: String = row["deliveryID"]
                guard let deliveryID = UUID(canonicalText: identifier),
                      let acknowledgedAt = Date.fromLedger(row["acknowledgedAt"]),
                      let containerPath: String = row["containerPath"], let finalPath: String = row["finalPath"]
                else { return nil }
                return AcknowledgedCopy(
                    deliveryID: deliveryID, containerPath: containerPath, finalPath: finalPath,
                    finalDevice: LedgerRecord.fileNumber(row, "finalDevice"),
                    finalInode: LedgerRecord.fileNumber(row, "finalInode"),
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
