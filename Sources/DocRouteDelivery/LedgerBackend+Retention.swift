import DocRouteLedger
import Foundation

extension LedgerBackend {
    /// Removes `bundleIdentifier`'s acknowledged copies acknowledged before `cutoff`
    /// (``InboxRetention``), on the thread that frees delivered sources: removing files is its
    /// work, and a batch never waits for it. Nil once the daemon is stopping.
    package func removeAcknowledgedCopies(of bundleIdentifier: String, acknowledgedBefore cutoff: Date) async -> InboxRetention.Report? {
        // The sweep pages through the SQLite ledger's rows (its positions are SQLite values).
        guard let ledger = ledger as? DeliveryLedger else { return nil }
        return try? await reclaimPool.runIfActive { [logger] in
            InboxRetention(ledger: ledger, logger: logger).sweep(bundleIdentifier, acknowledgedBefore: cutoff)
        }
    }
}
