import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real docrouted with a `[fleet]` table against a real PostgreSQL: what `--check` says of each
/// way the database can be wrong, and a daemon that registers, beats, and waits out a database
/// that is down.
@Suite(.serialized) struct FleetIntegrationTests {
    static let password = FleetHarness.password

    /// `body` with a fleet (``FleetHarness``), torn down after it.
    func withFleet(tls: Bool = false, _ body: (FleetHarness) throws -> Void) throws {
        let fleet = try FleetHarness(tls: tls)
        defer { fleet.tearDown() }
        try body(fleet)
    }

    /// `docrouted --check`'s output and exit status.
    func check(_ harness: DaemonHarness) throws -> (output: String, status: Int32) {
        let (status, output) = try harness.check()
        return (output, status)
    }

    func fleetLines(_ output: String) -> String {
        output.split(separator: "\n").filter { $0.contains("fleet") }.joined(separator: "\n")
    }

    @Test func checkSaysAWrongPasswordWithoutPrintingEither() throws {
        try withFleet { fleet in
            let harness = try fleet.host("host-a", password: "wrong-pass-Zz9")
            let (output, status) = try check(harness)
            #expect(status == 1, "\(output)")
            #expect(output.contains("authentication-failed"), "\(output)")
            #expect(output.contains("password_file"), "\(output)")
            #expect(!output.contains("wrong-pass-Zz9") && !output.contains(Self.password), "\(output)")
        }
    }

    @Test func checkSaysTheDatabaseIsMissing() throws {
        try withFleet { fleet in
            let harness = try fleet.host("host-a", database: fleet.url(database: "nosuch"))
            let (output, status) = try check(harness)
            #expect(status == 1, "\(output)")
            #expect(output.contains("no-database") && output.contains("createdb"), "\(fleetLines(output))")
        }
    }

    @Test func checkSaysNobodyAnswers() throws {
        // A server made and stopped: its port was free a moment ago and nobody listens on it now.
        let server = try PostgresServer()
        let url = server.url(user: "docroute", database: "fleet")
        server.stop()
        let harness = try DaemonHarness.fleetHost("host-a", database: url, password: Self.password)
        defer { harness.remove() }
        let (output, status) = try check(harness)
        #expect(status == 1, "\(output)")
        #expect(output.contains("unreachable") && output.contains("no PostgreSQL answers"), "\(fleetLines(output))")
    }

    @Test func checkSaysAMissingPasswordFile() throws {
        try withFleet { fleet in
            let harness = try fleet.host("host-a", password: nil)
            let (output, status) = try check(harness)
            #expect(status == 1, "\(output)")
            #expect(output.contains("password-file"), "\(fleetLines(output))")
        }
    }

    @Test func checkSaysARoleThatMayNotCreateTheSchema() throws {
        try withFleet { fleet in
            // PostgreSQL 15 gives PUBLIC no CREATE on the public schema: a role that owns nothing may not make tables.
            try fleet.server.psql("CREATE ROLE reader LOGIN PASSWORD '\(Self.password)'")
            try fleet.server.psql("CREATE DATABASE shared OWNER postgres")
            let harness = try fleet.host("host-a", database: fleet.url(user: "reader", database: "shared"))
            let (output, status) = try check(harness)
            #expect(status == 1, "\(output)")
            #expect(output.contains("permission-denied") && output.contains("GRANT CREATE ON SCHEMA public TO reader"), "\(fleetLines(output))")
        }
    }

