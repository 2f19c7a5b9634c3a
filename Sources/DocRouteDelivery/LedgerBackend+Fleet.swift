import DocRouteLedger
import Foundation

extension LedgerBackend {
    /// The local ledger's row of a delivery, by its id (nil when it has none): whether a document
    /// claimed from the fleet was copied here before.
    func record(deliveryID: UUID) async throws -> LedgerRecord? {
        try await blocking { [ledger] in try ledger.record(deliveryID: deliveryID) }
    }

    /// The local ledger's rows of these deliveries, by id (those it has), read in one job of the
    /// ledger's thread: a claim round's look at what was copied here before.
    func records(deliveryIDs: [UUID]) async throws -> [UUID: LedgerRecord] {
        try await blocking { [ledger] in
            Dictionary(try ledger.records(deliveryIDs: deliveryIDs).map { ($0.deliveryID, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }
}
