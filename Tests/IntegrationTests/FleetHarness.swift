import DocRouteTestSupport
import Foundation
import Testing

/// A fleet for one test: a real PostgreSQL whose role `docroute` (password ``password``) owns the
/// database `fleet`, the docrouted hosts made on it (``host(_:leaseSeconds:database:password:extra:launchCommands:)``)
/// and the handlers subscribed on them (``subscribedHandler(on:bundleIdentifier:sourceLocation:)``).
/// ``tearDown()``, the test's `defer`, stops the handlers, stops and removes the hosts, then the server.
final class FleetHarness: @unchecked Sendable {
    static let password = "fleet-pass-7Qx"

    let server: PostgresServer
    private var hosts: [DaemonHarness] = []
    private var handlers: [HistoryHandler] = []

    init(tls: Bool = false) throws {
        server = try PostgresServer(tls: tls)
        do {
            try server.createRoleAndDatabase(role: "docroute", password: Self.password, database: "fleet")
        } catch {
            server.stop()
            throw error
        }
    }

    /// The URL of the fleet's database (or `database`) for role `user`.
    func url(user: String = "docroute", database: String = "fleet", sslmode: String? = nil) -> String {
        server.url(user: user, database: database, sslmode: sslmode)
    }

    /// A host named `name`, not started, on the fleet's database or the one `database` (a URL)
    /// names: ``DaemonHarness/fleetHost(_:database:password:leaseSeconds:extra:launchCommands:)``.
    func host(_ name: String, leaseSeconds: Int? = nil, database: String? = nil, password: String? = FleetHarness.password,
              extra: String = "", launchCommands: Bool = false) throws -> DaemonHarness {
        let harness = try DaemonHarness.fleetHost(name, database: database ?? url(), password: password, leaseSeconds: leaseSeconds,
                                                  extra: extra, launchCommands: launchCommands)
        hosts.append(harness)
        return harness
    }

    /// Hosts of these names, each with `leaseSeconds` (docrouted's default when nil), started; expected to be registered, all of
    /// them and no other, before it returns.
    func startedHosts(_ names: [String], leaseSeconds: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> [DaemonHarness] {
        let started = try names.map { try host($0, leaseSeconds: leaseSeconds) }
        for harness in started { try harness.start() }
        #expect(waitForHosts(names), "\(started.map { $0.daemonLog.suffix(2000) }.joined(separator: "\n"))", sourceLocation: sourceLocation)
        return started
    }

    /// Waits until the hosts named, and no other, are registered (their schema migrated) in the
    /// fleet's database (or `database`); with `live`, until they are the hosts whose heartbeat is
    /// within their lease.
    func waitForHosts(_ names: [String], live: Bool = false, database: String = "fleet", timeout: TimeInterval = 45) -> Bool {
        let expected = names.sorted().joined(separator: ",")
        let heartbeat = live ? " WHERE last_heartbeat >= now() - make_interval(secs => lease_seconds)" : ""
        return DaemonHarness.waitUntil(timeout: timeout) {
            ask("SELECT string_agg(name, ',' ORDER BY name) FROM hosts" + heartbeat, database: database) == expected
        }
    }

    /// psql's answer on the fleet's database (or `database`), "?" when psql fails: for polls and
    /// failure messages.
    func ask(_ sql: String, database: String = "fleet") -> String {
        (try? server.psql(sql, database: database)) ?? "?"
    }

    /// A ``HistoryHandler`` of `bundleIdentifier` started on `harness`'s socket, expected to have
    /// subscribed before it returns.
    func subscribedHandler(on harness: DaemonHarness, bundleIdentifier: String = FleetDeliveryIntegrationTests.molecules,
                           sourceLocation: SourceLocation = #_sourceLocation) -> HistoryHandler {
        let handler = HistoryHandler(socket: harness.socket, bundleIdentifier: bundleIdentifier)
        handlers.append(handler)
        handler.start()
        #expect(harness.waitUntil(timeout: 15) { handler.subscriptionCount > 0 }, "the handler did not subscribe on \(harness.socket)",
                sourceLocation: sourceLocation)
        return handler
    }

    /// Stops every handler (again, for those a test stopped itself: harmless), stops and removes
    /// every host, last made first, then stops the server and removes its data.
    func tearDown() {
        for handler in handlers { _ = handler.stop() }
        for harness in hosts.reversed() {
            harness.stop()
            harness.remove()
        }
        server.stop()
    }
}
