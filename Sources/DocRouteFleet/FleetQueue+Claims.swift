import DocRoutePlatform
import Foundation
import Logging
import PostgresNIO
import SystemPackage

extension FleetQueue {
    /// Claims up to `limit` deliveries for `handler` (owed, or claimed with a lease run out),
    /// oldest first, skipping rows another host is claiming; the lease is `lease_seconds`.
    ///
    /// `memoryBytes` bounds the sizes of the claimed documents of one chunk (at most
    /// ``chunkSize``, the ones a claiming host holds in memory files until its local batch
    /// commits) added up: the claim stops before the first delivery that would pass it, so what
    /// it takes is still the oldest ones, in order, and the rest wait for the next claim. The
    /// first is taken whatever its size. Larger documents are copied to disk a chunk at a time
    /// and do not count. The claim brings the bytes of the documents of one chunk with it
    /// (``FleetClaim/contents``): the budget holds them too, and a claim round costs one round
    /// trip instead of two.
    package func claim(handler: String, limit: Int, memoryBytes: Int64 = .max) async throws(FleetError) -> [FleetClaim] {
        guard limit > 0 else { return [] }
        let statement = FleetClaimStatement(
            handler: handler, limit: Int64(limit), memoryBytes: memoryBytes, host: hostName, leaseSeconds: leaseSeconds)
        let logger = logger
        return try await exclusive("claiming deliveries for \(handler)") { connection in
            let rows = try await connection.execute(statement, logger: logger)
            var claims: [(Int64, FleetClaim)] = []
            for try await (seq, id, document, handler, mailbox, name, type, chain, application, annotation, size, intake, attempts, contents)
                in rows {
                var claim = FleetClaim(
                    deliveryID: id, documentID: document, bundleIdentifier: handler, mailbox: mailbox, fileName: name,
                    contentType: type, extensionChain: chain, sourceApplication: application, annotationJSON: annotation,
                    size: size, intakeHost: intake, attempts: Int(attempts))
                if let contents, Int64(contents.readableBytes) == size { claim.contents = Array(contents.readableBytesView) }
                claims.append((seq, claim))
            }
            // RETURNING keeps no order; the claim order is commit order.
            return claims.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Writes a claimed document's bytes to `descriptor` (`pwrite` from offset 0), a chunk at a
    /// time; neither syncs nor closes it.
    package func copyBytes(of documentID: UUID, to descriptor: SystemPackage.FileDescriptor) async throws(FleetError) {
        let logger = logger
        try await exclusive("copying document \(documentID) from the fleet") { connection in
            let sizes = try await connection.query("SELECT size FROM documents WHERE id = \(documentID)", logger: logger)
            var size: Int64?
            for try await found in sizes.decode(Int64.self) { size = found }
            guard let size else {
                throw FleetError(code: .database, message: "no document \(documentID) in the fleet's database")
            }
            var offset: Int64 = 0
            var index: Int32 = 0
            // One chunk a query: the whole document is never in memory, whatever the driver buffers.
            while offset < size {
                let rows = try await connection.query(
                    "SELECT bytes FROM document_chunks WHERE document_id = \(documentID) AND chunk_index = \(index)", logger: logger)
                var chunk: ByteBuffer?
                for try await bytes in rows.decode(ByteBuffer.self) { chunk = bytes }
                guard let chunk, chunk.readableBytes > 0 else {
                    throw FleetError(code: .database, message: """
                        the bytes of document \(documentID) are gone after byte \(offset) of \(size): every delivery of it \
                        has ended (acknowledged on some host)
                        """)
                }
                let at = offset
                do {
                    try chunk.withUnsafeReadableBytes { bytes throws(Errno) in try descriptor.writeAll(from: bytes, atOffset: at) }
                } catch {
                    throw FleetError(code: .fileAccess, message: "writing the copy of document \(documentID) at byte \(at) failed: \(error)", cause: error)
                }
                self.watchdog?.touch()
                offset += Int64(chunk.readableBytes)
                index += 1
            }
            guard offset == size else {
                throw FleetError(code: .database, message: "document \(documentID) has \(offset) bytes in its chunks, not its size \(size)")
            }
        }
    }

    /// The bytes of documents of one chunk (at most ``chunkSize`` bytes), in one query for all of
    /// them: a claim round's small documents cost one round trip, not two each. `sizes` gives each
    /// document's size; a document whose chunk is gone, or is not its size, is left out of the
    /// answer (``copyBytes(of:to:)`` then says what is wrong with it). The caller keeps the sum
    /// of the sizes asked for at once small: the answer is in memory whole.
    package func smallDocuments(_ sizes: [UUID: Int64]) async throws(FleetError) -> [UUID: [UInt8]] {
        let ids = sizes.filter { $0.value > 0 && $0.value <= Int64(Self.chunkSize) }.map(\.key)
        guard !ids.isEmpty else { return [:] }
        let logger = logger
        return try await exclusive("copying \(ids.count) document(s) from the fleet") { connection in
            let rows = try await connection.query(
                "SELECT document_id, bytes FROM document_chunks WHERE document_id = ANY(\(ids)) AND chunk_index = 0", logger: logger)
            var found: [UUID: [UInt8]] = [:]
            for try await (document, bytes) in rows.decode((UUID, ByteBuffer).self)
            where Int64(bytes.readableBytes) == sizes[document] {
                found[document] = Array(bytes.readableBytesView)
            }
            self.watchdog?.touch()
            return found
        }
    }

    /// Renews the leases of these deliveries, where this host holds them; returns how many. Only
    /// what the caller knows it holds: a claim whose answer was lost with the connection, or one
    /// that could not be given back, runs out and is claimed again, instead of being renewed
    /// for ever by a host that will never copy it.
    package func renewLeases(of deliveryIDs: [UUID]) async throws(FleetError) -> Int {
        guard !deliveryIDs.isEmpty else { return 0 }
        let host = hostName
        let lease = leaseSeconds
        let logger = logger
        return try await exclusive("renewing \(deliveryIDs.count) lease(s)") { connection in
            let rows = try await connection.query("""
                WITH renewed AS (
                    UPDATE deliveries SET lease_until = now() + make_interval(secs => \(lease))
                    WHERE id = ANY(\(deliveryIDs)) AND state = 'claimed' AND claimed_by = \(host)
                    RETURNING 1)
                SELECT count(*) FROM renewed
                """, logger: logger)
            var count: Int64 = 0
            for try await renewed in rows.decode(Int64.self) { count = renewed }
            return Int(count)
        }
    }

    /// Records acknowledgements; `handled` false records a decline (still ended). Returns the ids
    /// whose first acknowledgement this was, each with a `history_events` row. A document's chunks
    /// are deleted once every delivery of it has ended (with `retain_days` 0; otherwise by the
    /// fleet's pruning, once older).
    package func acknowledge(_ deliveryIDs: [UUID], handled: Bool) async throws(FleetError) -> Set<UUID> {
        guard !deliveryIDs.isEmpty else { return [] }
        let host = hostName
        let logger = logger
        let event = handled ? "acknowledged" : "declined"
        // Bytes kept for retain_days are deleted by the fleet's pruning instead (FleetPruning).
        let deleteBytes = database.configuration.retainDays == 0
        return try await exclusive("recording \(deliveryIDs.count) acknowledgement(s)") { connection in
            try await self.transaction(connection) {
                for try await _ in try await connection.execute(FleetAcknowledgementStatements.LockDeliveries(ids: deliveryIDs), logger: logger) {}
                let rows = try await connection.execute(
                    FleetAcknowledgementStatements.End(ids: deliveryIDs, handled: handled, host: host, event: event), logger: logger)
                var first: Set<UUID> = []
                var documents: Set<UUID> = []
                for try await (id, document) in rows {
                    first.insert(id)
                    if let document { documents.insert(document) }
                }
                if deleteBytes, !documents.isEmpty {
                    let ids = documents.sorted { $0.uuidString < $1.uuidString }
                    for try await _ in try await connection.execute(FleetAcknowledgementStatements.LockDocuments(ids: ids), logger: logger) {}
                    _ = try await connection.execute(FleetAcknowledgementStatements.DeleteEndedBytes(ids: ids), logger: logger)
                }
                return first
            }
        }
    }

    /// Gives deliveries back to the fleet at once (their handler left this host unacknowledged):
    /// owed again, claimable by any host without waiting for the lease.
    package func release(_ deliveryIDs: [UUID]) async throws(FleetError) {
        guard !deliveryIDs.isEmpty else { return }
        let host = hostName
        let logger = logger
        _ = try await exclusive("giving \(deliveryIDs.count) delivery(ies) back to the fleet") { connection in
            // With its `released` event, in the same statement.
            try await connection.query("""
                WITH released AS (
                    UPDATE deliveries SET state = 'owed', claimed_by = NULL, lease_until = NULL
                    WHERE id = ANY(\(deliveryIDs)) AND state = 'claimed' AND claimed_by = \(host)
                    RETURNING id, document_id)
                INSERT INTO history_events (document_id, delivery_id, host, event)
                SELECT document_id, id, \(host), 'released' FROM released
                """, logger: logger)
        }
    }

    /// Counts per state for `status` and metrics, and what each host holds.
    package func tally() async throws(FleetError) -> FleetTally {
        let host = hostName
        let logger = logger
        return try await exclusive("counting the fleet's deliveries") { connection in
            let rows = try await connection.query("""
                SELECT count(*) FILTER (WHERE state = 'owed'),
                       count(*) FILTER (WHERE state = 'claimed' AND claimed_by = \(host)),
                       count(*) FILTER (WHERE state = 'claimed' AND claimed_by IS DISTINCT FROM \(host)),
                       count(*) FILTER (WHERE state = 'acknowledged'),
                       count(*) FILTER (WHERE state = 'acknowledged' AND handled IS FALSE)
                FROM deliveries
                """, logger: logger)
            var tally = FleetTally()
            for try await (owed, here, elsewhere, acknowledged, declined) in rows.decode((Int64, Int64, Int64, Int64, Int64).self) {
                tally = FleetTally(owed: Int(owed), claimedHere: Int(here), claimedElsewhere: Int(elsewhere),
                                   acknowledged: Int(acknowledged), declined: Int(declined))
            }
            let holders = try await connection.query(
                "SELECT claimed_by, count(*) FROM deliveries WHERE state = 'claimed' GROUP BY claimed_by", logger: logger)
            for try await (holder, count) in holders.decode((String, Int64).self) { tally.claimedByHost[holder] = Int(count) }
            return tally
        }
    }
}
