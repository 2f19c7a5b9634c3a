import Foundation

/// What recovery needs of a ledger: at start, after a crash (``DeliveryBatch/recover(containerRoots:)``
/// and the ``SourceReclaimer``'s leftovers), and when a damaged ledger is rebuilt from the
/// sandboxes (`docrouted --recover-ledger`).
///
/// Synchronous, like ``BatchLedger``: recovery runs on the batch thread before anything else.
package protocol RecoveryLedger: AnyObject, Sendable {
    /// Every staged row, in staging order: what a crash left between staging and commit.
    func stagedRecords() throws -> [LedgerRecord]
    /// Committed (or later) file deliveries whose source was never noted removed, in staging order.
    func recordsWithSourcesKept() throws -> [LedgerRecord]
    /// One delivery by its id, in any state.
    func record(deliveryID: UUID) throws -> LedgerRecord?
    /// The deliveries of these ids the ledger has, in any state, in one read.
    func records(deliveryIDs: [UUID]) throws -> [LedgerRecord]
    /// Writes `records` into a new, empty ledger in one write, in the order given: each keeps
    /// its state, and every one past `staged` gets the next sequence.
    func rebuild(_ records: [LedgerRecord]) throws
    /// Adds one document a rebuild left for later, in one transaction, with the next sequence
    /// (unless it is staged): false, and nothing written, when a row already names its path or
    /// its identifier.
    func addRebuilt(_ record: LedgerRecord) throws -> Bool
}
