import DocRouteLedger
import Foundation

extension LedgerBackend {
    /// The local ledger's row of a delivery, by its id (nil when it has none): whether a document
    /// claimed from the fleet was copied here before.
    func record(deliveryID: UUID) async throws -> LedgerRecord? {
        try await blocking { [ledger] in try ledger.record(deliveryID: deliveryID) }
    }
}
