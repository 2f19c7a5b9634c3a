import DocRouteProtocol
import Foundation
import GRDB
import SystemPackage

/// A document's history (``HistoryLedger``) on the SQLite ledger: a delivery's events are
/// columns of its row; documents that never became one are rows of `undelivered`.
extension DeliveryLedger {
    /// The migration that keeps the events: the columns of the events a delivery row did not
    /// have, and the table of documents that never became a delivery.
    static func addHistory(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE delivery ADD COLUMN seenAt DATETIME;
            ALTER TABLE delivery ADD COLUMN inbox TEXT;
            ALTER TABLE delivery ADD COLUMN mimeType TEXT;
            ALTER TABLE delivery ADD COLUMN typedBy TEXT;
            ALTER TABLE delivery ADD COLUMN routedBy TEXT;
            ALTER TABLE delivery ADD COLUMN notifiedAt DATETIME;
            ALTER TABLE delivery ADD COLUMN notifiedBy TEXT;
            ALTER TABLE delivery ADD COLUMN notifiedTo TEXT;
            CREATE TABLE undelivered (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                outcome TEXT NOT NULL CHECK (outcome IN ('quarantined', 'skipped')),
                at DATETIME NOT NULL,
                inbox TEXT,
                sourcePath TEXT,
                originalName TEXT,
                mailbox TEXT,
                size INTEGER,
                contentType TEXT,
                reason TEXT NOT NULL,
                quarantinePath TEXT,
                messageID TEXT,
                partPath TEXT
            );
            CREATE INDEX undelivered_name ON undelivered (originalName);
            CREATE INDEX undelivered_at ON undelivered (at);
            """)
    }

    // MARK: Writing

    package func noteUndelivered(_ notes: [UndeliveredDocument]) async throws {
        guard !notes.isEmpty else { return }
        try await writeAsync("note \(notes.count) undelivered documents") { db in
            let insert = try db.cachedStatement(sql: """
                INSERT INTO undelivered (outcome, at, inbox, sourcePath, originalName, mailbox, size, contentType, reason,
                                         quarantinePath, messageID, partPath)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for note in notes {
                try insert.execute(arguments: [
                    note.outcome.rawValue, note.at.ledgerValue, note.inbox, note.sourcePath, note.originalName, note.mailbox,
                    note.size, note.contentType, note.reason, note.quarantinePath, note.messageID, note.partPath,
                ])
            }
        }
    }

    /// Records who was told of which deliveries: one statement per connection and message kind.
    static func recordNotices(_ notices: [DeliveryNotice], _ db: Database) throws {
        guard !notices.isEmpty else { return }
        var groups: [String: (notice: DeliveryNotice, sequences: [Int64])] = [:]
        var order: [String] = []
        for notice in notices {
            let key = notice.message.rawValue + "\u{0}" + notice.connection
            if groups[key] == nil { order.append(key) }
            groups[key, default: (notice, [])].sequences.append(notice.sequence)
        }
        // The sequence is the row id (see migrateToOncePerBatch(_:)): no index is needed.
        let update = try db.cachedStatement(sql: """
            UPDATE delivery SET notifiedAt = ?, notifiedBy = ?, notifiedTo = ? WHERE id IN (SELECT value FROM json_each(?))
            """)
        for key in order {
            guard let (notice, sequences) = groups[key] else { continue }
            let list = "[" + sequences.map(String.init).joined(separator: ",") + "]"
            try update.execute(arguments: [notice.at.ledgerValue, notice.message.rawValue, notice.connection, list])
        }
    }

    package func pruneHistory(before date: Date, limit: Int) async throws -> Int {
        try await writeAsync("prune the history") { db in
            let cutoff = date.ledgerValue
            // Only rows older than the cutoff are looked at: rows are in the order they were seen.
            let bound = try Self.firstID(seenAtOrAfter: date, db)
            try db.execute(sql: """
                DELETE FROM delivery WHERE id IN (
                    SELECT id FROM delivery
                    WHERE id < ? AND state IN ('acknowledged', 'declined') AND acknowledgedAt < ?
                      AND (sourceRemovedAt IS NOT NULL OR kind = 'url')
                    ORDER BY id LIMIT ?)
                """, arguments: [bound, cutoff, limit])
            var removed = db.changesCount
            try db.execute(sql: "DELETE FROM undelivered WHERE id IN (SELECT id FROM undelivered WHERE at < ? ORDER BY at LIMIT ?)",
                           arguments: [cutoff, limit])
            removed += db.changesCount
            return removed
        }
    }

    /// The first row id seen at or after `date`, less an hour's margin: rows are inserted in the
    /// order they are seen, so the id orders them by time but for a clock set back meanwhile (an
    /// hour is allowed for) and a batch renumbered at its commit (by milliseconds). A binary
    /// search over the ids: about twenty reads of one row each.
    static func firstID(seenAtOrAfter date: Date, _ db: Database) throws -> Int64 {
        let target = UTCTimestamp(date.addingTimeInterval(-3_600)).ledgerText
        guard var low = try Int64.fetchOne(db, sql: "SELECT MIN(id) FROM delivery"),
              var high = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM delivery") else { return 0 }
        high += 1
        let probe = try db.cachedStatement(sql: "SELECT id, COALESCE(seenAt, createdAt) FROM delivery WHERE id >= ? ORDER BY id LIMIT 1")
        while low < high {
            let middle = low + (high - low) / 2
            guard let row = try Row.fetchOne(probe, arguments: [middle]) else {
                high = middle
                continue
            }
            let id: Int64 = row[0]
            let seen: String = row[1]
            if seen < target {
                low = id + 1
            } else {
                high = middle
            }
        }
        return low
    }

    // MARK: Reading

    package func history(_ query: HistoryQuery) async throws -> [DocumentHistory] {
        try await readAsync("read the history") { db in try Self.history(query, db) }
    }

    static func history(_ query: HistoryQuery, _ db: Database) throws -> [DocumentHistory] {
        var found: [DocumentHistory] = []
        if query.state != .quarantined && query.state != .skipped {
            found += try deliveryHistory(query, db)
        }
        if query.deliveryID == nil, query.bundleIdentifier == nil,
           query.state == nil || query.state == .quarantined || query.state == .skipped {
            found += try undeliveredHistory(query, db)
        }
        found.sort { ($0.firstAt ?? .distantPast) > ($1.firstAt ?? .distantPast) }
        return Array(found.prefix(query.limit))
    }

    /// The names a copy's path may have been given for `name` (`notes-1.txt`, `notes-2.tar.gz`):
    /// the name itself, and the name without a counter before any of its dots.
    static func originalNames(forPathName name: String) -> [String] {
        var names = [name]
        let characters = Array(name)
        var ends = characters.indices.filter { characters[$0] == "." }
        ends.append(characters.count)
        for end in ends {
            var start = end
            while start > 0, characters[start - 1].isASCII, characters[start - 1].isNumber { start -= 1 }
            guard start < end, start > 1, characters[start - 1] == "-" else { continue }
            let candidate = String(characters[..<(start - 1)]) + String(characters[end...])
            if !names.contains(candidate) { names.append(candidate) }
        }
        return names
    }

    static func deliveryHistory(_ query: HistoryQuery, _ db: Database) throws -> [DocumentHistory] {
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let deliveryID = query.deliveryID {
            conditions.append("deliveryID = ?")
            arguments.append(deliveryID.ledgerText)
        }
        if let name = query.name {
            conditions.append("originalName = ?")
            arguments.append(name)
        }
        if let path = query.path {
            let names = originalNames(forPathName: FilePath(path).lastComponent?.string ?? path)
            conditions.append("originalName IN (\(names.map { _ in "?" }.joined(separator: ", "))) AND (finalPath = ? OR sourcePath = ?)")
            arguments += names.map { $0 as (any DatabaseValueConvertible)? }
            arguments.append(path)
            arguments.append(LedgerRecord.bytes(of: FilePath(path)))
        }
        if let bundleIdentifier = query.bundleIdentifier {
            conditions.append("bundleIdentifier = ?")
            arguments.append(bundleIdentifier)
        }
        if let since = query.since {
            // By handler, its index has the time; otherwise the ids are searched for the start.
            if query.bundleIdentifier == nil {
                conditions.append("id >= ?")
                arguments.append(try firstID(seenAtOrAfter: since, db))
            }
            conditions.append("createdAt >= ? AND COALESCE(seenAt, createdAt) >= ?")
            arguments.append(UTCTimestamp(since.addingTimeInterval(-3_600)).ledgerText)
            arguments.append(since.ledgerValue)
        }
        if let until = query.until {
            conditions.append("COALESCE(seenAt, createdAt) < ?")
            arguments.append(until.ledgerValue)
        }
        switch query.state {
        case .staged?: conditions.append("sourceRemovedAt IS NULL AND kind = 'file' AND state = 'staged'")
        case .owed?: conditions.append("acknowledgedAt IS NULL AND state = 'committed'")
        case .acknowledged?: conditions.append("state = 'acknowledged'")
        case .declined?: conditions.append("state = 'declined'")
        default: break
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments.append(query.limit)
        // A handler's documents come newest first straight from its index (handler, time).
        let order = query.bundleIdentifier == nil ? "id DESC" : "createdAt DESC"
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM delivery \(filter) ORDER BY \(order) LIMIT ?",
                                       arguments: StatementArguments(arguments))
        var found: [DocumentHistory] = []
        while let row = try rows.next() {
            let record = try LedgerRecord(row: row)
            var history = DocumentHistory(deliveryID: record.deliveryID, state: {
                switch record.state {
                case .staged: .staged
                case .committed: .owed
                case .acknowledged: .acknowledged
                case .declined: .declined
                }
            }())
            history.url = record.kind == .url ? record.url : nil
            history.originalName = record.originalName
            history.inbox = record.inbox ?? record.sourcePath?.removingLastComponent().string
            history.sourcePath = record.sourcePath?.string
            history.mailbox = record.mailbox
            history.size = record.sourceSize ?? record.size
            history.contentType = record.contentType
            history.mimeType = record.mimeType
            history.typedBy = record.typedBy
            history.bundleIdentifier = record.bundleIdentifier
            history.routedBy = record.routedBy
            history.finalPath = record.finalPath
            history.messageID = record.messageID
            history.partPath = record.partPath
            history.seenAt = record.seenAt ?? record.createdAt
            history.committedAt = record.committedAt
            history.notifiedAt = record.notifiedAt
            history.notifiedBy = record.notifiedBy
            history.notifiedTo = record.notifiedTo
            history.settledAt = record.acknowledgedAt
            history.sourceRemovedAt = record.sourceRemovedAt
            if let rounds: String = row["redeliveries"], case .array(let values)? = JSONValue(parsingJSON: rounds) {
                history.earlierRounds = values.compactMap(DocumentHistory.Round.init(json:))
            }
            found.append(history)
        }
        return found
    }

    static func undeliveredHistory(_ query: HistoryQuery, _ db: Database) throws -> [DocumentHistory] {
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let name = query.name {
            conditions.append("originalName = ?")
            arguments.append(name)
        }
        if let path = query.path {
            conditions.append("originalName = ? AND (sourcePath = ? OR quarantinePath = ?)")
            arguments += [FilePath(path).lastComponent?.string ?? path, path, path]
        }
        if let since = query.since {
            conditions.append("at >= ?")
            arguments.append(since.ledgerValue)
        }
        if let until = query.until {
            conditions.append("at < ?")
            arguments.append(until.ledgerValue)
        }
        if let state = query.state {
            conditions.append("outcome = ?")
            arguments.append(state.rawValue)
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments.append(query.limit)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM undelivered \(filter) ORDER BY id DESC LIMIT ?",
                                       arguments: StatementArguments(arguments))
        var found: [DocumentHistory] = []
        while let row = try rows.next() {
            let outcome: String = row["outcome"]
            var history = DocumentHistory(deliveryID: nil, state: outcome == "skipped" ? .skipped : .quarantined)
            history.seenAt = Date.fromLedger(row["at"])
            history.inbox = row["inbox"]
            history.sourcePath = row["sourcePath"]
            history.originalName = row["originalName"]
            history.mailbox = row["mailbox"]
            history.size = row["size"]
            history.contentType = row["contentType"]
            history.reason = row["reason"]
            history.quarantinePath = row["quarantinePath"]
            history.messageID = row["messageID"]
            history.partPath = row["partPath"]
            found.append(history)
        }
        return found
    }
}
