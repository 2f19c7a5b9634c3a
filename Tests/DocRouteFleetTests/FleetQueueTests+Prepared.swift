import DocRouteFleet
import DocRouteTestSupport
import Foundation
import Testing

/// The statements a host runs for every document (intake's one statement, the claim, the
/// acknowledgement's) are prepared once per connection: a connection the server ended takes them
/// with it, and the next connection prepares them again. Also the history's gathered events:
/// what was recorded before a flush is written by it. In the queue's suite, so that its servers
/// start one at a time.
extension FleetQueueTests {
    @Test func preparedStatementsWorkAgainOnTheConnectionThatReplacesOneTheServerEnded() async throws {
        try await withFleet { fleet in
            let first = try fleet.source("first.pdf", Array("first".utf8))
            let second = try fleet.source("second.pdf", Array("second".utf8))
            defer { try? first.close(); try? second.close() }
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            let one = Self.document("first.pdf", first, size: 5)
            let two = Self.document("second.pdf", second, size: 6)
            _ = try await alpha.commitInOneStatement([one], lookingUp: [one.sourceIdentity])
            #expect(try await beta.claim(handler: Self.handler, limit: 1).map(\.deliveryID) == [one.deliveryID])
            #expect(try await beta.acknowledge([one.deliveryID], handled: true) == [one.deliveryID])

            // Every connection of the role ended by the server, as a restart or an administrator would.
            let ended = try await fleet.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'docroute'")
            #expect((Int(ended) ?? 0) >= 2, "alpha's and beta's connections, at least: \(ended)")

            // The first call after it may fail on the dead connection; the next connects again.
            let answer = try await Self.retryingOnce { try await alpha.commitInOneStatement([two], lookingUp: [two.sourceIdentity]) }
            #expect(answer.committed == [two.deliveryID])
            let claims = try await Self.retryingOnce { try await beta.claim(handler: Self.handler, limit: 5) }
            #expect(claims.map(\.deliveryID) == [two.deliveryID])
            #expect(claims.first?.contents == Array("second".utf8))
            #expect(try await beta.acknowledge([two.deliveryID], handled: true) == [two.deliveryID])
            #expect(try await fleet.sql("SELECT count(*) FROM deliveries WHERE state = 'acknowledged'") == "2")
            #expect(try await fleet.sql("SELECT count(*) FROM document_chunks") == "0", "the bytes go with the last acknowledgement")
        }
    }

    @Test func aBatchLargerThanThePreparedOnesIsCommittedByTheSameStatementPlannedForIt() async throws {
        try await withFleet { fleet in
            let count = FleetQueue.mostPreparedIntakeBatch * 2 + 3
            var documents: [FleetDocument] = []
            var contents: [UUID: [UInt8]] = [:]
            for index in 0..<count {
                let bytes = Self.bytes(100 + index, seed: UInt64(index))
                let document = Self.document("batch-\(index).pdf", try fleet.source("batch-\(index).pdf", bytes), size: bytes.count)
                documents.append(document)
                contents[document.deliveryID] = bytes
            }
            defer { for document in documents { try? document.descriptor.close() } }
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            let answer = try await alpha.commitInOneStatement(documents, lookingUp: documents.map(\.sourceIdentity))
            #expect(answer.committed == Set(documents.map(\.deliveryID)))
            #expect(answer.earlier.isEmpty)
            // Again, as after a crash before the sources were freed: every one found, none written twice.
            let again = try await alpha.commitInOneStatement([], lookingUp: documents.map(\.sourceIdentity))
            #expect(again.earlier.count == count)
            let claims = try await beta.claim(handler: Self.handler, limit: count)
            #expect(claims.map(\.deliveryID) == documents.map(\.deliveryID), "in the batch's order")
            for claim in claims { #expect(claim.contents == contents[claim.deliveryID], "\(claim.fileName)") }
        }
    }

    @Test func historyEventsRecordedJustBeforeAFlushAreWrittenByIt() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("told.pdf", Array("told".utf8))
            defer { try? descriptor.close() }
            let alpha = try fleet.queue(host: "alpha")
            let document = Self.document("told.pdf", descriptor, size: 4)
            _ = try await alpha.commitInOneStatement([document], lookingUp: [])
            let writer = FleetHistoryWriter(queue: alpha, logger: Self.logger)
            for event in ["written", "notified", "sourceReclaimed"] {
                writer.record([FleetQueue.HistoryRecord(deliveryID: document.deliveryID, event: event, at: Date())])
            }
            // At once, well within the gathering interval: as at a host's shutdown.
            await writer.flush()
            #expect(try await fleet.sql("SELECT string_agg(event, ',' ORDER BY event) FROM history_events WHERE event <> 'committed'")
                    == "notified,sourceReclaimed,written")
        }
    }

    @Test func historyEventsAreWrittenWithinTheIntervalWithoutAFlush() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("later.pdf", Array("later".utf8))
            defer { try? descriptor.close() }
            let alpha = try fleet.queue(host: "alpha")
            let document = Self.document("later.pdf", descriptor, size: 5)
            _ = try await alpha.commitInOneStatement([document], lookingUp: [])
            let writer = FleetHistoryWriter(queue: alpha, logger: Self.logger)
            writer.record([FleetQueue.HistoryRecord(deliveryID: document.deliveryID, event: "written", at: Date())])
            var written = ""
            for _ in 0..<200 where written != "1" {
                try await Task.sleep(for: .milliseconds(50))
                written = try await fleet.sql("SELECT count(*) FROM history_events WHERE event = 'written'")
            }
            #expect(written == "1", "written by the writer's own timer, nobody flushing")
        }
    }

    /// `body`, and once more when it fails (the first call on a connection the server ended).
    static func retryingOnce<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            return try await body()
        }
    }
}
