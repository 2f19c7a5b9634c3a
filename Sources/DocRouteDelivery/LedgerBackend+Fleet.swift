import DocRouteLedger
import Foundation
import NIOPosix

extension LedgerBackend {
    /// The local ledger's row of a delivery, by its id (nil when it has none): whether a document
    /// claimed from the fleet was copied here before.
    func record(deliveryID: UUID) async throws -> LedgerRecord? {
        try await blocking { [ledger] in try ledger.record(deliveryID: deliveryID) }
    }

    /// The local ledger's rows of these deliveries, by id (those it has), in one read on one of
    /// `pool`'s threads: a claim round's look at what was copied here before. Not on the ledger's
    /// own thread, where it would wait behind the commit of the round before (the ledger's readers
    /// do not wait for its writer).
    func records(deliveryIDs: [UUID], on pool: NIOThreadPool) async throws -> [UUID: LedgerRecord] {
        try await pool.runIfActive { [ledger] in
            Dictionary(try ledger.records(deliveryIDs: deliveryIDs).map { ($0.deliveryID, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }
}
