import Logging
import PostgresNIO

/// docroute's tables in the fleet's database, versioned: each version a list of statements, applied
/// in order, each recorded in `docroute_schema_migrations` by the host that applied it.
///
/// Hosts migrate at start, each in one transaction that first takes a transaction-scoped advisory
/// lock: a second host starting at the same moment waits for the first one's commit, then finds
/// the schema current and changes nothing. A database whose schema is newer than this binary knows
/// is refused rather than written with older assumptions.
package enum FleetSchema {
    /// The version this docrouted writes and reads.
    package static let latestVersion = 4

    /// The advisory lock all hosts migrate under: "docroute" in ASCII, as a bigint.
    package static let migrationLockKey: Int64 = 0x646f_6372_6f75_7465

    /// The table that records which versions were applied.
    package static let versionTable = "docroute_schema_migrations"

    /// The tables of the latest version, in the order they are made.
    package static let tables = ["hosts", "documents", "document_chunks", "deliveries", "history_events", "launches"]

    /// Each version's statements, version 1 first.
    static let migrations: [[String]] = [
        // 1: the hosts of the fleet, each with its registry's digest and its heartbeat.
        [
            """
            CREATE TABLE hosts (
                name text PRIMARY KEY,
                registry_digest text NOT NULL,
                bundle_identifiers text[] NOT NULL DEFAULT '{}',
                docroute_version text NOT NULL,
                started_at timestamptz NOT NULL,
                last_heartbeat timestamptz NOT NULL,
                lease_seconds integer NOT NULL
            )
            """,
        ],
        // 2: documents with their bytes in chunks (streamed, never whole in memory), the
        // deliveries hosts claim with FOR UPDATE SKIP LOCKED under a lease, and the history.
        [
            """
            CREATE TABLE documents (
                id uuid PRIMARY KEY,
                intake_host text NOT NULL REFERENCES hosts (name),
                source_identity text NOT NULL,
                name text NOT NULL,
                type_identifier text,
                size bigint NOT NULL CHECK (size >= 0),
                sha256 bytea,
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (intake_host, source_identity)
            )
            """,
            """
            CREATE TABLE document_chunks (
                document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                chunk_index integer NOT NULL CHECK (chunk_index >= 0),
                bytes bytea NOT NULL,
                PRIMARY KEY (document_id, chunk_index)
            )
            """,
            """
            CREATE TABLE deliveries (
                id uuid PRIMARY KEY,
                document_id uuid REFERENCES documents (id) ON DELETE CASCADE,
                url text,
                handler text NOT NULL,
                mailbox text NOT NULL,
                state text NOT NULL DEFAULT 'owed' CHECK (state IN ('owed', 'claimed', 'acknowledged', 'failed')),
                claimed_by text REFERENCES hosts (name),
                lease_until timestamptz,
                attempts integer NOT NULL DEFAULT 0,
                created_at timestamptz NOT NULL DEFAULT now(),
                acknowledged_at timestamptz,
                CHECK ((document_id IS NULL) <> (url IS NULL))
            )
            """,
            // What a host claims: a handler's unacknowledged deliveries, oldest first.
            "CREATE INDEX deliveries_claimable ON deliveries (handler, created_at) WHERE state IN ('owed', 'claimed')",
            """
            CREATE TABLE history_events (
                id bigserial PRIMARY KEY,
                document_id uuid,
                delivery_id uuid,
                host text NOT NULL,
                event text NOT NULL,
                at timestamptz NOT NULL DEFAULT now(),
                detail jsonb NOT NULL DEFAULT '{}'
            )
            """,
            "CREATE INDEX history_events_document ON history_events (document_id, at)",
        ],
        // 3: what a claiming host needs to write its copy and announce it (the file name is
        // `documents.name`, the type identifier `documents.type_identifier`), the order deliveries
        // are claimed in, whether an acknowledgement was a decline, and what each host has
        // subscribed.
        [
            """
            ALTER TABLE documents
                ADD COLUMN extension_chain text NOT NULL DEFAULT '',
                ADD COLUMN source_application text NOT NULL DEFAULT '',
                ADD COLUMN annotation jsonb NOT NULL DEFAULT '{}'
            """,
            // Intake commits before its host's membership may have registered it (both start
            // together, and a host's row may be removed and made again), and a host's row must
            // be removable while its documents are still owed: the host names stay plain text.
            "ALTER TABLE documents DROP CONSTRAINT IF EXISTS documents_intake_host_fkey",
            "ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_claimed_by_fkey",
            """
            ALTER TABLE deliveries
                ADD COLUMN seq bigserial NOT NULL,
                ADD COLUMN handled boolean
            """,
            // The claim: a handler's owed or leased deliveries in commit order.
            "DROP INDEX IF EXISTS deliveries_claimable",
            "CREATE INDEX deliveries_claimable ON deliveries (handler, seq) WHERE state IN ('owed', 'claimed')",
            // Renewing a host's leases, and telling whether every delivery of a document has ended.
            "CREATE INDEX deliveries_claimed_by ON deliveries (claimed_by) WHERE state = 'claimed'",
            "CREATE INDEX deliveries_document ON deliveries (document_id)",
            // The handlers subscribed on each host, for `status`.
            "ALTER TABLE hosts ADD COLUMN subscribed text[] NOT NULL DEFAULT '{}'",
        ],
        // 4: launch on demand across the fleet. Each host publishes the handlers it can launch
        // (a manifest with a launch command); the host that launches a handler connected nowhere
        // records it, so no other host launches it again while that launch may still subscribe.
        [
            "ALTER TABLE hosts ADD COLUMN launchable text[] NOT NULL DEFAULT '{}'",
            """
            CREATE TABLE launches (
                handler text PRIMARY KEY,
                host text NOT NULL,
                requested_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ],
    ]

    /// The sequences the latest version's tables draw from, which a role needs USAGE on.
    package static let sequences = ["history_events_id_seq", "deliveries_seq_seq"]

    /// What a migration did.
    package struct Migration: Sendable, Hashable {
        /// The version found before.
        package var from: Int
        /// The version left.
        package var to: Int

        /// Whether this call applied anything (false: another host had, or nothing was due).
        package var applied: Bool { to > from }
    }

    /// The schema's version: 0 when no docroute table is there yet.
    package static func version(on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let exists = try await connection.query("SELECT to_regclass(\(versionTable)) IS NOT NULL", logger: logger)
        for try await present in exists.decode(Bool.self) where !present { return 0 }
        let rows = try await connection.query("SELECT coalesce(max(version), 0)::int8 FROM docroute_schema_migrations", logger: logger)
        for try await version in rows.decode(Int64.self) { return Int(version) }
        return 0
    }

    /// Why a database whose schema is `version`, newer than this binary's, is not used: the
    /// same words at start and in `--check`.
    static func newer(_ version: Int) -> FleetError {
        FleetError(code: .schemaNewer, message: """
            the fleet's database has schema version \(version), newer than this docrouted's \(latestVersion): \
            another host runs a newer docroute; upgrade docroute on this host
            """)
    }

    /// Brings the schema to `target` (the latest by default) in one transaction under the advisory
    /// lock; `host` is recorded as who applied each version. A schema newer than `target` is
    /// `schema-newer` and changes nothing.
    @discardableResult
    package static func migrate(on connection: PostgresConnection, host: String, to target: Int = latestVersion, logger: Logger) async throws -> Migration {
        precondition((1...latestVersion).contains(target), "no such schema version")
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLockKey))", logger: logger)
            // Only when missing: CREATE … IF NOT EXISTS still asks for the CREATE privilege,
            // which a role that only uses an existing schema need not have.
            let exists = try await connection.query("SELECT to_regclass(\(versionTable)) IS NOT NULL", logger: logger)
            var present = false
            for try await value in exists.decode(Bool.self) { present = value }
            if !present {
                try await connection.query("""
                    CREATE TABLE docroute_schema_migrations (
                        version integer PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now(),
                        applied_by text NOT NULL
                    )
                    """, logger: logger)
            }
            let found = try await version(on: connection, logger: logger)
            if found > latestVersion { throw newer(found) }
            if found < target {
                for version in (found + 1)...target {
                    for statement in migrations[version - 1] {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query("INSERT INTO docroute_schema_migrations (version, applied_by) VALUES (\(version), \(host))", logger: logger)
                }
            }
            try await connection.query("COMMIT", logger: logger)
            return Migration(from: found, to: max(found, target))
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
