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

    /// The largest batch ``commitInOneStatement(_:lookingUp:)`` runs as a prepared statement.
    /// PostgreSQL's plan for a prepared statement is made once, for arrays of a size it cannot
    /// know (a generic plan): right for a trickle's batches of one or two documents, whose
    /// planning cost more than their work, but a batch of hundreds (a burst's) is better planned
    /// for its own arrays, and shares that planning out.
    package static let mostPreparedIntakeBatch = 16

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
        let ids = documents.map { _ in UUID() }
        var chunkIDs: [UUID] = []
        var chunks: [ByteBuffer] = []
        for (id, document) in zip(ids, documents) where document.size > 0 {
            var chunk = ByteBufferAllocator().buffer(capacity: Int(document.size))
            try Self.read(Int(document.size), from: document, at: 0, into: &chunk)
            chunkIDs.append(id)
            chunks.append(chunk)
        }
        let statement = FleetIntakeStatement(
            host: host, identities: identities, documentIDs: ids, documents: documents, chunkIDs: chunkIDs, chunks: chunks,
            channel: Self.channel)
        let prepared = documents.count <= Self.mostPreparedIntakeBatch
        return try await exclusive("committing \(documents.count) document(s) to the fleet") { connection in
            // A small batch (a trickle's) runs the prepared statement and its plan made once; a
            // larger one the same text planned for its own arrays, whose planning its many
            // documents share (see mostPreparedIntakeBatch).
            let rows = if prepared {
                try await connection.execute(statement, logger: logger)
            } else {
                try await connection.query(PostgresQuery(unsafeSQL: FleetIntakeStatement.sql, binds: statement.makeBindings()), logger: logger)
                    .map { try statement.decodeRow($0) }
            }
            var answer = IntakeAnswer()
            for try await (identity, id) in rows {
                guard let id else { continue }
                if let identity { answer.earlier[identity] = id } else { answer.committed.insert(id) }
            }
            self.watchdog?.touch()
            return answer
        }
    }
}
