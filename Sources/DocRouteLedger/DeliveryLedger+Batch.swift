import Foundation
import GRDB
import SystemPackage

/// The steps of a group commit, each one transaction, used by ``DeliveryBatch``.
extension DeliveryLedger {
    static func insert(_ records: [LedgerRecord], _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO delivery (\(LedgerRecord.insertColumns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var dates = LedgerRecord.DateValues()
        for record in records {
            try statement.execute(arguments: record.insertArguments(dates: &dates))
        }
    }

    /// Gives the rows their commit sequence, in the order of `deliveryIDs`, and marks them
    /// committed. Rows that are gone or already have a sequence are left out of the result.
    /// `owed` gets what each committed row adds to its handler's (and requester's) pending
    /// tally, to be counted once the transaction is durable.
    static func commit(_ deliveryIDs: [UUID], _ db: Database, at date: Date, owed: inout [PendingTally.Change]) throws -> [UUID: Int64] {
        guard !deliveryIDs.isEmpty else { return [:] }
        var last = try Int64.fetchOne(db, sql: "SELECT last FROM ledgerSequence WHERE id = 1") ?? 0
        let update = try db.cachedStatement(sql: """
            UPDATE delivery SET state = 'committed', sequence = ?, committedAt = ?, temporaryPath = NULL
            WHERE deliveryID = ? AND sequence IS NULL
            RETURNING \(Self.pendingColumns)
            """)
        var sequences: [UUID: Int64] = [:]
        sequences.reserveCapacity(deliveryIDs.count)
        let dateValue = date.ledgerValue
        for deliveryID in deliveryIDs {
            if let row = try Row.fetchOne(update, arguments: [last + 1, dateValue, deliveryID.ledgerText]) {
                last += 1
                sequences[deliveryID] = last
                owed.append(Self.pendingChange(row, count: 1))
            }
        }
        try db.execute(sql: "UPDATE ledgerSequence SET last = ? WHERE id = 1", arguments: [last])
        return sequences
    }

    static func delete(_ deliveryIDs: [UUID], _ db: Database) throws {
        let statement = try db.cachedStatement(sql: "DELETE FROM delivery WHERE deliveryID = ? AND state = 'staged'")
        for deliveryID in deliveryIDs {
            try statement.execute(arguments: [deliveryID.ledgerText])
        }
    }

    /// Phase (c): the rows of a batch, state `staged`, in one transaction.
    package func stage(_ records: [LedgerRecord]) throws {
        guard !records.isEmpty else { return }
        try write("stage \(records.count) deliveries") { db in try Self.insert(records, db) }
    }

    /// A staged row's final name changed (the name was taken meanwhile); written before the
    /// rename to it is tried, so a crash never leaves the row naming another file.
    package func updateFinalPath(deliveryID: UUID, finalPath: String) throws {
        try write("rename a staged delivery") { db in
            try db.execute(sql: "UPDATE delivery SET finalPath = ? WHERE deliveryID = ? AND state = 'staged'",
                           arguments: [finalPath, deliveryID.ledgerText])
        }
    }

    /// Phase (e): the placed copies committed (in the given order) and the failed ones' rows
    /// removed, in one transaction. Returns each committed id's sequence.
    package func commit(_ deliveryIDs: [UUID], discarding discarded: [UUID] = [], at date: Date = Date()) throws -> [UUID: Int64] {
        var owed: [PendingTally.Change] = []
        let sequences = try write("commit \(deliveryIDs.count) deliveries") { db in
            owed.removeAll()
            try Self.delete(discarded, db)
            return try Self.commit(deliveryIDs, db, at: date, owed: &owed)
        }
        pendingTally.record(owed)
        return sequences
    }

    /// Removes staged rows (their copies were not placed).
    package func discard(_ deliveryIDs: [UUID]) throws {
        guard !deliveryIDs.isEmpty else { return }
        try write("discard \(deliveryIDs.count) staged deliveries") { db in try Self.delete(deliveryIDs, db) }
    }

    /// Notes that the sources of these deliveries are gone from their inboxes.
    ///
    /// Unless `durably`, written without its own flush (`synchronous = NORMAL` for this one
    /// transaction): the next full commit makes it durable, and if a crash loses it the recovery
    /// merely checks those sources again. That saves a flush per batch. The ``SourceReclaimer``
    /// writes durably: it frees the sources' inodes right after.
    package func markSourcesRemoved(_ deliveryIDs: [UUID], at date: Date = Date(), durably: Bool = false) throws {
        guard !deliveryIDs.isEmpty else { return }
        do {
            try pool.writeWithoutTransaction { db in
                if !durably { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                defer { if !durably { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
                try db.inTransaction {
                    let statement = try db.cachedStatement(sql: "UPDATE delivery SET sourceRemovedAt = ? WHERE deliveryID = ?")
                    let dateValue = date.ledgerValue
                    for deliveryID in deliveryIDs {
                        try statement.execute(arguments: [dateValue, deliveryID.ledgerText])
                    }
                    return .commit
                }
            }
        } catch {
            throw Self.ledgerError("note removed sources", error)
        }
    }

    /// Every staged row, in staging order: after a crash, what recovery must settle.
    package func stagedRecords() throws -> [LedgerRecord] {
        try read("read staged deliveries") { db in
            try LedgerRecord.fetchAll(db, sql: "SELECT * FROM delivery WHERE state = 'staged' ORDER BY id")
        }
    }

    /// Committed (or later) file deliveries whose source was not yet seen removed.
    package func recordsWithSourcesKept() throws -> [LedgerRecord] {
        try read("read deliveries with sources left") { db in
            try LedgerRecord.fetchAll(db, sql: """
                SELECT * FROM delivery
                WHERE kind = 'file' AND state <> 'staged' AND sourceRemovedAt IS NULL ORDER BY id
                """)
        }
    }
}
