import DocRoutePlatform
import Foundation
import Logging

/// What operations need of a ledger: counts for `status` and metrics, its size, its integrity,
/// what handlers are owed for the limits, and its end.
package protocol LedgerOperations: AnyObject, Sendable {
    /// What each handler is owed, and each requester's part of it, kept in memory beside the
    /// ledger: loaded when it opens, changed after each write that commits or acknowledges.
    var pendingTally: PendingTally { get }
    /// Deliveries per handler and state, and those committed since the local midnight before `now`.
    func statistics(now: Date) async throws -> LedgerStatistics
    /// Bytes the ledger takes on disk, as `du` would count them. Cheap (read for every `status`
    /// and metrics write): an implementation that must ask a server returns what it last learnt.
    func bytesOnDisk() -> Int64
    /// Checks the ledger's own structure now (for SQLite `PRAGMA quick_check`); the problems
    /// found, none when it is sound.
    func checkIntegrity() async throws -> [String]
    /// Starts watching for the ledger turning out damaged, removed or replaced while the daemon
    /// runs: `problem` is called once, from any thread, with what happened.
    func watch(logger: Logger, problem: @escaping @Sendable (DeliveryError) -> Void) throws -> any LedgerWatching
    /// Closes the ledger at a clean stop.
    func close() throws
}

extension LedgerOperations {
    /// The counts as of now.
    package func statistics() async throws -> LedgerStatistics {
        try await statistics(now: Date())
    }
}
