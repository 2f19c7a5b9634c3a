import Foundation
import GRDB

/// The SQLite ledger's schema, as the migrations that made it: a ledger written by any earlier
/// docrouted is taken to the current schema when it is opened, each migration in a transaction.
extension DeliveryLedger {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("deliveries") { db in
            // Each migration's SQL is frozen as it was released: a ledger an earlier docrouted
            // wrote is taken forward by exactly these statements, and SQLite keeps each
            // `CREATE` text verbatim in `sqlite_master`. So the columns this table shares with
            // ``deliveryColumns`` (the table `oncePerBatch` makes) are written out twice on
            // purpose: a shared piece would tie two released schemas to one edit.
            //
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
        migrator.registerMigration("oncePerBatch", migrate: migrateToOncePerBatch)
        // A document's history: the events a row did not keep, and the documents that never
        // became deliveries (see DeliveryLedger+History.swift).
        migrator.registerMigration("history", migrate: addHistory)
        // When a retention sweep settled an acknowledged copy (removed it, or found it gone), so the
        // next sweep reads only the copies still to settle (DeliveryLedger+Retention.swift).
        migrator.registerMigration("copyRemovedAt") { db in
            // A development ledger may have the column from before the table was rebuilt.
            if try !db.columns(in: "delivery").contains(where: { $0.name == "copyRemovedAt" }) {
                try db.execute(sql: "ALTER TABLE delivery ADD COLUMN copyRemovedAt DATETIME")
            }
            try db.execute(sql: """
                CREATE INDEX IF NOT EXISTS delivery_acknowledged_copies ON delivery (bundleIdentifier, acknowledgedAt, id)
                    WHERE state = 'acknowledged' AND kind = 'file' AND copyRemovedAt IS NULL;
                """)
        }
        // The rounds before a redelivery (`docroutectl redeliver`), as a JSON array, so the
        // history keeps who was told and how it ended each time (DeliveryLedger+Redelivery.swift).
        migrator.registerMigration("redeliveries") { db in
            try db.execute(sql: "ALTER TABLE delivery ADD COLUMN redeliveries TEXT")
        }
        return migrator
    }

    /// The schema written once per batch. Each delivery row is inserted once (one multi-row
    /// insert per batch) and then updated per batch, never per row: one statement commits a
    /// batch's rows, one records a group of acknowledgements, one notes a chunk of sources gone.
    ///
    /// - The commit order is the row id (`AUTOINCREMENT`: never reused, even after rows are
    ///   removed), so committing sets no sequence and touches no index. A batch staged before a
    ///   URL was committed gets new ids, after the URL's, when it commits (``commit(_:_:at:staged:owed:)``):
    ///   a handler is sent its documents in the order they were committed.
    /// - Indexes only for the queries that run: what a handler is owed (`delivery_owed`, its
    ///   rows leave it when acknowledged); the sources of deliveries, for the lookup after a
    ///   crash (`delivery_source`) and those not yet noted removed (`delivery_source_kept`, left
    ///   when noted); a message's parts (`delivery_message`, mail only); a document's history by
    ///   name (`delivery_name`) and by handler and time (`delivery_handler`); and the delivery id
    ///   (acknowledgements, history). The row id orders everything else.
    ///
    /// The schema before had seven indexes besides the id's, four of them changed at commit, and
    /// a row was written four times, each time by a statement of its own.
    static func migrateToOncePerBatch(_ db: Database) throws {
        let last = try Int64.fetchOne(db, sql: "SELECT last FROM ledgerSequence WHERE id = 1") ?? 0
        try db.execute(sql: """
            CREATE TABLE deliveryOncePerBatch (\(deliveryColumns));
            INSERT INTO deliveryOncePerBatch (id, \(columnsBeforeOncePerBatch))
                SELECT COALESCE(sequence, \(last) + ROW_NUMBER() OVER (PARTITION BY sequence IS NULL ORDER BY id)),
                       \(columnsBeforeOncePerBatch)
                FROM delivery ORDER BY 1;
            DROP TABLE delivery;
            DROP TABLE ledgerSequence;
            ALTER TABLE deliveryOncePerBatch RENAME TO delivery;
            DELETE FROM sqlite_sequence WHERE name IN ('delivery', 'deliveryOncePerBatch');
            INSERT INTO sqlite_sequence (name, seq) VALUES ('delivery', MAX(\(last), (SELECT COALESCE(MAX(id), 0) FROM delivery)));
            \(deliveryIndexes)
            """)
    }

    /// The columns the schema before had, besides `id` and `sequence`: what the migration copies.
    static let columnsBeforeOncePerBatch = """
        deliveryID, bundleIdentifier, kind, url, mailbox, originalName, extensionChain, containerPath, \
        finalPath, finalDevice, finalInode, temporaryPath, contentType, size, sha256, \
        sourceApplication, annotation, state, sourcePath, sourceDevice, sourceInode, sourceSize, \
        sourceMtimeNs, messageID, partPath, createdAt, committedAt, acknowledgedAt, sourceRemovedAt, requesterUID
        """

    /// The `delivery` table's columns, as the migration to it made them. Frozen history, like the
    /// first migration's table (which repeats most of them on purpose): never edited, only
    /// followed by new migrations.
    static let deliveryColumns = """
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        deliveryID TEXT NOT NULL UNIQUE,
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
        sourceRemovedAt DATETIME,
        requesterUID INTEGER
        """

    /// The `delivery` table's indexes (see ``migrateToOncePerBatch(_:)``).
    static let deliveryIndexes = """
        CREATE INDEX delivery_owed ON delivery (bundleIdentifier, id) WHERE acknowledgedAt IS NULL;
        CREATE INDEX delivery_handler ON delivery (bundleIdentifier, createdAt);
        CREATE INDEX delivery_name ON delivery (originalName) WHERE originalName IS NOT NULL;
        CREATE INDEX delivery_source ON delivery (sourceDevice, sourceInode) WHERE sourceInode IS NOT NULL;
        CREATE INDEX delivery_source_kept ON delivery (id) WHERE sourceRemovedAt IS NULL AND kind = 'file';
        CREATE INDEX delivery_message ON delivery (messageID, partPath) WHERE messageID IS NOT NULL;
        """
}
