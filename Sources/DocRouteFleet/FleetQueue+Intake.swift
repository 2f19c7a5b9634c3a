import DocRoutePlatform
import Foundation
import Logging
import PostgresNIO
import SystemPackage

extension FleetQueue {
    /// Commits documents, their chunks and their deliveries in one transaction; returns once
    /// committed. Streams bytes chunk by chunk. A document whose (intake host, source identity) is
    /// already committed is not written again (its existing delivery id is kept).
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
                var handlers: Set<String> = []
                var chunk = ByteBufferAllocator().buffer(capacity: Self.chunkSize)
                var written = 0
                for document in documents {
                    let documentID = UUID()
                    let inserted = try await connection.query("""
                        INSERT INTO documents (id, intake_host, source_identity, name, type_identifier, extension_chain,
                                               source_application, annotation, size)
                        VALUES (\(documentID), \(host), \(document.sourceIdentity), \(document.fileName), \(document.contentType),
                                \(document.extensionChain), \(document.sourceApplication), \(document.annotationJSON)::jsonb, \(document.size))
                        ON CONFLICT (intake_host, source_identity) DO NOTHING
                        RETURNING id
                        """, logger: logger)
                    var isNew = false
                    for try await _ in inserted { isNew = true }
                    guard isNew else {
                        logger.debug("fleet: source committed before; its delivery stays", metadata: ["source": "\(document.sourceIdentity)"])
                        continue
                    }
                    try await Self.writeChunks(of: document, as: documentID, through: &chunk, on: connection, watchdog: self.watchdog, logger: logger)
                    // The delivery and the start of its history, in one statement.
                    try await connection.query("""
                        WITH delivery AS (
                            INSERT INTO deliveries (id, document_id, handler, mailbox)
                            VALUES (\(document.deliveryID), \(documentID), \(document.bundleIdentifier), \(document.mailbox))
                            RETURNING id, document_id)
                        INSERT INTO history_events (document_id, delivery_id, host, event, detail)
                        SELECT document_id, id, \(host), 'committed', \(document.intakeDetailJSON)::jsonb FROM delivery
                        """, logger: logger)
                    handlers.insert(document.bundleIdentifier)
                    written += 1
                }
                for handler in handlers.sorted() {
                    try await connection.query("SELECT pg_notify(\(Self.channel), \(handler))", logger: logger)
                }
                return written
            }
        }
        logger.debug("fleet: documents committed", metadata: ["documents": "\(written)", "skipped": "\(documents.count - written)"])
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
}
