import DocRouteConfiguration
@testable import DocRouteFleet
import DocRouteTestSupport
import Logging
import PostgresNIO
import Testing

/// The fleet's schema in a real PostgreSQL: made on an empty database, migrated from an older
/// version, migrated once when two hosts start together, and refused when it is newer.
@Suite(.serialized) struct FleetSchemaTests {
    static let logger = Logger(label: "test.fleet", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A server with role `docroute` owning database `fleet`; `body` gets the database settings.
    /// The server's programs are waited for on threads of their own (``runBlocking(_:)``): a
    /// process waited for on the cooperative pool can hold every thread that would see it end.
    func withDatabase(_ body: (PostgresServer, FleetDatabase) async throws -> Void) async throws {
        let server = try await runBlocking { try PostgresServer() }
        try await withTearDown(server, { server in _ = try? await runBlocking { server.stop() } }) { server in
            try await runBlocking { try server.createRoleAndDatabase(role: "docroute", password: "s3cret-word", database: "fleet") }
            let configuration = FleetConfiguration(database: try FleetDatabaseAddress.parse(server.url(user: "docroute", database: "fleet")), hostName: "alpha")
            try await body(server, try FleetDatabase(configuration: configuration, password: "s3cret-word"))
        }
    }

    /// SQL as the superuser in database `fleet`, on a thread of its own.
    @discardableResult
    func sql(_ server: PostgresServer, _ text: String) async throws -> String {
        try await runBlocking { try server.psql(text, database: "fleet") }
    }

    func columns(_ server: PostgresServer, _ table: String) async throws -> Set<String> {
        Set(try await sql(server, "SELECT column_name FROM information_schema.columns WHERE table_name = '\(table)'")
            .split(separator: "\n").map(String.init))
    }

    func tables(_ server: PostgresServer) async throws -> [String] {
        try await sql(server, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
            .split(separator: "\n").map(String.init)
    }

    @Test func anEmptyDatabaseGetsTheLatestSchema() async throws {
        try await withDatabase { server, database in
            let migration = try await database.withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "alpha", logger: Self.logger)
            }
            #expect(migration.from == 0)
            #expect(migration.to == FleetSchema.latestVersion)
            #expect(try await tables(server) == ["deliveries", "docroute_schema_migrations", "document_chunks", "documents", "history_events", "hosts", "launches"])
            #expect(try await sql(server, "SELECT version || ':' || applied_by FROM docroute_schema_migrations ORDER BY version") == "1:alpha\n2:alpha\n3:alpha\n4:alpha")
            // What the choice of a host to launch a handler connected nowhere reads and records.
            #expect(try await columns(server, "hosts").isSuperset(of: ["subscribed", "launchable", "lease_seconds", "last_heartbeat"]))
            #expect(try await columns(server, "launches") == ["handler", "host", "requested_at"])
            // The claim a host makes: in commit order, under a lease, skipping rows being claimed.
            #expect(try await sql(server, """
                SELECT id FROM deliveries WHERE handler = 'h' AND (state = 'owed' OR (state = 'claimed' AND lease_until < now()))
                ORDER BY seq LIMIT 10 FOR UPDATE SKIP LOCKED
                """) == "")
            #expect(try await sql(server, "SELECT indexdef FROM pg_indexes WHERE indexname = 'deliveries_claimable'").contains("(handler, seq)"))
            // A claiming host's copy needs these; intake finds a committed source by the unique pair.
            #expect(try await columns(server, "documents").isSuperset(of: ["name", "type_identifier", "extension_chain", "source_application", "annotation", "source_identity", "intake_host"]))
            #expect(try await columns(server, "deliveries").isSuperset(of: ["seq", "handler", "mailbox", "handled", "lease_until", "attempts"]))
            #expect(try await sql(server, """
                SELECT count(*) FROM pg_indexes WHERE tablename = 'documents' AND indexdef LIKE 'CREATE UNIQUE INDEX%(intake_host, source_identity)'
                """) == "1")
            // Again: nothing to do.
            let again = try await database.withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "alpha", logger: Self.logger)
            }
            #expect(!again.applied)
        }
    }

    @Test func anOlderSchemaIsMigratedKeepingItsRows() async throws {
        try await withDatabase { server, database in
            _ = try await database.withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "old", to: 1, logger: Self.logger)
            }
            #expect(try await tables(server) == ["docroute_schema_migrations", "hosts"])
            try await sql(server, """
                INSERT INTO hosts (name, registry_digest, docroute_version, started_at, last_heartbeat, lease_seconds)
                VALUES ('old', 'abc', '0.1.0', now(), now(), 30)
                """)
            let migration = try await database.withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "new", logger: Self.logger)
            }
            #expect(migration == FleetSchema.Migration(from: 1, to: 4))
            #expect(try await sql(server, "SELECT name FROM hosts") == "old")
            #expect(try await sql(server, "SELECT version || ':' || applied_by FROM docroute_schema_migrations ORDER BY version") == "1:old\n2:new\n3:new\n4:new")
            // A host registered before version 4 can launch nothing until it registers again.
            #expect(try await sql(server, "SELECT launchable FROM hosts") == "{}")
        }
    }

    @Test func aVersionTwoSchemaIsMigratedKeepingItsDeliveries() async throws {
        try await withDatabase { server, database in
            _ = try await database.withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "old", to: 2, logger: Self.logger)
            }
            try await sql(server, """
                INSERT INTO hosts (name, registry_digest, docroute_version, started_at, last_heartbeat, lease_seconds)
                VALUES ('old', 'abc', '0.1.0', now(), now(), 30);
                INSERT INTO documents (id, intake_host, source_identity, name, size)
                VALUES ('00000000-0000-0000-0000-000000000001', 'old', 'old 1:2 3 4 /in/a.pdf', 'a.pdf', 3);
                INSERT INTO deliveries (id, document_id, handler, mailbox)
                VALUES ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-000000000001', 'com.example.h', 'inbox'),
                       ('00000000-0000-0000-0000-0000000000d2', '00000000-0000-0000-0000-000000000001', 'com.example.h', 'inbox')
                """)
            let migration = try await database.withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "new", logger: Self.logger)
            }
            #expect(migration == FleetSchema.Migration(from: 2, to: 4))
            #expect(try await sql(server, "SELECT version || ':' || applied_by FROM docroute_schema_migrations ORDER BY version") == "1:old\n2:old\n3:new\n4:new")
            // The deliveries there before got a claim order, and the new columns their defaults.
            #expect(try await sql(server, "SELECT count(DISTINCT seq) FROM deliveries WHERE state = 'owed'") == "2")
            #expect(try await sql(server, "SELECT extension_chain || '|' || annotation::text FROM documents") == "|{}")
            // Host names are no longer references: a document of a host with no row is accepted.
            try await sql(server, """
                INSERT INTO documents (id, intake_host, source_identity, name, size)
                VALUES ('00000000-0000-0000-0000-000000000002', 'unregistered', 'x', 'b.pdf', 0)
                """)
        }
    }

    @Test func twoHostsStartingTogetherMigrateOnce() async throws {
        try await withDatabase { server, database in
            // Both connected before either begins, then both migrate at once, many times over: from
            // an empty database, and from versions 2 and 3 (a fleet upgraded host by host).
            for round in 0..<6 {
                if round > 0 { try await sql(server, "DROP TABLE hosts, documents, document_chunks, deliveries, history_events, launches, docroute_schema_migrations CASCADE") }
                let fromTwo = round % 3 == 1
                let fromThree = round % 3 == 2
                if fromTwo || fromThree {
                    _ = try await database.withConnection(logger: Self.logger) { connection in
                        try await FleetSchema.migrate(on: connection, host: "old", to: fromTwo ? 2 : 3, logger: Self.logger)
                    }
                }
                let first = try await database.connect(logger: Self.logger)
                let second = try await database.connect(logger: Self.logger)
                async let a = FleetSchema.migrate(on: first, host: "alpha", logger: Self.logger)
                async let b = FleetSchema.migrate(on: second, host: "beta", logger: Self.logger)
                let results = try await [a, b]
                try await first.close()
                try await second.close()
                #expect(results.filter(\.applied).count == 1, "\(results)")
                let rows = try await sql(server, "SELECT version || ':' || applied_by FROM docroute_schema_migrations ORDER BY version")
                let expected = fromTwo ? ["1:old\n2:old\n3:alpha\n4:alpha", "1:old\n2:old\n3:beta\n4:beta"]
                    : fromThree ? ["1:old\n2:old\n3:old\n4:alpha", "1:old\n2:old\n3:old\n4:beta"]
                    : ["1:alpha\n2:alpha\n3:alpha\n4:alpha", "1:beta\n2:beta\n3:beta\n4:beta"]
                #expect(expected.contains(rows), "\(rows)")
            }
        }
    }

    @Test func aNewerSchemaIsRefusedAndLeftAlone() async throws {
        try await withDatabase { server, database in
            _ = try await database.withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "alpha", logger: Self.logger)
            }
            try await sql(server, "INSERT INTO docroute_schema_migrations (version, applied_by) VALUES (\(FleetSchema.latestVersion + 1), 'future')")
            await #expect {
                try await database.withConnection(logger: Self.logger) { connection in
                    try await FleetSchema.migrate(on: connection, host: "alpha", logger: Self.logger)
                }
            } throws: { error in
                (error as? FleetError)?.code == .schemaNewer && "\(error)".contains("upgrade docroute")
            }
            #expect(try await sql(server, "SELECT max(version) FROM docroute_schema_migrations") == "\(FleetSchema.latestVersion + 1)")
        }
    }

    @Test func aWrongPasswordIsAuthenticationFailedWithoutThePassword() async throws {
        try await withDatabase { server, _ in
            let configuration = FleetConfiguration(database: try FleetDatabaseAddress.parse(server.url(user: "docroute", database: "fleet")),
                                                   hostName: "alpha", passwordFile: "/etc/docroute/db-password")
            let wrong = try FleetDatabase(configuration: configuration, password: "not-the-right-one")
            await #expect {
                _ = try await wrong.connect(logger: Self.logger)
            } throws: { error in
                (error as? FleetError)?.code == .authenticationFailed && !"\(error)".contains("not-the-right-one")
            }
        }
    }
}
