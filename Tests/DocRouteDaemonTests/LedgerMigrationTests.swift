@testable import DocRouteLedger
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import GRDB
import SystemPackage
import Testing

/// A ledger written by the docrouted before the once-per-batch schema is taken to it when opened:
/// every delivery, its state, its place in the commit order and what its handler is owed survive,
/// and the ledger goes on from there.
@Suite struct LedgerMigrationTests {
    /// The schema as the docrouted before wrote it: its migrations, verbatim.
    static var schemaBefore: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("deliveries") { db in
            // `id` is the staging order; `sequence` the commit order, given at commit from
            // `ledgerSequence` so that it only ever grows, even when a URL is committed while a
            // batch of files is staged or old rows are removed.
            try db.execute(sql: """
                CREATE TABLE delivery (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    deliveryID TEXT NOT NULL UNIQUE,
                    sequence INTEGER UNIQUE,
                    bundleIdentifier TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('file', 'url')),
                    url TEXT,
                    mailbox TEXT,
                    originalName TEXT,
                    extensionChain TEXT,
                    containerPath TEXT,
                    finalPath TEXT,
                    finalDevice INTEGER,
                    finalInode INTEGER,
                    temporaryPath TEXT,
                    contentType TEXT,
                    size INTEGER,
                    sha256 TEXT,
                    sourceApplication TEXT,
                    annotation TEXT,
                    state TEXT NOT NULL CHECK (state IN ('staged', 'committed', 'acknowledged', 'declined')),
                    sourcePath BLOB,
                    sourceDevice INTEGER,
                    sourceInode INTEGER,
                    sourceSize INTEGER,
                    sourceMtimeNs INTEGER,
                    messageID TEXT,
                    partPath TEXT,
                    createdAt DATETIME NOT NULL,
                    committedAt DATETIME,
                    acknowledgedAt DATETIME,
                    sourceRemovedAt DATETIME
                );
                CREATE INDEX delivery_pending ON delivery (bundleIdentifier, sequence) WHERE state = 'committed';
                CREATE INDEX delivery_handler_state ON delivery (bundleIdentifier, state);
                CREATE INDEX delivery_staged ON delivery (id) WHERE state = 'staged';
                CREATE INDEX delivery_source ON delivery (sourceDevice, sourceInode) WHERE sourceInode IS NOT NULL;
                CREATE INDEX delivery_source_kept ON delivery (id)
                    WHERE kind = 'file' AND state <> 'staged' AND sourceRemovedAt IS NULL;
                CREATE INDEX delivery_message ON delivery (messageID, partPath) WHERE messageID IS NOT NULL;
                CREATE INDEX delivery_committed_at ON delivery (committedAt);
                CREATE TABLE ledgerSequence (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    last INTEGER NOT NULL
                );
                INSERT INTO ledgerSequence (id, last) VALUES (1, 0);
                """)
        }
        // Inputs in hand when the daemon stopped (see DeliveryLedger+Poison.swift).
        migrator.registerMigration("intakePoison") { db in
            try db.execute(sql: """
                CREATE TABLE intakePoison (
                    sourcePath TEXT PRIMARY KEY NOT NULL,
                    startedAt DATETIME NOT NULL,
                    interruptions INTEGER NOT NULL DEFAULT 0,
                    poisoned INTEGER NOT NULL DEFAULT 0
                );
                """)
        }
        // Staged rows have no commit time: indexing their NULL cost an index insert at staging and
        // a delete at commit for every file. Only the commit times are read (`committedAt >= ?`).
        migrator.registerMigration("committedAtIndexPartial") { db in
            try db.execute(sql: """
                DROP INDEX delivery_committed_at;
                CREATE INDEX delivery_committed_at ON delivery (committedAt) WHERE committedAt IS NOT NULL;
                """)
        }
        // Who asked (`open`) for a delivery, so what one user may leave waiting is counted
        // across restarts (max_pending_per_uid).
        migrator.registerMigration("requesterUID") { db in
            try db.execute(sql: "ALTER TABLE delivery ADD COLUMN requesterUID INTEGER")
        }
        return migrator
    }

    static let handler = "com.example.viewer"

    /// A ledger in the schema before, at `<folder>/state/ledger.sqlite`: three files staged before
    /// a URL was committed (so the URL has the first sequence though its row came fourth), the
    /// files committed after it, one acknowledged, one declined, one with its source still in its
    /// inbox; a mail part; a staged file a crash left; a poison mark. Returns the delivery ids in
    /// the order: files a, b, c, the URL, the mail part, the staged file.
    static func ledgerBefore(_ scratch: TemporaryFolder) throws -> [UUID] {
        try FileManager.default.createDirectory(atPath: scratch.path("state").string, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: scratch.path("state/ledger.sqlite").string)
        defer { try? queue.close() }
        try schemaBefore.migrate(queue)
        let ids = (0..<6).map { _ in UUID() }
        func text(_ index: Int) -> String { ids[index].uuidString }
        try queue.write { db in
            let insert = """
                INSERT INTO delivery (deliveryID, sequence, bundleIdentifier, kind, url, mailbox, originalName, finalPath,
                    contentType, size, state, sourcePath, sourceDevice, sourceInode, sourceSize, sourceMtimeNs,
                    messageID, partPath, createdAt, committedAt, acknowledgedAt, sourceRemovedAt, requesterUID)
                VALUES (?, ?, ?, ?, ?, 'Mail', ?, ?, 'public.plain-text', ?, ?, ?, 1, ?, 4, 7, ?, ?,
                    '2026-11-20 10:00:00.000', ?, ?, ?, ?)
                """
            let committed = "2026-11-20 10:00:01.000"
            for (index, name) in ["a.txt", "b.txt", "c.txt"].enumerated() {
                let state = ["acknowledged", "declined", "committed"][index]
                try db.execute(sql: insert, arguments: [
                    text(index), index + 2, handler, "file", nil, name, "/containers/viewer/Documents/Inbox/Mail/\(name)", 4, state,
                    Data("/inbox/\(name)".utf8), 100 + index, nil, nil, committed,
                    state == "committed" ? nil : "2026-11-20 10:00:02.000",
                    index == 2 ? nil : "2026-11-20 10:00:03.000", nil,
                ])
            }
            try db.execute(sql: insert, arguments: [
                text(3), 1, handler, "url", "todolist://x", nil, nil, nil, "committed", nil, nil, nil, nil, committed, nil, nil, 501,
            ])
            try db.execute(sql: insert, arguments: [
                text(4), 5, handler, "file", nil, "part.pdf", "/containers/viewer/Documents/Inbox/Mail/part.pdf", 4, "committed",
                nil, nil, "<m@example.com>", "2", committed, nil, nil, nil,
            ])
            try db.execute(sql: insert, arguments: [
                text(5), nil, handler, "file", nil, "d.txt", "/containers/viewer/Documents/Inbox/Mail/d.txt", 4, "staged",
                Data("/inbox/d.txt".utf8), 110, nil, nil, nil, nil, nil, nil,
            ])
            try db.execute(sql: "UPDATE ledgerSequence SET last = 5 WHERE id = 1")
            try db.execute(sql: "INSERT INTO intakePoison (sourcePath, startedAt) VALUES ('/inbox/pkg.app', '2026-11-20 10:00:00.000')")
        }
        return ids
    }

    @Test func aLedgerOfTheSchemaBeforeIsMigratedWithEverythingInIt() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ids = try Self.ledgerBefore(scratch)

        let ledger = try Fixtures.ledger(scratch)
        defer { try? ledger.close() }

        // The same deliveries, in the same commit order: the URL first, then c, then the mail part.
        let owed = try ledger.pendingEvents(bundleIdentifier: Self.handler, after: 0, limit: 100)
        #expect(owed.map(\.deliveryID) == [ids[3], ids[2], ids[4]].map(\.uuidString))
        #expect(owed.map(\.sequence) == [1, 4, 5])
        #expect(try ledger.pendingCount(bundleIdentifier: Self.handler) == 3)
        #expect(ledger.pendingTally.owed(toHandler: Self.handler) == PendingTally.Amount(count: 3, bytes: 4 + 12 + 4))
        #expect(ledger.pendingTally.owed(forUser: 501) == PendingTally.Amount(count: 1, bytes: 12))
        let a = try #require(try ledger.record(deliveryID: ids[0]))
        #expect(a.state == .acknowledged && a.originalName == "a.txt" && a.sourcePath == FilePath("/inbox/a.txt"))
        #expect(a.acknowledgedAt != nil && a.sourceRemovedAt != nil && a.sequence == 2)
        #expect(try ledger.record(deliveryID: ids[1])?.state == .declined)
        #expect(try ledger.record(deliveryID: ids[3])?.url == "todolist://x")

        // What recovery asks: the staged file, and the committed file whose source is still there.
        #expect(try ledger.stagedRecords().map(\.deliveryID) == [ids[5]])
        #expect(try ledger.recordsWithSourcesKept().map(\.deliveryID) == [ids[2], ids[4]])
        let source = FileStatus(device: 1, inode: 102, size: 4, modificationTimeNanoseconds: 7)
        #expect(try ledger.deliveredRecords(forSources: [(source, FilePath("/inbox/c.txt"))])[0]?.deliveryID == ids[2])
        #expect(try ledger.deliveredParts(messageID: "<m@example.com>", mailbox: "Mail") == ["2"])
        #expect(try ledger.settleMarks(previousRunCrashed: true).map(\.sourcePath) == ["/inbox/pkg.app"])

        // It goes on: the staged file commits after everything, new deliveries after that.
        let recovered = try ledger.commit([ids[5]])
        #expect((recovered[ids[5]] ?? 0) > 5)
        let url = try ledger.recordURL(bundleIdentifier: Self.handler, url: "todolist://y")
        #expect(url.sequence > (recovered[ids[5]] ?? .max))
        #expect(try ledger.acknowledge(deliveryIDs: [ids[2], ids[3]], handled: true, bundleIdentifier: Self.handler) == [])
        #expect(try ledger.pendingEvents(bundleIdentifier: Self.handler, after: 0, limit: 100).map(\.deliveryID)
                == [ids[4], ids[5], url.deliveryID].map(\.uuidString))

        // The schema is the new one: no sequence table, the new indexes, and it is sound.
        let (tables, indexes, problems) = try ledger.pool.read { db in
            (try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
             try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name"),
             try String.fetchAll(db, sql: "PRAGMA integrity_check"))
        }
        #expect(!tables.contains("ledgerSequence") && tables.contains("delivery") && tables.contains("intakePoison"))
        #expect(indexes == ["delivery_acknowledged_copies", "delivery_handler", "delivery_message", "delivery_name", "delivery_owed", "delivery_source", "delivery_source_kept",
                            "undelivered_at", "undelivered_name"])
        #expect(problems == ["ok"])
    }

    /// The migration runs once: a ledger opened again is not migrated again, and keeps its rows.
    @Test func aMigratedLedgerOpensAgainUnchanged() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ids = try Self.ledgerBefore(scratch)
        do {
            let ledger = try Fixtures.ledger(scratch)
            try ledger.close()
        }
        let ledger = try Fixtures.ledger(scratch)
        defer { try? ledger.close() }
        #expect(try ledger.pendingEvents(bundleIdentifier: Self.handler, after: 0, limit: 100).map(\.deliveryID)
                == [ids[3], ids[2], ids[4]].map(\.uuidString))
        let applied = try ledger.pool.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") }
        #expect(applied.suffix(4) == ["oncePerBatch", "history", "copyRemovedAt", "redeliveries"] && applied.count(where: { $0 == "oncePerBatch" }) == 1)
    }
}
