import Foundation
import PostgresNIO

/// The statement of ``FleetQueue/claim(handler:limit:memoryBytes:)``, prepared once per
/// connection and planned once (see ``FleetIntakeStatement`` for why).
///
/// SKIP LOCKED: two hosts claiming at once each take rows the other has not; a row another host
/// claimed and committed meanwhile is looked at again (its lease is then current) and left. The
/// claim's history goes in the same statement: `claimed` by this host, and before it
/// `leaseExpired` naming the host whose lease ran out. The budget is applied to the rows locked
/// (a window function cannot share a query with FOR UPDATE): those past it are left as they were,
/// unlocked at the commit. The answer's rows come in no order; `seq` gives the claim order.
struct FleetClaimStatement: PostgresPreparedStatement {
    static let sql = """
        WITH candidates AS (
            SELECT d.id, d.seq, d.state AS was, d.claimed_by AS holder, d.lease_until AS expired,
                   CASE WHEN doc.size <= \(FleetQueue.chunkSize) THEN doc.size ELSE 0 END AS in_memory
            FROM deliveries AS d JOIN documents AS doc ON doc.id = d.document_id
            WHERE d.handler = $1 AND d.document_id IS NOT NULL
              AND (d.state = 'owed' OR (d.state = 'claimed' AND d.lease_until < now()))
            ORDER BY d.seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED),
        picked AS (
            SELECT id, was, holder, expired FROM (
                SELECT id, was, holder, expired, sum(in_memory) OVER (ORDER BY seq) AS running,
                       row_number() OVER (ORDER BY seq) AS position
                FROM candidates) AS budgeted
            WHERE position = 1 OR running <= $3),
        claimed AS (
            UPDATE deliveries AS d
            SET state = 'claimed', claimed_by = $4, lease_until = now() + make_interval(secs => $5),
                attempts = d.attempts + 1
            FROM documents AS doc, picked AS p
            WHERE doc.id = d.document_id AND d.id = p.id
            RETURNING d.seq, d.id, d.document_id, d.handler, d.mailbox, doc.name, coalesce(doc.type_identifier, '') AS type,
                      doc.extension_chain, doc.source_application, doc.annotation::text AS annotation, doc.size, doc.intake_host,
                      d.attempts::int8 AS attempts, d.lease_until, p.was, p.holder, p.expired),
        recorded AS (
            INSERT INTO history_events (document_id, delivery_id, host, event, at, detail)
            SELECT document_id, id, coalesce(holder, ''), 'leaseExpired', expired, jsonb_build_object('heldBy', holder)
            FROM claimed WHERE was = 'claimed'
            UNION ALL
            SELECT document_id, id, $4, 'claimed', now(),
                   jsonb_build_object('attempt', attempts, 'leaseUntil', lease_until)
            FROM claimed)
        SELECT seq, id, document_id, handler, mailbox, name, type, extension_chain, source_application, annotation, size,
               intake_host, attempts,
               CASE WHEN size > 0 AND size <= \(FleetQueue.chunkSize) THEN
                   (SELECT c.bytes FROM document_chunks AS c WHERE c.document_id = claimed.document_id AND c.chunk_index = 0)
               END AS contents
        FROM claimed
        """
    typealias Row = (Int64, UUID, UUID, String, String, String, String, String, String, String, Int64, String, Int64, ByteBuffer?)

    var handler: String
    var limit: Int64
    var memoryBytes: Int64
    var host: String
    var leaseSeconds: Double

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(handler)
        bindings.append(limit)
        bindings.append(memoryBytes)
        bindings.append(host)
        bindings.append(leaseSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
