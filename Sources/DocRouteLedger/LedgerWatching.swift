/// A watch on the ledger for damage while the daemon runs (``LedgerOperations/watch(problem:)``).
package protocol LedgerWatching: Sendable {
    /// Stops watching (before a clean shutdown closes the ledger).
    func stop()
}
