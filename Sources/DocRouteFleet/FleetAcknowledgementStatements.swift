import Foundation
import PostgresNIO

/// The statements of ``FleetQueue/acknowledge(_:handled:)``'s transaction, each prepared once per
/// connection and planned once (see ``FleetIntakeStatement`` for why): an acknowledgement batch
/// of a document or two cost PostgreSQL four plannings.
enum FleetAcknowledgementStatements {
    /// A statement whose one parameter is a list of ids.
    protocol OfIDs: PostgresPreparedStatement {
        var ids: [UUID] { get }
    }

    /// Locks the deliveries in one order, so two hosts acknowledging the same deliveries cannot
    /// deadlock.
    struct LockDeliveries: OfIDs {
        static let sql = "SELECT id FROM deliveries WHERE id = ANY($1) ORDER BY id FOR UPDATE"
        typealias Row = UUID
        var ids: [UUID]
    }

    /// Ends every delivery not ended yet, whoever holds its lease (the handler has it), with its
    /// history event; answers the ids ended now and their documents.
    struct End: PostgresPreparedStatement {
        static let sql = """
            WITH ended AS (
                UPDATE deliveries SET state = 'acknowledged', handled = $2, acknowledged_at = now(), lease_until = NULL
                WHERE id = ANY($1) AND state IN ('owed', 'claimed')
                RETURNING id, document_id),
            recorded AS (
                INSERT INTO history_events (document_id, delivery_id, host, event, detail)
                SELECT document_id, id, $3, $4, jsonb_build_object('handled', $2) FROM ended)
            SELECT id, document_id FROM ended
            """
        typealias Row = (UUID, UUID?)
        var ids: [UUID]
        var handled: Bool
        var host: String
        var event: String

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(ids)
            bindings.append(handled)
            bindings.append(host)
            bindings.append(event)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Locks the documents' rows first: of two hosts ending a document's last two deliveries at
    /// once, the second looks after the first's commit and sees both ended.
    struct LockDocuments: OfIDs {
        static let sql = "SELECT id FROM documents WHERE id = ANY($1) ORDER BY id FOR UPDATE"
        typealias Row = UUID
        var ids: [UUID]
    }

    /// Deletes the bytes of the documents none of whose deliveries is still owed or claimed.
    struct DeleteEndedBytes: OfIDs {
        static let sql = """
            DELETE FROM document_chunks AS c WHERE c.document_id = ANY($1) AND NOT EXISTS (
                SELECT 1 FROM deliveries AS d WHERE d.document_id = c.document_id AND d.state IN ('owed', 'claimed'))
            """
        typealias Row = ()
        var ids: [UUID]

        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }
}

extension FleetAcknowledgementStatements.OfIDs {
    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(ids)
        return bindings
    }
}

extension FleetAcknowledgementStatements.OfIDs where Row == UUID {
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
