import Foundation
import GRDB
import SystemPackage

/// The steps of a group commit, each one transaction of a few statements per batch (see
/// ``migrateToOncePerBatch(_:)``), used by ``DeliveryBatch``.
extension DeliveryLedger {
    /// The most rows one insert statement takes. SQLite keeps every cached statement's program
    /// and bound values for the ledger's life: the shapes up to 256 rows (35 values each) held
    /// 3.7 MiB more at a 10,000-file burst's peak than up to 32, for no CPU per file measured
    /// (docs/BENCHMARKS.md, 2026-11-26); 8 saved nothing more.
    static let rowsPerInsert = 32

    /// Inserts `records` with as few statements as a batch's count needs: a batch of 100 is three
    /// inserts of 32 rows and one of 4. The statements have one of six shapes, so SQLite
    /// compiles each once. Returns the rows' ids, in order: a statement's rows get
    /// consecutive ids (`AUTOINCREMENT` gives each new row the largest id so far plus one, and
    /// this connection is the only writer), the last of them `lastInsertedRowID`.
    @discardableResult
    static func insert(_ records: [LedgerRecord], _ db: Database) throws -> [Int64] {
        var ids: [Int64] = []
        ids.reserveCapacity(records.count)
        var dates = LedgerRecord.DateValues()
        var start = records.startIndex
        while start < records.endIndex {
            var count = rowsPerInsert
            while count > records.endIndex - start { count /= 2 }
            let statement = try db.cachedStatement(sql: insertSQL(rows: count))
            var values: [(any DatabaseValueConvertible)?] = []
            values.reserveCapacity(count * LedgerRecord.insertColumnCount)
            for record in records[start..<start + count] {
                record.appendInsertValues(to: &values, dates: &dates)
            }
            try statement.execute(arguments: StatementArguments(values))
            let last = db.lastInsertedRowID
            ids.append(contentsOf: (last - Int64(count) + 1)...last)
            start += count
        }
        return ids
    }