    @Test func checkSaysAnOlderSchemaIsMigratedAtStart() throws {
        try withFleet { fleet in
            let server = fleet.server
            // Version 1 as an earlier docrouted left it.
            try server.psql("""
                SET ROLE docroute;
                CREATE TABLE docroute_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), applied_by text NOT NULL);
                CREATE TABLE hosts (name text PRIMARY KEY, registry_digest text NOT NULL, bundle_identifiers text[] NOT NULL DEFAULT '{}',
                    docroute_version text NOT NULL, started_at timestamptz NOT NULL, last_heartbeat timestamptz NOT NULL, lease_seconds integer NOT NULL);
                INSERT INTO docroute_schema_migrations (version, applied_by) VALUES (1, 'old-host');
                """, database: "fleet")
            let harness = try fleet.host("host-a")
            let (output, status) = try check(harness)
            #expect(status == 0, "\(output)")
            #expect(output.contains("schema version 1 is older") && output.contains("migrates it at start"), "\(fleetLines(output))")
            #expect(output.contains("connected to"), "\(fleetLines(output))")
            // --check writes nothing.
            #expect(try server.psql("SELECT max(version) FROM docroute_schema_migrations", database: "fleet") == "1")
        }
    }

    @Test func checkVerifiesTheServerCertificateAgainstCAFile() throws {
        try withFleet(tls: true) { fleet in
            let certificate = try #require(fleet.server.certificateFile)
            let good = try fleet.host("host-a", database: fleet.url(sslmode: "verify-ca"), extra: "ca_file = \"\(certificate)\"")
            let (output, status) = try check(good)
            #expect(status == 0, "\(output)")
            #expect(output.contains("no docroute schema yet"), "\(fleetLines(output))")
            // Another authority than the server's: refused as tls.
            let other = try PostgresServer(tls: true)
            defer { other.stop() }
            let bad = try fleet.host("host-a", database: fleet.url(sslmode: "verify-ca"),
                                     extra: "ca_file = \"\(try #require(other.certificateFile))\"")
            let (refused, refusedStatus) = try check(bad)
            #expect(refusedStatus == 1, "\(refused)")
            #expect(refused.contains("(tls)"), "\(fleetLines(refused))")
        }
    }

    @Test func aDaemonRegistersItsHostAndBeats() throws {
        try withFleet { fleet in
            let server = fleet.server
            let harness = try fleet.startedHosts(["host-a"], leaseSeconds: 3)[0]
            let first = try server.psql("SELECT extract(epoch FROM last_heartbeat) FROM hosts WHERE name = 'host-a'", database: "fleet")
            let beat = harness.waitUntil(timeout: 15) {
                (try? server.psql("SELECT extract(epoch FROM last_heartbeat) FROM hosts WHERE name = 'host-a'", database: "fleet")).map { $0 != first } ?? false
            }
            #expect(beat, "no heartbeat after \(first)")
            #expect(try server.psql("SELECT max(version) FROM docroute_schema_migrations", database: "fleet") == "4")
            #expect(try server.psql("SELECT lease_seconds || ' ' || array_length(bundle_identifiers, 1) FROM hosts", database: "fleet").hasPrefix("3 "))
            // An inbox's file goes to the fleet: committed there, then it leaves the inbox.
            _ = try harness.drop("note.pdb", DeliveryIntegrationTests.pdb)
            #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(3000))")
            let owed = try server.psql("SELECT d.state || ' ' || doc.name FROM deliveries d JOIN documents doc ON doc.id = d.document_id", database: "fleet")
            #expect(owed == "owed note.pdb")
            #expect(!harness.daemonLog.contains(Self.password))
        }
    }

