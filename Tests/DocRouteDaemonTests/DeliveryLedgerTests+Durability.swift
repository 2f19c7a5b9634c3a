@testable import DocRouteLedger
import DocRouteTestSupport
import GRDB
import Testing

extension DeliveryLedgerTests {
    /// The writer's `PRAGMA synchronous`: 2 (FULL) flushes the write-ahead log before a commit
    /// returns; 1 (NORMAL) only before a checkpoint, so a power cut could forget a commit.
    func writerSafetyLevel(_ ledger: DeliveryLedger) throws -> Int? {
        try ledger.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
    }

    @Test func everyCommitWaitsForTheDiskFromTheFirstOn() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        #expect(try writerSafetyLevel(ledger) == 2, "a new ledger's commits would not wait for the disk")
        let files = ["a", "b"].map { stagedFile($0) }
        try ledger.stage(files)
        _ = try ledger.commit(files.map(\.deliveryID))
        // A source noted removed without a flush of its own leaves the next commits flushed.
        try ledger.markSourcesRemoved([files[0].deliveryID], durably: false)
        #expect(try writerSafetyLevel(ledger) == 2)
        try ledger.markSourcesRemoved([files[1].deliveryID], durably: true)
        #expect(try writerSafetyLevel(ledger) == 2)
        try ledger.close()

        let reopened = try Fixtures.ledger(scratch)
        #expect(try writerSafetyLevel(reopened) == 2, "a ledger opened again would not wait for the disk")
    }
}