    static func insertSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: LedgerRecord.insertColumnCount).joined(separator: ", ") + ")"
        return "INSERT INTO delivery (\(LedgerRecord.insertColumns)) VALUES " + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Marks the staged rows `deliveryIDs` committed, in one statement per run of consecutive ids
    /// (one for a batch whose copies were all placed). `staged` has the ids of rows staged by this
    /// ledger; a row staged by an earlier run (recovery) is looked up by its delivery id. Rows
    /// that are gone or committed already are left out of the result.
    ///
    /// The row id is the commit order. Rows whose ids are not all above every committed row (a
    /// URL committed while the batch was staged), or not in the order given, first get new ids
    /// after every row, in the order given: the rare case, one statement per row.
    ///
    /// `owed` gets what each committed row adds to its handler's (and requester's) pending
    /// tally, to be counted once the transaction is durable.
    static func commit(_ deliveryIDs: [UUID], _ db: Database, at date: Date, staged: [UUID: Int64],
                       lastCommitted: inout Int64, owed: inout [PendingTally.Change]) throws -> [UUID: Int64] {
        guard !deliveryIDs.isEmpty else { return [:] }
        var rows: [(id: Int64, deliveryID: UUID)] = []
        rows.reserveCapacity(deliveryIDs.count)
        let lookup = try db.cachedStatement(sql: "SELECT id FROM delivery WHERE deliveryID = ? AND state = 'staged'")
        for deliveryID in deliveryIDs {
            if let id = try staged[deliveryID] ?? Int64.fetchOne(lookup, arguments: [deliveryID.ledgerText]) {
                rows.append((id, deliveryID))
            }
        }
        guard !rows.isEmpty else { return [:] }
        let inOrder = zip(rows, rows.dropFirst()).allSatisfy { $0.id < $1.id }
        if !inOrder || rows[0].id <= lastCommitted {
            var next = try Int64.fetchOne(db, sql: """
                SELECT MAX(COALESCE((SELECT MAX(id) FROM delivery), 0), COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'delivery'), 0))
                """) ?? 0
            let move = try db.cachedStatement(sql: "UPDATE delivery SET id = ? WHERE id = ?")
            for index in rows.indices {
                next += 1
                try move.execute(arguments: [next, rows[index].id])
                rows[index].id = next
            }
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = ? WHERE name = 'delivery'", arguments: [next])
        }
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0.deliveryID) })
        let update = try db.cachedStatement(sql: """
            UPDATE delivery SET state = 'committed', committedAt = ?, temporaryPath = NULL
            WHERE id BETWEEN ? AND ? AND state = 'staged'
            RETURNING id, \(Self.pendingColumns)
            """)
        let dateValue = date.ledgerValue
        var sequences: [UUID: Int64] = [:]
        sequences.reserveCapacity(rows.count)
        var first = 0
        while first < rows.count {
            var last = first
            while last + 1 < rows.count, rows[last + 1].id == rows[last].id + 1 { last += 1 }
            let committed = try Row.fetchCursor(update, arguments: [dateValue, rows[first].id, rows[last].id])
            while let row = try committed.next() {
                let id: Int64 = row[0]
                guard let deliveryID = byID[id] else { continue }
                sequences[deliveryID] = id
                owed.append(Self.pendingChange(row, from: 1, count: 1))
                lastCommitted = max(lastCommitted, id)
            }
            first = last + 1
        }
        return sequences
    }

    static func delete(_ deliveryIDs: [UUID], _ db: Database) throws {
        guard !deliveryIDs.isEmpty else { return }
        try db.execute(sql: "DELETE FROM delivery WHERE deliveryID IN (SELECT value FROM json_each(?)) AND state = 'staged'",
                       arguments: [Self.jsonArray(deliveryIDs)])
    }

    /// Delivery ids as a JSON array of their ledger text, for `json_each`: one statement for a
    /// group of rows, whatever its size.
    static func jsonArray(_ deliveryIDs: [UUID]) -> String {
        var text = "["
        text.reserveCapacity(deliveryIDs.count * 39 + 2)
        for (index, deliveryID) in deliveryIDs.enumerated() {
            if index > 0 { text += "," }
            text += "\""
            text += deliveryID.ledgerText
            text += "\""
        }
        return text + "]"
    }

    /// Phase (c): the rows of a batch, state `staged`, in one transaction.
    package func stage(_ records: [LedgerRecord]) throws {
        guard !records.isEmpty else { return }
        let ids = try write("stage \(records.count) deliveries") { db in try Self.insert(records, db) }
        sequencing.withLock { state in
            for (record, id) in zip(records, ids) { state.staged[record.deliveryID] = id }
        }
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
        let staged = sequencing.withLock { $0.staged }
        let sequences = try write("commit \(deliveryIDs.count) deliveries") { db in
            owed.removeAll()
            try Self.delete(discarded, db)
            return try committing { last in
                try Self.commit(deliveryIDs, db, at: date, staged: staged, lastCommitted: &last, owed: &owed)
            }
        }
        sequencing.withLock { state in
            for deliveryID in deliveryIDs { state.staged[deliveryID] = nil }
            for deliveryID in discarded { state.staged[deliveryID] = nil }
        }
        pendingTally.record(owed)
        return sequences
    }

    /// Runs `body`, within a write transaction, with the highest id committed so far, and keeps
    /// what it raised it to. Called only on the writer, so no other commit runs meanwhile; a
    /// transaction that rolls back afterwards leaves the figure too high, which only makes a
    /// later batch take new ids it did not need.
    func committing<T>(_ body: (inout Int64) throws -> T) rethrows -> T {
        var last = sequencing.withLock { $0.lastCommitted }
        defer { sequencing.withLock { $0.lastCommitted = max($0.lastCommitted, last) } }
        return try body(&last)
    }

    /// Removes staged rows (their copies were not placed).
    package func discard(_ deliveryIDs: [UUID]) throws {
        guard !deliveryIDs.isEmpty else { return }
        try write("discard \(deliveryIDs.count) staged deliveries") { db in try Self.delete(deliveryIDs, db) }
        sequencing.withLock { state in
            for deliveryID in deliveryIDs { state.staged[deliveryID] = nil }
        }
    }

    /// Notes that the sources of these deliveries are gone from their inboxes, in one statement.
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
                    let statement = try db.cachedStatement(sql: """
                        UPDATE delivery SET sourceRemovedAt = ? WHERE deliveryID IN (SELECT value FROM json_each(?))
                        """)
                    try statement.execute(arguments: [date.ledgerValue, Self.jsonArray(deliveryIDs)])
                    return .commit
                }
            }
        } catch {
            throw Self.ledgerError("note removed sources", error)
        }
    }

    /// Every staged row, in staging order: after a crash, what recovery must settle. Staged rows
    /// are files whose sources are not noted removed, so `delivery_source_kept` finds them.
    package func stagedRecords() throws -> [LedgerRecord] {
        try read("read staged deliveries") { db in
            try LedgerRecord.fetchAll(db, sql: """
                SELECT * FROM delivery WHERE sourceRemovedAt IS NULL AND kind = 'file' AND state = 'staged' ORDER BY id
                """)
        }
    }

    /// Committed (or later) file deliveries whose source was not yet seen removed.
    package func recordsWithSourcesKept() throws -> [LedgerRecord] {
        try read("read deliveries with sources left") { db in
            try LedgerRecord.fetchAll(db, sql: """
                SELECT * FROM delivery
                WHERE sourceRemovedAt IS NULL AND kind = 'file' AND state <> 'staged' ORDER BY id
                """)
        }
    }
}
