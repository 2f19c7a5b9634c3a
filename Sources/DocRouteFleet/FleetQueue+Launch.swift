import Foundation
import Logging
import PostgresNIO

extension FleetQueue {
    /// The first key of the transaction-level advisory locks under which a handler's launch is
    /// decided ("laun" in ASCII); the second is the hash of the handler's lowercased identifier.
    /// A two-key lock: it never meets the migration's one-key lock.
    package static let launchLockSpace: Int32 = 0x6c61_756e

    /// Publishes the handlers this host can launch (`hosts.launchable`), as loaded now: registration
    /// writes them at start, this after a reload changed them. False when this host has no row
    /// yet (its membership registers it with them).
    package func publishLaunchable(_ bundleIdentifiers: [String]) async throws(FleetError) -> Bool {
        let host = hostName
        let logger = logger
        let sorted = bundleIdentifiers.sorted()
        return try await exclusive("publishing the handlers this host can launch") { connection in
            let rows = try await connection.query("UPDATE hosts SET launchable = \(sorted) WHERE name = \(host) RETURNING name", logger: logger)
            var found = false
            for try await _ in rows { found = true }
            return found
        }
    }

    /// Of `handlers` (those this host can launch), the ones with deliveries waiting to be claimed
    /// (owed, or claimed under a lease run out) that no live host has subscribed. One query; each
    /// handler's look uses the claim's index and stops at its first row.
    package func owedUnsubscribed(among handlers: [String]) async throws(FleetError) -> [String] {
        guard !handlers.isEmpty else { return [] }
        let logger = logger
        return try await exclusive("looking for handlers owed deliveries and subscribed nowhere") { connection in
            let rows = try await connection.query("""
                SELECT l.handler FROM unnest(\(handlers)::text[]) AS l(handler)
                WHERE EXISTS (
                    SELECT 1 FROM deliveries AS d
                    WHERE d.handler = l.handler AND d.document_id IS NOT NULL AND d.state IN ('owed', 'claimed')
                      AND (d.state = 'owed' OR d.lease_until < now()))
                  AND NOT EXISTS (
                    SELECT 1 FROM hosts AS h
                    WHERE h.last_heartbeat >= now() - make_interval(secs => h.lease_seconds)
                      AND EXISTS (SELECT 1 FROM unnest(h.subscribed) AS s(name) WHERE lower(s.name) = lower(l.handler)))
                ORDER BY l.handler
                """, logger: logger)
            var owed: [String] = []
            for try await handler in rows.decode(String.self) { owed.append(handler) }
            return owed
        }
    }

    /// Decides, under the handler's advisory lock, who launches `handler` (``FleetLaunchChoice``);
    /// when it is this host, records the launch in `launches` in the same transaction, so no other
    /// host launches it while this launch may still subscribe (this host's lease). Two hosts
    /// deciding at once take turns: the second sees the first's record.
    package func launchDecision(for handler: String) async throws(FleetError) -> FleetLaunchChoice.Decision {
        let host = hostName
        let logger = logger
        let key = handler.lowercased()
        return try await exclusive("deciding which host launches \(handler)") { connection in
            try await self.transaction(connection) {
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.launchLockSpace), hashtext(\(key)))", logger: logger)
                let hosts = try await Self.launchCandidates(on: connection, logger: logger)
                let recorded = try await connection.query("""
                    SELECT l.host FROM launches AS l JOIN hosts AS h ON h.name = l.host
                    WHERE l.handler = \(key) AND l.requested_at >= now() - make_interval(secs => h.lease_seconds)
                    """, logger: logger)
                var inProgress: String?
                for try await name in recorded.decode(String.self) { inProgress = name }
                let decision = FleetLaunchChoice.decide(handler, hosts: hosts, launchInProgressOn: inProgress)
                if case .launch(let chosen) = decision, chosen == host {
                    try await connection.query("""
                        INSERT INTO launches (handler, host, requested_at) VALUES (\(key), \(host), now())
                        ON CONFLICT (handler) DO UPDATE SET host = EXCLUDED.host, requested_at = EXCLUDED.requested_at
                        """, logger: logger)
                    // The history of each delivery the launch is for (those `owedUnsubscribed`
                    // found waiting) says which host launched its handler; written with the
                    // record, so a decision that does not commit leaves no event.
                    try await connection.query("""
                        INSERT INTO history_events (document_id, delivery_id, host, event, detail)
                        SELECT d.document_id, d.id, \(host), 'launched', jsonb_build_object('handler', \(handler)::text)
                        FROM deliveries AS d
                        WHERE d.handler = \(handler) AND d.document_id IS NOT NULL
                          AND (d.state = 'owed' OR (d.state = 'claimed' AND d.lease_until < now()))
                        """, logger: logger)
                }
                return decision
            }
        }
    }

    /// Every host's row as the launch choice reads it: live or not, what it has subscribed and can
    /// launch, and how many deliveries it holds under a lease.
    static func launchCandidates(on connection: PostgresConnection, logger: Logger) async throws -> [FleetLaunchChoice.Candidate] {
        let rows = try await connection.query("""
            SELECT h.name, h.last_heartbeat >= now() - make_interval(secs => h.lease_seconds), h.subscribed, h.launchable,
                   (SELECT count(*) FROM deliveries AS d WHERE d.state = 'claimed' AND d.claimed_by = h.name)
            FROM hosts AS h ORDER BY h.name
            """, logger: logger)
        var hosts: [FleetLaunchChoice.Candidate] = []
        for try await (name, live, subscribed, launchable, claimed) in rows.decode((String, Bool, [String], [String], Int64).self) {
            hosts.append(FleetLaunchChoice.Candidate(name: name, isLive: live, subscribed: subscribed, launchable: launchable, claimed: Int(claimed)))
        }
        return hosts
    }
}