    /// A document is routed by the registry of the host where it arrives: `--check` names a host
    /// that loads other handlers, and what it has or lacks, as a warning.
    @Test func checkNamesAHostWhoseHandlersDiffer() throws {
        try withFleet { fleet in
            let server = fleet.server
            let harness = try fleet.startedHosts(["host-a"])[0]
            harness.stop()
            let agreeing = try check(harness)
            #expect(agreeing.status == 0, "\(agreeing.output)")
            #expect(fleetLines(agreeing.output).contains("no other host registered yet"), "\(agreeing.output)")

            _ = try server.psql("""
                INSERT INTO hosts (name, registry_digest, bundle_identifiers, docroute_version, started_at, last_heartbeat, lease_seconds)
                SELECT 'host-b', 'another', bundle_identifiers || ARRAY['org.example.only-on-b'], '0.2.0', now(), now(), 30 FROM hosts WHERE name = 'host-a';
                INSERT INTO hosts (name, registry_digest, bundle_identifiers, docroute_version, started_at, last_heartbeat, lease_seconds)
                SELECT 'host-c', registry_digest, bundle_identifiers, '0.2.0', now(), now(), 30 FROM hosts WHERE name = 'host-a'
                """, database: "fleet")
            let differing = try check(harness)
            let lines = fleetLines(differing.output)
            #expect(differing.status == 0, "\(differing.output)")
            #expect(lines.contains("1 other host loads the same"), "\(lines)")
            #expect(lines.contains("warning") && lines.contains("host host-b loads another handler registry: it has org.example.only-on-b, which this host lacks"),
                    "\(lines)")
            #expect(!lines.contains("host host-c"), "\(lines)")
            #expect(differing.output.contains("ready to deliver (1 warning)"), "\(differing.output)")
        }
    }

    /// A manifest added to a running host (and a reload) is published within a heartbeat: the
    /// registry other hosts compare against is the one this host routes by now.
    @Test func aHandlerAddedToARunningHostIsPublishedWithinAHeartbeat() throws {
        try withFleet { fleet in
            let server = fleet.server
            let harness = try fleet.startedHosts(["host-a"], leaseSeconds: 3)[0]
            let before = try server.psql("SELECT registry_digest FROM hosts WHERE name = 'host-a'", database: "fleet")

            try FileManager.default.copyItem(atPath: Fixtures.manifestsFolder + "/Transmission.plist", toPath: harness.handlers + "/.Transmission.tmp")
            #expect(rename(harness.handlers + "/.Transmission.tmp", harness.handlers + "/Transmission.plist") == 0)
            harness.signal(SIGHUP)
            let published = harness.waitUntil(timeout: 15) {
                let identifiers = (try? server.psql("SELECT array_to_string(bundle_identifiers, ',') FROM hosts WHERE name = 'host-a'", database: "fleet")) ?? ""
                return identifiers.split(separator: ",").contains("org.m0k.transmission")
            }
            #expect(published, "\(harness.daemonLog.suffix(3000))")
            let after = try server.psql("SELECT registry_digest FROM hosts WHERE name = 'host-a'", database: "fleet")
            #expect(after != before && !after.isEmpty)
            #expect(harness.daemonLog.contains("fleet: this host's handlers changed; published"), "\(harness.daemonLog.suffix(3000))")
        }
    }

    @Test func aDaemonStartedWhilePostgreSQLIsDownJoinsWhenItComesUp() throws {
        try withFleet { fleet in try startWhileDown(fleet) }
    }

    /// The body of the test above, a function of its own: written inline, it crashes Swift 6.3.1's
    /// SendNonSendable pass.
    func startWhileDown(_ fleet: FleetHarness) throws {
        let server = fleet.server
        let harness = try fleet.host("host-a", leaseSeconds: 3)
        try server.pause()
        try harness.start()
        #expect(harness.waitUntil(timeout: 15) { harness.daemonLog.contains("trying again") }, "\(harness.daemonLog.suffix(3000))")
        // An inbox's file waits in its inbox while the database is away, and intake says so.
        let early = try harness.drop("early.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitUntil(timeout: 15) { harness.daemonLog.contains("they stay in their inboxes") }, "\(harness.daemonLog.suffix(3000))")
        usleep(2_000_000)
        let waiting = FileManager.default.fileExists(atPath: early)
        #expect(waiting, "the file left its inbox while PostgreSQL was away")
        try server.start()
        #expect(fleet.waitForHosts(["host-a"]), "\(harness.daemonLog.suffix(3000))")
        #expect(harness.daemonLog.contains("PostgreSQL reached again"), "\(harness.daemonLog.suffix(3000))")
        // Intake tries again by itself (its backoff reaches a minute at most): the file is
        // committed once, then leaves its inbox.
        #expect(harness.waitForInboxDrained(timeout: 90), "\(harness.daemonLog.suffix(3000))")
        let committed = try server.psql("SELECT count(*) FROM documents WHERE name = 'early.pdb'", database: "fleet")
        #expect(committed == "1")
        #expect(!harness.daemonLog.contains(Self.password))
    }
}
