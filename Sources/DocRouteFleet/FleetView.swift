import DocRouteProtocol
import Foundation
import Logging
import PostgresNIO

/// The fleet as `status` shows it from one host: every host with its heartbeat, its handlers and
/// what it holds, and the deliveries still owed, by handler.
///
/// Read on a connection of its own, never the ``FleetQueue``'s, so `status` does not wait behind
/// a large document's commit; a database that does not answer within ``timeout`` is said so.
package struct FleetView: Sendable, Hashable {
    /// One host's row.
    package struct Host: Sendable, Hashable {
        package var name: String
        package var secondsSinceHeartbeat: Double
        package var leaseSeconds: Int
        package var version: String
        /// Its registry's digest is this host's.
        package var registryAgrees: Bool
        package var subscribed: [String]
        /// The handlers it can launch (a launch command in its manifest).
        package var launchable: [String] = []
        /// Deliveries it holds under a lease (run out or not).
        package var claimed: Int

        /// Heard from within its lease.
        package var isLive: Bool { secondsSinceHeartbeat <= Double(leaseSeconds) }
    }

    package var hosts: [Host]
    /// Deliveries committed and claimed by no host, by handler.
    package var owedByHandler: [String: Int]
    /// The host that recorded a launch of a handler within its lease, by lowercased handler.
    package var launches: [String: String] = [:]

    /// Why deliveries owed to a handler subscribed on no live host are not being taken: who
    /// launches it, or that no live host can (``FleetLaunchChoice``); by handler.
    package var waiting: [String: String] {
        let candidates = hosts.map {
            FleetLaunchChoice.Candidate(name: $0.name, isLive: $0.isLive, subscribed: $0.subscribed, launchable: $0.launchable, claimed: $0.claimed)
        }
        var waiting: [String: String] = [:]
        for handler in owedByHandler.keys {
            let decision = FleetLaunchChoice.decide(handler, hosts: candidates, launchInProgressOn: launches[handler.lowercased()])
            if case .subscribed = decision { continue }
            waiting[handler] = decision.explanation
        }
        return waiting
    }

    /// For each handler, the live hosts that publish it subscribed, by name; keyed by lowercased
    /// handler (`status`'s per-handler `hosts`, docs/PROTOCOL.md, "competing instances").
    package var liveHostsByHandler: [String: [String]] {
        var byHandler: [String: Set<String>] = [:]
        for host in hosts where host.isLive {
            for handler in host.subscribed { byHandler[handler.lowercased(), default: []].insert(host.name) }
        }
        return byHandler.mapValues { $0.sorted() }
    }

    /// How long `status` waits for the database.
    package static let timeout: Duration = .seconds(3)

    /// The view from `hostName`, read now.
    package static func read(database: FleetDatabase, hostName: String, logger: Logger) async throws(FleetError) -> FleetView {
        let connection = try await database.connect(logger: logger)
        // Closed before it is released, on every path: postgres-nio stops the process when a
        // connection is released open.
        let result: Result<FleetView, FleetError>
        do {
            result = .success(try await withThrowingTaskGroup(of: FleetView?.self) { group in
                group.addTask { try await read(on: connection, hostName: hostName, logger: logger) }
                group.addTask {
                    // A server cut off by the network answers nothing: closing the connection ends the read.
                    try await Task.sleep(for: timeout)
                    connection.close().whenComplete { _ in }
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let view = first else {
                    throw FleetError(code: .unreachable, message: "PostgreSQL at \(database.address) did not answer within \(timeout.components.seconds) s")
                }
                return view
            })
        } catch {
            result = .failure(database.explain(error))
        }
        try? await connection.close()
        return try result.get()
    }

    static func read(on connection: PostgresConnection, hostName: String, logger: Logger) async throws -> FleetView {
        var claimed: [String: Int] = [:]
        var owed: [String: Int] = [:]
        let counts = try await connection.query("""
            SELECT state, coalesce(claimed_by, ''), handler, count(*)::int8 FROM deliveries
            WHERE state IN ('owed', 'claimed') GROUP BY 1, 2, 3
            """, logger: logger)
        for try await (state, holder, handler, count) in counts.decode((String, String, String, Int64).self) {
            if state == "claimed" { claimed[holder, default: 0] += Int(count) } else { owed[handler, default: 0] += Int(count) }
        }
        let rows = try await connection.query("""
            SELECT name, extract(epoch FROM now() - last_heartbeat)::float8, lease_seconds, docroute_version, registry_digest, subscribed,
                   launchable
            FROM hosts ORDER BY name
            """, logger: logger)
        var found: [(host: Host, digest: String)] = []
        for try await (name, silent, lease, version, digest, subscribed, launchable)
            in rows.decode((String, Double, Int32, String, String, [String], [String]).self) {
            found.append((Host(name: name, secondsSinceHeartbeat: silent, leaseSeconds: Int(lease), version: version, registryAgrees: true,
                               subscribed: subscribed, launchable: launchable, claimed: claimed[name] ?? 0), digest))
        }
        var launches: [String: String] = [:]
        let launched = try await connection.query("""
            SELECT l.handler, l.host FROM launches AS l JOIN hosts AS h ON h.name = l.host
            WHERE l.requested_at >= now() - make_interval(secs => h.lease_seconds)
            """, logger: logger)
        for try await (handler, host) in launched.decode((String, String).self) { launches[handler] = host }
        let own = found.first { $0.host.name == hostName }?.digest
        let hosts = found.map { entry in
            var host = entry.host
            host.registryAgrees = own == nil || entry.digest == own
            return host
        }
        return FleetView(hosts: hosts, owedByHandler: owed, launches: launches)
    }

    /// `status`'s `fleet` object (docs/PROTOCOL.md, "status in a fleet").
    package func json(hostName: String, database: String) -> JSONValue {
        .object([
            "host": .string(hostName),
            "database": .string(database),
            "reachable": .bool(true),
            "owed": .integer(Int64(owedByHandler.values.reduce(0, +))),
            "owedByHandler": .object(owedByHandler.mapValues { .integer(Int64($0)) }),
            "waiting": .object(waiting.mapValues { .string($0) }),
            "hosts": .array(hosts.map { host in
                .object([
                    "name": .string(host.name),
                    "lastHeartbeatSecondsAgo": .real((host.secondsSinceHeartbeat * 10).rounded() / 10),
                    "live": .bool(host.isLive),
                    "version": .string(host.version),
                    "registryAgrees": .bool(host.registryAgrees),
                    "subscribed": .array(host.subscribed.map { .string($0) }),
                    "launchable": .array(host.launchable.map { .string($0) }),
                    "claimed": .integer(Int64(host.claimed)),
                ])
            }),
        ])
    }

    /// `status`'s `fleet` object when the database cannot be read.
    package static func json(hostName: String, database: String, error: FleetError) -> JSONValue {
        .object([
            "host": .string(hostName),
            "database": .string(database),
            "reachable": .bool(false),
            "error": .string("\(error.message) (\(error.code.rawValue))"),
        ])
    }
}
