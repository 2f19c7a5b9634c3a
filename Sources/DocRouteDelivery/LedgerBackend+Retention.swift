import DocRouteLedger
import Foundation

extension LedgerBackend {
    /// Removes `bundleIdentifier`'s acknowledged copies acknowledged before `cutoff`
    /// (``InboxRetention``), on the thread that frees delivered sources: removing files is its
    /// work, and a batch never waits for it. Nil once the daemon is stopping.
    package func removeAcknowledgedCopies(of bundleIdentifier: String, acknowledgedBefore cutoff: Date) async -> InboxRetention.Report? {
        try? await reclaimPool.runIfActive { [ledger, logger] in
            InboxRetention(ledger: ledger, logger: logger).sweep(bundleIdentifier, acknowledgedBefore: cutoff)
        }
    }
}
