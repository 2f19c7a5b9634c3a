import DocRoutePlatform
import Foundation
import Logging
import PostgresNIO
import SystemPackage

extension FleetQueue {
    /// Commits documents, their chunks and their deliveries in one transaction; returns once
    /// committed. A document whose (intake host, source identity) is already committed is not
    /// written again (its existing delivery id is kept).
    ///
    /// The batch's documents are one statement, their deliveries another (arrays, `unnest`), so
    /// the server plans two statements a batch instead of two a document. Documents of one chunk
    /// go together too, up to ``batchedChunkBytes`` a statement; larger ones are streamed chunk
    /// by chunk, never whole in memory.
    ///
    /// `NOTIFY docroute_deliveries` is sent inside the transaction, once per handler: PostgreSQL
    /// delivers it at COMMIT, and never for a batch rolled back. When anything fails (a source that
    /// cannot be read or ends early, the server) nothing of the batch is left.
    package func enqueue(_ documents: [FleetDocument]) async throws(FleetError) {
        guard !documents.isEmpty else { return }
        let host = hostName
        let logger = logger
        let written = try await exclusive("committing \(documents.count) document(s) to the fleet") { connection in
            try await self.transaction(connection) {
                let ids = documents.map { _ in UUID() }
                let inserted = try await connection.query("""
                    INSERT INTO documents (id, intake_host, source_identity, name, type_identifier, extension_chain,
                                           source_application, annotation, size)
                    SELECT d.id, \(host), d.identity, d.name, d.type, d.chain, d.application, d.annotation::jsonb, d.size
                    FROM unnest(\(ids), \(documents.map(\.sourceIdentity)), \(documents.map(\.fileName)), \(documents.map(\.contentType)),
                                \(documents.map(\.extensionChain)), \(documents.map(\.sourceApplication)), \(documents.map(\.annotationJSON)),
                                \(documents.map(\.size)))
                         WITH ORDINALITY AS d(id, identity, name, type, chain, application, annotation, size, position)
                    ORDER BY d.position
                    ON CONFLICT (intake_host, source_identity) DO NOTHING
                    RETURNING id
                    """, logger: logger)
                var isNew: Set<UUID> = []
                for try await id in inserted.decode(UUID.self) { isNew.insert(id) }
                self.watchdog?.touch()
                var fresh: [(id: UUID, document: FleetDocument)] = []
                for (id, document) in zip(ids, documents) {
                    if isNew.contains(id) {
                        fresh.append((id, document))
                    } else {
                        logger.debug("fleet: source committed before; its delivery stays", metadata: ["source": "\(document.sourceIdentity)"])
                    }
                }
                guard !fresh.isEmpty else { return 0 }
                try await Self.writeSmallDocuments(fresh.filter { $0.document.size > 0 && $0.document.size <= Int64(Self.chunkSize) },
                                                   on: connection, watchdog: self.watchdog, logger: logger)
                var chunk: ByteBuffer?
                for (id, document) in fresh where document.size > Int64(Self.chunkSize) {
                    var buffer = chunk ?? ByteBufferAllocator().buffer(capacity: Self.chunkSize)
                    try await Self.writeChunks(of: document, as: id, through: &buffer, on: connection, watchdog: self.watchdog, logger: logger)
                    chunk = buffer
                }
                // The deliveries and the start of their history, in one statement.
                try await connection.query("""
                    WITH delivery AS (
                        INSERT INTO deliveries (id, document_id, handler, mailbox)
                        SELECT v.id, v.document, v.handler, v.mailbox
                        FROM unnest(\(fresh.map(\.document.deliveryID)), \(fresh.map(\.id)), \(fresh.map(\.document.bundleIdentifier)),
                                    \(fresh.map(\.document.mailbox)))
                             WITH ORDINALITY AS v(id, document, handler, mailbox, position)
                        ORDER BY v.position
                        RETURNING id, document_id)
                    INSERT INTO history_events (document_id, delivery_id, host, event, detail)
                    SELECT delivery.document_id, delivery.id, \(host), 'committed', e.detail::jsonb
                    FROM delivery JOIN unnest(\(fresh.map(\.document.deliveryID)), \(fresh.map(\.document.intakeDetailJSON))) AS e(id, detail)
                         ON e.id = delivery.id
                    """, logger: logger)
                self.watchdog?.touch()
                for handler in Set(fresh.map(\.document.bundleIdentifier)).sorted() {
                    try await connection.query("SELECT pg_notify(\(Self.channel), \(handler))", logger: logger)
                }
                return fresh.count
            }
        }
        logger.debug("fleet: documents committed", metadata: ["documents": "\(written)", "skipped": "\(documents.count - written)"])
    }

    /// How many bytes of one-chunk documents one statement inserts at most (they are in memory
    /// together until it is sent).
    static let batchedChunkBytes: Int64 = 16 << 20

