import Foundation
import PostgresNIO

/// The one statement of ``FleetQueue/commitInOneStatement(_:lookingUp:)``, prepared once per
/// connection: parsing, analysing and planning a statement of six parts cost PostgreSQL more than
/// running it for a batch of one or two documents (about half of its CPU at 200 documents a
/// second, by `perf`), and a prepared statement is planned once (a generic plan: every value is
/// a parameter, the batches' arrays included) instead of at every batch.
///
/// Data-modifying CTEs all run, each once, and see the snapshot the statement began with:
/// `earlier` is what was committed before it. `notified` is a plain SELECT, run only because the
/// result reads it. A row of the answer is an earlier source with its delivery id, or (no
/// identity) a delivery committed now, or (neither) a notification sent.
struct FleetIntakeStatement: PostgresPreparedStatement {
    static let sql = """
        WITH earlier AS (
            SELECT d.source_identity, v.id FROM documents d JOIN deliveries v ON v.document_id = d.id
            WHERE d.intake_host = $1 AND d.source_identity = ANY($2)),
        document AS (
            INSERT INTO documents (id, intake_host, source_identity, name, type_identifier, extension_chain,
                                   source_application, annotation, size)
            SELECT d.id, $1, d.identity, d.name, d.type, d.chain, d.application, d.annotation::jsonb, d.size
            FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int8[])
                 WITH ORDINALITY AS d(id, identity, name, type, chain, application, annotation, size, position)
            ORDER BY d.position
            ON CONFLICT (intake_host, source_identity) DO NOTHING
            RETURNING id),
        chunk AS (
            INSERT INTO document_chunks (document_id, chunk_index, bytes)
            SELECT c.id, 0, c.bytes FROM unnest($11::uuid[], $12::bytea[]) AS c(id, bytes) JOIN document ON document.id = c.id),
        delivery AS (
            INSERT INTO deliveries (id, document_id, handler, mailbox)
            SELECT v.id, v.document, v.handler, v.mailbox
            FROM unnest($13::uuid[], $3::uuid[], $14::text[], $15::text[])
                 WITH ORDINALITY AS v(id, document, handler, mailbox, position)
            JOIN document ON document.id = v.document
            ORDER BY v.position
            RETURNING id, document_id, handler),
        recorded AS (
            INSERT INTO history_events (document_id, delivery_id, host, event, detail)
            SELECT delivery.document_id, delivery.id, $1, 'committed', e.detail::jsonb
            FROM delivery JOIN unnest($13::uuid[], $16::text[]) AS e(id, detail) ON e.id = delivery.id),
        notified AS (
            SELECT pg_notify($17, handler) FROM (SELECT DISTINCT handler FROM delivery) AS h)
        SELECT source_identity, id FROM earlier
        UNION ALL SELECT NULL, id FROM delivery
        UNION ALL SELECT NULL, NULL FROM notified
        """
    typealias Row = (String?, UUID?)

    var host: String
    var identities: [String]
    /// The new documents' ids, one per document, in the batch's order.
    var documentIDs: [UUID]
    var documents: [FleetDocument]
    /// The documents with bytes (an empty one has no chunk) and their one chunk each.
    var chunkIDs: [UUID]
    var chunks: [ByteBuffer]
    var channel: String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 17)
        bindings.append(host)
        bindings.append(identities)
        bindings.append(documentIDs)
        bindings.append(documents.map(\.sourceIdentity))
        bindings.append(documents.map(\.fileName))
        bindings.append(documents.map(\.contentType))
        bindings.append(documents.map(\.extensionChain))
        bindings.append(documents.map(\.sourceApplication))
        bindings.append(documents.map(\.annotationJSON))
        bindings.append(documents.map(\.size))
        bindings.append(chunkIDs)
        bindings.append(chunks)
        bindings.append(documents.map(\.deliveryID))
        bindings.append(documents.map(\.bundleIdentifier))
        bindings.append(documents.map(\.mailbox))
        bindings.append(documents.map(\.intakeDetailJSON))
        bindings.append(channel)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
