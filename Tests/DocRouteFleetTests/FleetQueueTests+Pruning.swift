import DocRouteConfiguration
import DocRouteFleet
import DocRouteTestSupport
import Foundation
import Logging
import PostgresNIO
import SystemPackage
import Testing

/// Pruning (`FleetPruning`): what the fleet keeps of ended documents, in a real PostgreSQL, with the times of commits and
/// acknowledgements set back by the test: bytes deleted with the last acknowledgement
/// (`retain_days` 0) or by the pruning once older than `retain_days`; rows and events of ended
/// documents once older than the history's days; nothing of a document still owed; one host
/// pruning at a time. In the queue's suite, so that its servers start one at a time.
extension FleetQueueTests {
    /// A queue of host `host` whose `[fleet]` has `retain_days = retainDays`.
    func retainingQueue(_ fleet: FleetQueueTests.Fleet, host: String, retainDays: Int) throws -> FleetQueue {
        var configuration = FleetConfiguration(database: fleet.address, hostName: host)
        configuration.retainDays = retainDays
        return FleetQueue(database: try FleetDatabase(configuration: configuration, password: "s3cret-word"), hostName: host, logger: Self.logger)
    }

    /// One pruning run, as a host's periodic job makes it.
    func prune(_ fleet: FleetQueueTests.Fleet, retainDays: Int, historyDays: Double = 30) async throws -> FleetPruning.Report? {
        try await fleet.database(host: "pruner").withConnection(logger: Self.logger) { connection in
            try await FleetPruning.prune(on: connection, retainDays: retainDays, historyDays: historyDays, logger: Self.logger)
        }
    }

    /// Sets a document's commit and its deliveries' acknowledgements `days` back.
    func age(_ fleet: FleetQueueTests.Fleet, delivery: UUID, days: Int) async throws {
        try await fleet.sql("""
            UPDATE documents SET created_at = now() - interval '\(days) days' WHERE id = (SELECT document_id FROM deliveries WHERE id = '\(delivery)');
            UPDATE deliveries SET created_at = now() - interval '\(days) days',
                acknowledged_at = CASE WHEN acknowledged_at IS NULL THEN NULL ELSE now() - interval '\(days) days' END
            WHERE document_id = (SELECT document_id FROM deliveries WHERE id = '\(delivery)')
            """)
    }

    /// A document `name` of `bytes` enqueued by host `alpha` (`retain_days = retainDays`), then
    /// claimed and acknowledged there: its delivery, its claim, and alpha's queue.
    func acknowledgedDocument(_ fleet: FleetQueueTests.Fleet, _ name: String, _ bytes: [UInt8], retainDays: Int) async throws
        -> (delivery: UUID, claim: FleetClaim?, queue: FleetQueue) {
        let source = try fleet.source(name, bytes)
        defer { try? source.close() }
        let alpha = try retainingQueue(fleet, host: "alpha", retainDays: retainDays)
        let document = FleetQueueTests.document(name, source, size: bytes.count)
        try await alpha.enqueue([document])
        let claims = try await alpha.claim(handler: Self.handler, limit: 1)
        _ = try await alpha.acknowledge([document.deliveryID], handled: true)
        return (document.deliveryID, claims.first, alpha)
    }

    func rows(_ fleet: FleetQueueTests.Fleet, _ table: String, of delivery: UUID) async throws -> String {
        try await fleet.sql("SELECT count(*) FROM \(table) WHERE document_id = (SELECT document_id FROM deliveries WHERE id = '\(delivery)')")
    }