    /// Inserts the only chunk of each of `documents` (each of 1 to ``chunkSize`` bytes), as many in
    /// one statement as ``batchedChunkBytes`` allows.
    static func writeSmallDocuments(_ documents: [(id: UUID, document: FleetDocument)], on connection: PostgresConnection,
                                    watchdog: FleetQueueWatchdog?, logger: Logger) async throws {
        var ids: [UUID] = []
        var chunks: [ByteBuffer] = []
        var bytes: Int64 = 0
        func send() async throws {
            guard !ids.isEmpty else { return }
            try await connection.query("""
                INSERT INTO document_chunks (document_id, chunk_index, bytes)
                SELECT c.id, 0, c.bytes FROM unnest(\(ids), \(chunks)) AS c(id, bytes)
                """, logger: logger)
            watchdog?.touch()
            ids.removeAll()
            chunks.removeAll()
            bytes = 0
        }
        for (id, document) in documents {
            if bytes + document.size > batchedChunkBytes { try await send() }
            var chunk = ByteBufferAllocator().buffer(capacity: Int(document.size))
            try read(Int(document.size), from: document, at: 0, into: &chunk)
            ids.append(id)
            chunks.append(chunk)
            bytes += document.size
        }
        try await send()
    }

    /// Inserts `document`'s bytes as chunks of ``chunkSize``, each read with `pread` into `chunk`
    /// (one buffer for the whole batch) and sent before the next is read.
    static func writeChunks(of document: FleetDocument, as documentID: UUID, through chunk: inout ByteBuffer,
                            on connection: PostgresConnection, watchdog: FleetQueueWatchdog?, logger: Logger) async throws {
        var offset: Int64 = 0
        var index: Int32 = 0
        while offset < document.size {
            let length = Int(min(Int64(chunkSize), document.size - offset))
            try read(length, from: document, at: offset, into: &chunk)
            try await connection.query("""
                INSERT INTO document_chunks (document_id, chunk_index, bytes) VALUES (\(documentID), \(index), \(chunk))
                """, logger: logger)
            watchdog?.touch()
            offset += Int64(length)
            index += 1
        }
    }

    /// Reads exactly `length` bytes at `offset` into `chunk` (emptied first).
    static func read(_ length: Int, from document: FleetDocument, at offset: Int64, into chunk: inout ByteBuffer) throws(FleetError) {
        chunk.clear()
        var filled = 0
        while filled < length {
            let want = length - filled
            let start = offset + Int64(filled)
            let count: Int
            do {
                count = try chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { bytes in
                    try document.descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<want]), atOffset: start)
                }
            } catch {
                throw FleetError(code: .fileAccess, message: "reading \(document.fileName) at byte \(start) failed: \(error)", cause: error)
            }
            guard count > 0 else {
                throw FleetError(code: .fileAccess, message: """
                    \(document.fileName) ended at byte \(start) of the \(document.size) intake saw: it changed while being \
                    committed; nothing of its batch was kept
                    """)
            }
            filled += count
        }
    }

    /// Of these source identities (of this host), the ones committed before, with their delivery ids.
    package func committedSources(_ identities: [String]) async throws(FleetError) -> [String: UUID] {
        guard !identities.isEmpty else { return [:] }
        let host = hostName
        let logger = logger
        return try await exclusive("looking up committed sources") { connection in
            let rows = try await connection.query("""
                SELECT d.source_identity, v.id FROM documents d JOIN deliveries v ON v.document_id = d.id
                WHERE d.intake_host = \(host) AND d.source_identity = ANY(\(identities))
                """, logger: logger)
            var found: [String: UUID] = [:]
            for try await (identity, delivery) in rows.decode((String, UUID).self) { found[identity] = delivery }
            return found
        }
    }

    /// The source identities (``FleetSourceIdentity``) of the documents this host committed under
    /// `deliveryIDs`, by delivery id; a delivery the fleet does not have (never committed, or
    /// pruned), or another host's, is left out.
    package func committedSourceIdentities(deliveryIDs: [UUID]) async throws(FleetError) -> [UUID: String] {
        guard !deliveryIDs.isEmpty else { return [:] }
        let host = hostName
        let logger = logger
        return try await exclusive("looking up the sources of committed deliveries") { connection in
            let rows = try await connection.query("""
                SELECT v.id, d.source_identity FROM deliveries v JOIN documents d ON d.id = v.document_id
                WHERE v.id = ANY(\(deliveryIDs)::uuid[]) AND d.intake_host = \(host)
                """, logger: logger)
            var found: [UUID: String] = [:]
            for try await (delivery, identity) in rows.decode((UUID, String).self) { found[delivery] = identity }
            return found
        }
    }
}
