import Foundation
import Logging
import PostgresNIO

extension FleetQueue {
    /// What ``commitInOneStatement(_:lookingUp:)`` found and did.
    package struct IntakeAnswer: Sendable, Equatable {
        /// Of the identities looked up, those committed before this call, with their delivery ids.
        package var earlier: [String: UUID] = [:]
        /// The delivery ids of the documents this call committed.
        package var committed: Set<UUID> = []
    }

    /// Whether ``commitInOneStatement(_:lookingUp:)`` takes `documents`: each of one chunk or
    /// none, all of them together in memory at most ``batchedChunkBytes``.
    package static func fitsOneStatement(_ documents: [FleetDocument]) -> Bool {
        documents.allSatisfy { $0.size <= Int64(chunkSize) } && documents.reduce(0) { $0 + $1.size } <= batchedChunkBytes
    }

    /// Looks up the sources `identities` committed before and commits `documents` (their bytes,
    /// their deliveries, the deliveries' `committed` events and the `NOTIFY` of their handlers) in
    /// one statement: one round trip and one commit for a batch, where ``committedSources(_:)``
    /// and ``enqueue(_:)`` take seven round trips. The statement is its own transaction: all of
    /// it or nothing is committed, and `NOTIFY` goes out with its commit.
    ///
    /// A document whose identity is committed already is not written again (`ON CONFLICT DO
    /// NOTHING`), and only the documents inserted get chunks and deliveries. One neither found
    /// nor committed (inserted by someone else between the statement's snapshot and its insert,
    /// which this host's one intake at a time rules out) is in neither set; the caller tries it
    /// again, and the next look finds it. The caller checks ``fitsOneStatement(_:)`` first.
    package func commitInOneStatement(_ documents: [FleetDocument], lookingUp identities: [String]) async throws(FleetError) -> IntakeAnswer {
        guard !documents.isEmpty || !identities.isEmpty else { return IntakeAnswer() }
        let host = hostName
        let logger = logger
        let channel = Self.channel
        let ids = documents.map { _ in UUID() }
        var chunkIDs: [UUID] = []
        var chunks: [ByteBuffer] = []
        for (id, document) in zip(ids, documents) where document.size > 0 {
            var chunk = ByteBufferAllocator().buffer(capacity: Int(document.size))
            try Self.read(Int(document.size), from: document, at: 0, into: &chunk)
            chunkIDs.append(id)
            chunks.append(chunk)
        }
        return try await exclusive("committing \(documents.count) document(s) to the fleet") { connection in
            // Data-modifying CTEs all run, each once, and see the snapshot the statement began
            // with: `earlier` is what was committed before it. `notified` is a plain SELECT, run
            // only because the result reads it.
            let rows = try await connection.query("""
                WITH earlier AS (
                    SELECT d.source_identity, v.id FROM documents d JOIN deliveries v ON v.document_id = d.id
                    WHERE d.intake_host = \(host) AND d.source_identity = ANY(\(identities))),
                document AS (
                    INSERT INTO documents (id, intake_host, source_identity, name, type_identifier, extension_chain,
                                           source_application, annotation, size)
                    SELECT d.id, \(host), d.identity, d.name, d.type, d.chain, d.application, d.annotation::jsonb, d.size
                    FROM unnest(\(ids), \(documents.map(\.sourceIdentity)), \(documents.map(\.fileName)), \(documents.map(\.contentType)),
                                \(documents.map(\.extensionChain)), \(documents.map(\.sourceApplication)), \(documents.map(\.annotationJSON)),
                                \(documents.map(\.size)))
                         WITH ORDINALITY AS d(id, identity, name, type, chain, application, annotation, size, position)
                    ORDER BY d.position
                    ON CONFLICT (intake_host, source_identity) DO NOTHING
                    RETURNING id),
                chunk AS (
                    INSERT INTO document_chunks (document_id, chunk_index, bytes)
                    SELECT c.id, 0, c.bytes FROM unnest(\(chunkIDs), \(chunks)) AS c(id, bytes) JOIN document ON document.id = c.id),
                delivery AS (
                    INSERT INTO deliveries (id, document_id, handler, mailbox)
                    SELECT v.id, v.document, v.handler, v.mailbox
                    FROM unnest(\(documents.map(\.deliveryID)), \(ids), \(documents.map(\.bundleIdentifier)), \(documents.map(\.mailbox)))
                         WITH ORDINALITY AS v(id, document, handler, mailbox, position)
                    JOIN document ON document.id = v.document
                    ORDER BY v.position
                    RETURNING id, document_id, handler),
                recorded AS (
                    INSERT INTO history_events (document_id, delivery_id, host, event, detail)
                    SELECT delivery.document_id, delivery.id, \(host), 'committed', e.detail::jsonb
                    FROM delivery JOIN unnest(\(documents.map(\.deliveryID)), \(documents.map(\.intakeDetailJSON))) AS e(id, detail)
                         ON e.id = delivery.id),
                notified AS (
                    SELECT pg_notify(\(channel), handler) FROM (SELECT DISTINCT handler FROM delivery) AS h)
                SELECT source_identity, id FROM earlier
                UNION ALL SELECT NULL, id FROM delivery
                UNION ALL SELECT NULL, NULL FROM notified
                """, logger: logger)
            var answer = IntakeAnswer()
            for try await (identity, id) in rows.decode((String?, UUID?).self) {
                guard let id else { continue }
                if let identity { answer.earlier[identity] = id } else { answer.committed.insert(id) }
            }
            self.watchdog?.touch()
            return answer
        }
    }
}