    @Test func withRetainDaysZeroBytesGoWithTheAcknowledgementAndRowsAfterTheHistoryDays() async throws {
        try await withFleet { fleet in
            let first = try fleet.source("ended.pdf", FleetQueueTests.bytes(3_000, seed: 1))
            let second = try fleet.source("owed.pdf", FleetQueueTests.bytes(2_000, seed: 2))
            defer { for descriptor in [first, second] { try? descriptor.close() } }
            let alpha = try retainingQueue(fleet, host: "alpha", retainDays: 0)
            let ended = FleetQueueTests.document("ended.pdf", first, size: 3_000)
            let owed = FleetQueueTests.document("owed.pdf", second, size: 2_000)
            try await alpha.enqueue([ended, owed])
            _ = try await alpha.claim(handler: Self.handler, limit: 1)
            _ = try await alpha.acknowledge([ended.deliveryID], handled: true)
            #expect(try await rows(fleet, "document_chunks", of: ended.deliveryID) == "0", "deleted with the acknowledgement, as before")
            #expect(try await rows(fleet, "document_chunks", of: owed.deliveryID) == "1")

            // Both a day old: nothing for the pruning yet.
            try await age(fleet, delivery: ended.deliveryID, days: 1)
            try await age(fleet, delivery: owed.deliveryID, days: 1)
            #expect(try await prune(fleet, retainDays: 0) == FleetPruning.Report())

            // Both past the history's 30 days: the ended one goes, rows and events; the owed one stays whole.
            try await age(fleet, delivery: ended.deliveryID, days: 31)
            try await age(fleet, delivery: owed.deliveryID, days: 31)
            let events = Int(try await rows(fleet, "history_events", of: ended.deliveryID)) ?? 0
            #expect(events == 3, "committed, claimed, acknowledged")
            #expect(try await prune(fleet, retainDays: 0) == FleetPruning.Report(documentsForgotten: 1, eventsForgotten: events))
            #expect(try await fleet.sql("SELECT count(*) FROM deliveries WHERE id = '\(ended.deliveryID)'") == "0")
            #expect(try await fleet.sql("SELECT count(*) FROM history_events WHERE delivery_id = '\(ended.deliveryID)'") == "0")
            #expect(try await fleet.sql("SELECT count(*) FROM documents") == "1")
            #expect(try await rows(fleet, "document_chunks", of: owed.deliveryID) == "1", "an owed document keeps its bytes, however old")
            #expect(try await rows(fleet, "history_events", of: owed.deliveryID) == "1")
            #expect(try await prune(fleet, retainDays: 0) == FleetPruning.Report(), "the next run finds nothing")
        }
    }

    @Test func withRetainDaysBytesStayUntilOlderThenGoAndTheHistoryAfter() async throws {
        try await withFleet { fleet in
            let bytes = FleetQueueTests.bytes(FleetQueue.chunkSize + 500, seed: 3)
            let (kept, acknowledged, alpha) = try await acknowledgedDocument(fleet, "kept.pdf", bytes, retainDays: 3)
            #expect(try await rows(fleet, "document_chunks", of: kept) == "2", "kept for retain_days after the acknowledgement")
            let claim = try #require(acknowledged)
            #expect(try await fleet.copy(claim, from: alpha) == bytes, "still whole")

            try await age(fleet, delivery: kept, days: 2)
            #expect(try await prune(fleet, retainDays: 3) == FleetPruning.Report(), "2 days is within retain_days 3")
            #expect(try await rows(fleet, "document_chunks", of: kept) == "2")

            try await age(fleet, delivery: kept, days: 4)
            #expect(try await prune(fleet, retainDays: 3) == FleetPruning.Report(documentsFreed: 1, bytesFreed: Int64(bytes.count)))
            #expect(try await rows(fleet, "document_chunks", of: kept) == "0")
            #expect(try await fleet.sql("SELECT state FROM deliveries WHERE id = '\(kept)'") == "acknowledged",
                    "its history stays for the history's days")
            #expect(try await rows(fleet, "history_events", of: kept) == "3")

            try await age(fleet, delivery: kept, days: 31)
            #expect(try await prune(fleet, retainDays: 3) == FleetPruning.Report(documentsForgotten: 1, eventsForgotten: 3))
            #expect(try await fleet.sql("SELECT count(*) FROM documents") == "0")
        }
    }

    @Test func retainDaysLongerThanTheHistoryKeepsTheRowsAsLongAsTheBytes() async throws {
        try await withFleet { fleet in
            let long = try await acknowledgedDocument(fleet, "long.pdf", FleetQueueTests.bytes(100, seed: 4), retainDays: 60).delivery
            try await age(fleet, delivery: long, days: 40)
            #expect(try await prune(fleet, retainDays: 60, historyDays: 30) == FleetPruning.Report())
            #expect(try await rows(fleet, "document_chunks", of: long) == "1")
            try await age(fleet, delivery: long, days: 61)
            #expect(try await prune(fleet, retainDays: 60, historyDays: 30)
                == FleetPruning.Report(documentsFreed: 1, bytesFreed: 100, documentsForgotten: 1, eventsForgotten: 3))
        }
    }

    @Test func oneHostPrunesAtATime() async throws {
        try await withFleet { fleet in
            let old = try await acknowledgedDocument(fleet, "old.pdf", FleetQueueTests.bytes(10, seed: 5), retainDays: 0).delivery
            try await age(fleet, delivery: old, days: 31)
            try await fleet.database(host: "beta").withConnection(logger: Self.logger) { holder in
                // Another host's run holds the lock: this one leaves it to that host.
                try await holder.query("BEGIN", logger: Self.logger)
                try await holder.query("SELECT pg_advisory_xact_lock(\(FleetPruning.lockKey))", logger: Self.logger)
                #expect(try await prune(fleet, retainDays: 0) == nil)
                try await holder.query("COMMIT", logger: Self.logger)
            }
            #expect(try await prune(fleet, retainDays: 0) == FleetPruning.Report(documentsForgotten: 1, eventsForgotten: 3))
        }
    }
}
