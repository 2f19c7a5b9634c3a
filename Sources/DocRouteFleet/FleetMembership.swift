import DocRouteConfiguration
import Foundation
import Logging
import PostgresNIO

/// This host's part in the fleet while docrouted runs: at start it migrates the schema and
/// registers the host, then beats every third of `lease_seconds`. While PostgreSQL cannot be
/// reached it logs, waits (doubling up to a minute) and tries again by itself; the local delivery
/// goes on meanwhile. Runs until its task is cancelled.
package struct FleetMembership: Sendable {
    package let database: FleetDatabase
    package let host: FleetHost
    package let logger: Logger
    /// The longest wait between two attempts to reach PostgreSQL.
    package var maximumBackoff: Duration = .seconds(60)
    /// This host's registry as loaded now, looked at on each heartbeat: a reload, or a manifest
    /// added or changed, is published within one, so `status` and `--check` on other hosts compare
    /// against what this host routes by now. Nil keeps ``host`` as it was at start.
    package var currentHost: (@Sendable () -> FleetHost)?

    package init(database: FleetDatabase, host: FleetHost, logger: Logger) {
        self.database = database
        self.host = host
        self.logger = logger
    }

    var lease: Duration { .seconds(database.configuration.leaseSeconds) }
    var heartbeat: Duration { .milliseconds(Int64(database.configuration.heartbeatSeconds * 1000)) }

    /// Joins the fleet and keeps this host's heartbeat until cancelled; never throws.
    package func run() async {
        var backoff: Duration = .seconds(1)
        var failures = 0
        while !Task.isCancelled {
            let connection: PostgresConnection
            do throws(FleetError) {
                connection = try await database.connect(logger: logger)
            } catch {
                failures += 1
                guard await wait(after: error, failures: failures, backoff: &backoff) else { return }
                continue
            }
            do {
                var published = now()
                try await join(connection, as: published)
                if failures > 0 {
                    logger.notice("fleet: PostgreSQL reached again", metadata: ["database": "\(database.address)", "attempts": "\(failures + 1)"])
                }
                failures = 0
                backoff = .seconds(1)
                while true {
                    try await Task.sleep(for: heartbeat)
                    let current = now()
                    if current.registryDigest != published.registryDigest || current.bundleIdentifiers != published.bundleIdentifiers {
                        try await publishRegistry(connection, current)
                        published = current
                    }
                    try await beat(connection, as: published)
                }
            } catch is CancellationError {
                FleetQueue.close(connection)
                return
            } catch {
                // Not waited for: closing a connection the server cut off may never finish.
                FleetQueue.close(connection)
                if Task.isCancelled { return }
                failures += 1
                guard await wait(after: database.explain(error), failures: failures, backoff: &backoff) else { return }
            }
        }
    }

    /// Logs `error` and sleeps `backoff`, doubling it for the next time; false when cancelled.
    func wait(after error: FleetError, failures: Int, backoff: inout Duration) async -> Bool {
        let level: Logger.Level = error.code == .unreachable ? .warning : .error
        logger.log(level: level, "fleet: \(error.message); trying again in \(backoff.components.seconds) s, local delivery goes on meanwhile", metadata: [
            "code": "\(error.code.rawValue)", "database": "\(database.address)", "attempt": "\(failures)", "host": "\(host.name)",
        ])
        do {
            try await Task.sleep(for: backoff)
        } catch {
            return false
        }
        backoff = min(backoff * 2, maximumBackoff)
        return true
    }

    /// This host with its registry as loaded now.
    func now() -> FleetHost {
        guard let currentHost else { return host }
        var current = currentHost()
        // What it can launch is published by the launcher, narrowed to what it would start.
        current.launchable = host.launchable
        return current
    }

    /// Publishes a registry that changed since the last publication, and names the hosts whose
    /// handlers now differ, as a join does.
    func publishRegistry(_ connection: PostgresConnection, _ current: FleetHost) async throws {
        _ = try await withLease(connection) {
            try await connection.query("""
                UPDATE hosts SET registry_digest = \(current.registryDigest), bundle_identifiers = \(current.bundleIdentifiers)
                WHERE name = \(current.name)
                """, logger: logger)
        }
        logger.notice("fleet: this host's handlers changed; published", metadata: [
            "host": "\(current.name)", "handlers": "\(current.bundleIdentifiers.count)",
        ])
        let peers = try await withLease(connection) { try await FleetRegistryAgreement.peers(of: current.name, on: connection, logger: logger) }
        let differences = FleetRegistryAgreement(host: current, peers: peers).differences
        for difference in differences {
            logger.warning("fleet: \(difference.description)", metadata: ["host": "\(current.name)", "other-host": "\(difference.host)"])
        }
        if differences.isEmpty, !peers.isEmpty {
            logger.notice("fleet: this host's handlers are the same as every other host's", metadata: ["host": "\(current.name)"])
        }
    }

    /// Migrates the schema if it is older and registers this host.
    func join(_ connection: PostgresConnection, as host: FleetHost) async throws {
        let migration = try await withLease(connection) { try await FleetSchema.migrate(on: connection, host: host.name, logger: logger) }
        if migration.applied {
            logger.notice("fleet: schema migrated", metadata: ["from": "\(migration.from)", "to": "\(migration.to)", "database": "\(database.address)"])
        }
        try await withLease(connection) { try await register(connection, as: host) }
        logger.notice("fleet: host registered", metadata: [
            "host": "\(host.name)", "database": "\(database.address)", "schema": "\(migration.to)",
            "handlers": "\(host.bundleIdentifiers.count)", "heartbeat-seconds": "\(database.configuration.heartbeatSeconds)",
        ])
        let peers = try await withLease(connection) { try await FleetRegistryAgreement.peers(of: host.name, on: connection, logger: logger) }
        for difference in FleetRegistryAgreement(host: host, peers: peers).differences {
            logger.warning("fleet: \(difference.description)", metadata: ["host": "\(host.name)", "other-host": "\(difference.host)"])
        }
    }

    func register(_ connection: PostgresConnection, as host: FleetHost) async throws {
        try await connection.query("""
            INSERT INTO hosts (name, registry_digest, bundle_identifiers, launchable, docroute_version, started_at, last_heartbeat, lease_seconds)
            VALUES (\(host.name), \(host.registryDigest), \(host.bundleIdentifiers), \(host.launchable), \(host.version), now(), now(), \(database.configuration.leaseSeconds))
            ON CONFLICT (name) DO UPDATE SET
                registry_digest = EXCLUDED.registry_digest, bundle_identifiers = EXCLUDED.bundle_identifiers, launchable = EXCLUDED.launchable,
                docroute_version = EXCLUDED.docroute_version, started_at = EXCLUDED.started_at,
                last_heartbeat = EXCLUDED.last_heartbeat, lease_seconds = EXCLUDED.lease_seconds
            """, logger: logger)
    }

    /// One heartbeat; a host whose row was removed meanwhile registers again.
    func beat(_ connection: PostgresConnection, as host: FleetHost) async throws {
        let found = try await withLease(connection) {
            let rows = try await connection.query("UPDATE hosts SET last_heartbeat = now() WHERE name = \(host.name) RETURNING name", logger: logger)
            var count = 0
            for try await _ in rows { count += 1 }
            return count
        }
        if found == 0 {
            logger.notice("fleet: this host's row was gone; registering again", metadata: ["host": "\(host.name)"])
            try await withLease(connection) { try await register(connection, as: host) }
        }
    }

    /// Runs `body`, failing it as `unreachable` when it takes longer than a lease: a server cut
    /// off by the network answers nothing, so the connection is closed and made anew. The call
    /// ends then without waiting for `body` (``FleetDeadline``): a query on a connection the
    /// server closed while it was idle may never end, even once the connection is closed.
    func withLease<T: Sendable>(_ connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let lease = self.lease
        let address = database.address
        return try await FleetDeadline<T>.run(within: lease, expired: { FleetQueue.close(connection) }, failure: {
            FleetError(code: .unreachable, message: "PostgreSQL at \(address) did not answer within lease_seconds (\(lease.components.seconds) s)")
        }, body)
    }
}

/// Said as its host and address alone, never through its settings (which hold the password).
extension FleetMembership: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "FleetMembership(host: \(host.name), database: \(database.address))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["host": host.name, "database": database.address]) }
}
