/// Counts for `status` and metrics (``LedgerOperations/statistics(now:)``).
package struct LedgerStatistics: Sendable, Hashable {
    /// Deliveries per handler and state.
    package var counts: [String: [LedgerRecord.State: Int]]
    /// Deliveries committed since local midnight, per handler.
    package var deliveredTodayByHandler: [String: Int]

    package init(counts: [String: [LedgerRecord.State: Int]], deliveredTodayByHandler: [String: Int]) {
        self.counts = counts
        self.deliveredTodayByHandler = deliveredTodayByHandler
    }

    /// Deliveries committed since local midnight, all handlers.
    package var deliveredToday: Int { deliveredTodayByHandler.values.reduce(0, +) }

    /// How many deliveries of `bundleIdentifier` are in `state`.
    package func count(_ bundleIdentifier: String, _ state: LedgerRecord.State) -> Int {
        counts[bundleIdentifier]?[state] ?? 0
    }
}
