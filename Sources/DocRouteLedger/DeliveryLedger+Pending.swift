import Foundation
import GRDB

/// The ledger's part in the limits on what may wait unacknowledged (``PendingTally``).
extension DeliveryLedger {
    /// A row's bytes as the limits count them: a file's size, a URL's length in bytes (what it
    /// keeps in the ledger).
    static let pendingBytes = "COALESCE(size, 0) + COALESCE(length(CAST(url AS BLOB)), 0)"

    /// What a statement returns for ``pendingChange(_:count:)``.
    static let pendingColumns = "bundleIdentifier, \(pendingBytes), requesterUID"

    /// The change of the ``pendingColumns`` read from column `offset` on.
    static func pendingChange(_ row: Row, from offset: Int = 0, count: Int) -> PendingTally.Change {
        let bytes: Int64 = row[offset + 1]
        return PendingTally.Change(bundleIdentifier: row[offset], userID: (row[offset + 2] as Int64?).map { UInt32(truncatingIfNeeded: $0) },
                                   count: count, bytes: Int64(count) * bytes)
    }

    /// Reads what every handler is owed, and each requester's part of it, into ``pendingTally``.
    package func loadPendingTally() throws {
        let (handlers, users) = try read("count pending deliveries") { db in
            var handlers: [String: PendingTally.Amount] = [:]
            var users: [UInt32: PendingTally.Amount] = [:]
            let rows = try Row.fetchCursor(db, sql: """
                SELECT bundleIdentifier, requesterUID, COUNT(*), SUM(\(Self.pendingBytes))
                FROM delivery WHERE acknowledgedAt IS NULL AND state = 'committed' GROUP BY bundleIdentifier, requesterUID
                """)
            while let row = try rows.next() {
                let count: Int = row[2]
                let bytes: Int64 = row[3] ?? 0
                handlers[row[0], default: PendingTally.Amount()].count += count
                handlers[row[0], default: PendingTally.Amount()].bytes += bytes
                if let uid = (row[1] as Int64?).map({ UInt32(truncatingIfNeeded: $0) }) {
                    users[uid, default: PendingTally.Amount()].count += count
                    users[uid, default: PendingTally.Amount()].bytes += bytes
                }
            }
            return (handlers, users)
        }
        pendingTally.reset(handlers: handlers, users: users)
    }

    /// Bytes the ledger takes on disk: its file, its write-ahead log and the log's index, as `du`
    /// would count them (allocated blocks).
    package func bytesOnDisk() -> Int64 {
        [path.string, path.string + "-wal", path.string + "-shm"].reduce(0) { total, file in
            total + (Self.fileStatus(file)?.allocatedBytes ?? 0)
        }
    }
}
