import Foundation
import Logging
import PostgresNIO

extension FleetQueue {
    /// One event this host records in `history_events` of a delivery (``record(_:)``).
    package struct HistoryRecord: Sendable, Hashable {
        package var deliveryID: UUID
        /// `written`, `notified`, `sourceReclaimed`…
        package var event: String
        package var at: Date
        /// A JSON object.
        package var detailJSON: String

        package init(deliveryID: UUID, event: String, at: Date, detailJSON: String = "{}") {
            self.deliveryID = deliveryID
            self.event = event
            self.at = at
            self.detailJSON = detailJSON
        }
    }

    /// Records events of this host in `history_events`, all in one statement; an event of a
    /// delivery the fleet does not have (pruned, or one of this host's own) is left out.
    package func record(_ events: [HistoryRecord]) async throws(FleetError) {
        guard !events.isEmpty else { return }
        let host = hostName
        let logger = logger
        let ids = events.map(\.deliveryID)
        let kinds = events.map(\.event)
        let times = events.map(\.at)
        let details = events.map(\.detailJSON)
        _ = try await exclusive("recording \(events.count) history event(s)") { connection in
            try await connection.query("""
                INSERT INTO history_events (document_id, delivery_id, host, event, at, detail)
                SELECT d.document_id, e.delivery, \(host), e.event, e.at, e.detail::jsonb
                FROM unnest(\(ids)::uuid[], \(kinds)::text[], \(times)::timestamptz[], \(details)::text[]) AS e(delivery, event, at, detail)
                JOIN deliveries AS d ON d.id = e.delivery
                """, logger: logger)
        }
    }

    /// The deliveries matching `query`, and those with the ids `including` whatever the query,
    /// newest first, each with every host's events of it, oldest first.
    package func history(_ query: FleetHistoryQuery, including: [UUID] = []) async throws(FleetError) -> [FleetHistory] {
        let logger = logger
        return try await exclusive("reading the fleet's history") { connection in
            try await Self.history(query, including: including, on: connection, logger: logger)
        }
    }

    /// ``history(_:including:)`` on a connection of the caller's: `history` requests read on a
    /// connection of their own, not queued behind this host's intake and claims.
    package static func history(_ query: FleetHistoryQuery, including: [UUID], on connection: PostgresConnection,
                                logger: Logger) async throws -> [FleetHistory] {
        do {
            let rows = try await connection.query("""
                SELECT v.id, v.document_id, doc.name, doc.intake_host, doc.size, doc.type_identifier, v.handler, v.mailbox,
                       v.state, v.handled, v.claimed_by, v.created_at, v.acknowledged_at
                FROM deliveries AS v LEFT JOIN documents AS doc ON doc.id = v.document_id
                WHERE v.id = ANY(\(including)::uuid[]) OR (
                    (\(query.deliveryID)::uuid IS NULL OR v.id = \(query.deliveryID))
                    AND (\(query.name)::text IS NULL OR doc.name = \(query.name))
                    AND (\(query.bundleIdentifier)::text IS NULL OR v.handler = \(query.bundleIdentifier))
                    AND (\(query.since)::timestamptz IS NULL OR v.created_at >= \(query.since))
                    AND (\(query.until)::timestamptz IS NULL OR v.created_at < \(query.until))
                    AND (\(query.states)::text[] IS NULL OR v.state = ANY(\(query.states)))
                    AND (\(query.handled)::bool IS NULL OR v.handled = \(query.handled))
                    AND (\(query.path)::text IS NULL OR EXISTS (
                        SELECT 1 FROM history_events AS e WHERE e.document_id = v.document_id AND e.detail->>'path' = \(query.path))))
                ORDER BY v.id = ANY(\(including)::uuid[]) DESC, v.seq DESC
                LIMIT \(Int64(query.limit + including.count))
                """, logger: logger)
            var found: [FleetHistory] = []
            for try await (id, document, name, intake, size, type, handler, mailbox, state, handled, claimedBy, created, acknowledged)
                in rows.decode((UUID, UUID?, String?, String?, Int64?, String?, String, String, String, Bool?, String?, Date, Date?).self) {
                var history = FleetHistory(deliveryID: id, bundleIdentifier: handler, mailbox: mailbox, state: state, committedAt: created)
                history.documentID = document
                history.name = name
                history.intakeHost = intake
                history.size = size
                history.typeIdentifier = type
                history.handled = handled
                history.claimedBy = claimedBy
                history.acknowledgedAt = acknowledged
                found.append(history)
            }
            guard !found.isEmpty else { return [] }
            let documents = Array(Set(found.compactMap(\.documentID)))
            let deliveries = found.map(\.deliveryID)
            // By document first: `history_events` is indexed by (document_id, at).
            let events = try await connection.query("""
                SELECT delivery_id, host, event, at, detail::text FROM history_events
                WHERE document_id = ANY(\(documents)::uuid[]) OR (document_id IS NULL AND delivery_id = ANY(\(deliveries)::uuid[]))
                ORDER BY at, id
                """, logger: logger)
            var byDelivery: [UUID: [FleetHistory.Event]] = [:]
            for try await (delivery, host, event, at, detail) in events.decode((UUID?, String, String, Date, String).self) {
                guard let delivery else { continue }
                byDelivery[delivery, default: []].append(FleetHistory.Event(host: host, event: event, at: at, detailJSON: detail))
            }
            for index in found.indices { found[index].events = byDelivery[found[index].deliveryID] ?? [] }
            return found
        }
    }
}
