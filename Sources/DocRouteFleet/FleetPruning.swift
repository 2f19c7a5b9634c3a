import Foundation
import Logging
import PostgresNIO

/// What the fleet keeps of ended documents, and for how long: their bytes for `retain_days`, their
/// rows (`documents`, `deliveries`, `history_events`) for the history's time (`history_days`, or
/// `retain_days` when that is longer: a document's row goes with its bytes).
///
/// A document has ended when every delivery of it has (acknowledged or declined); its age is that
/// of its last acknowledgement. One host prunes at a time: each run takes a transaction-scoped
/// advisory lock without waiting, and a host that does not get it leaves the run to the one that
/// did. Each step removes at most `limit` documents a run, the oldest first, so a large backlog
/// goes over several runs instead of one long transaction.
package enum FleetPruning {
    /// The advisory lock of a pruning run: "docprune" in ASCII, as a bigint.
    package static let lockKey: Int64 = 0x646f_6370_7275_6e65

    /// What a run removed.
    package struct Report: Sendable, Hashable {
        /// Ended documents whose bytes were deleted, and how many bytes.
        package var documentsFreed = 0
        package var bytesFreed: Int64 = 0
        /// Ended documents whose rows were deleted (with their deliveries), and their events.
        package var documentsForgotten = 0
        package var eventsForgotten = 0

        package init(documentsFreed: Int = 0, bytesFreed: Int64 = 0, documentsForgotten: Int = 0, eventsForgotten: Int = 0) {
            self.documentsFreed = documentsFreed
            self.bytesFreed = bytesFreed
            self.documentsForgotten = documentsForgotten
            self.eventsForgotten = eventsForgotten
        }

        /// Whether the run removed anything.
        package var isEmpty: Bool { documentsFreed == 0 && documentsForgotten == 0 && eventsForgotten == 0 }
    }

    /// One run on `connection`: the bytes of documents ended more than `retainDays` ago, then the
    /// rows of those ended more than `historyDays` ago (at least `retainDays`); nil when another
    /// host is pruning.
    package static func prune(on connection: PostgresConnection, retainDays: Int, historyDays: Double, limit: Int = 1_000,
                              logger: Logger) async throws -> Report? {
        let bytesAge = Double(max(0, retainDays)) * 86_400
        let rowsAge = max(historyDays * 86_400, bytesAge)
        let limit = Int64(max(1, limit))
        try await connection.query("BEGIN", logger: logger)
        do {
            let locked = try await connection.query("SELECT pg_try_advisory_xact_lock(\(lockKey))", logger: logger)
            var mine = false
            for try await value in locked.decode(Bool.self) { mine = value }
            guard mine else {
                try await connection.query("ROLLBACK", logger: logger)
                return nil
            }
            var report = Report()
            let freed = try await connection.query("""
                WITH ended AS (
                    SELECT doc.id FROM documents AS doc
                    WHERE doc.created_at < now() - make_interval(secs => \(bytesAge))
                      AND EXISTS (SELECT 1 FROM document_chunks AS c WHERE c.document_id = doc.id)
                      AND NOT EXISTS (
                          SELECT 1 FROM deliveries AS d WHERE d.document_id = doc.id
                            AND (d.state IN ('owed', 'claimed') OR d.acknowledged_at >= now() - make_interval(secs => \(bytesAge))))
                    ORDER BY doc.created_at LIMIT \(limit)),
                freed AS (
                    DELETE FROM document_chunks AS c USING ended WHERE c.document_id = ended.id
                    RETURNING c.document_id, length(c.bytes) AS size)
                SELECT count(DISTINCT document_id), coalesce(sum(size), 0)::int8 FROM freed
                """, logger: logger)
            for try await (documents, bytes) in freed.decode((Int64, Int64).self) {
                report.documentsFreed = Int(documents)
                report.bytesFreed = bytes
            }
            let forgotten = try await connection.query("""
                WITH old AS (
                    SELECT doc.id FROM documents AS doc
                    WHERE doc.created_at < now() - make_interval(secs => \(rowsAge))
                      AND NOT EXISTS (
                          SELECT 1 FROM deliveries AS d WHERE d.document_id = doc.id
                            AND (d.state IN ('owed', 'claimed') OR d.acknowledged_at >= now() - make_interval(secs => \(rowsAge))))
                    ORDER BY doc.created_at LIMIT \(limit)),
                events AS (
                    DELETE FROM history_events AS e USING old WHERE e.document_id = old.id RETURNING 1),
                strays AS (
                    DELETE FROM history_events
                    WHERE document_id IS NULL AND at < now() - make_interval(secs => \(rowsAge)) RETURNING 1),
                gone AS (
                    DELETE FROM documents AS doc USING old WHERE doc.id = old.id RETURNING 1)
                SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM events) + (SELECT count(*) FROM strays)
                """, logger: logger)
            for try await (documents, events) in forgotten.decode((Int64, Int64).self) {
                report.documentsForgotten = Int(documents)
                report.eventsForgotten = Int(events)
            }
            try await connection.query("COMMIT", logger: logger)
            return report
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
