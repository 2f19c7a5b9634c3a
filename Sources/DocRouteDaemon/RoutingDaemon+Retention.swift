import DocRouteDelivery
import Foundation

extension RoutingDaemon {
    /// Until cancelled: for every handler whose manifest sets `DocRouteInboxRetentionDays`,
    /// removes the copies in its `Documents/Inbox/` acknowledged longer ago than that
    /// (``InboxRetention``). The handlers are read from the routing snapshot at each sweep, so a
    /// reload takes effect at the next one.
    func removeExpiredInboxCopies() async {
        while !Task.isCancelled {
            let retained = routing.snapshot.registry.handlers.compactMap { handler in
                handler.manifest.inboxRetentionDays.map { (bundle: handler.bundleIdentifier, days: $0) }
            }
            for (bundle, days) in retained {
                let cutoff = Date().addingTimeInterval(-days * 86_400)
                // Nil only while stopping: the cancellation that ends the loop follows. Never
                // returning early matters: the run's task group ends with its first task.
                guard let report = await backend.removeAcknowledgedCopies(of: bundle, acknowledgedBefore: cutoff) else { break }
                if !report.removed.isEmpty {
                    logger.notice("removed \(report.removed.count) acknowledged copies (\(report.removedBytes) bytes) kept longer than DocRouteInboxRetentionDays (\(days)) from \(bundle)'s Documents/Inbox", metadata: [
                        "bundle-id": "\(bundle)", "count": "\(report.removed.count)", "bytes": "\(report.removedBytes)",
                    ])
                }
                if let first = report.failures.first {
                    logger.warning("\(report.failures.count) acknowledged copies past their retention could not be removed from \(bundle)'s Documents/Inbox; tried again at the next sweep: \(first)", metadata: [
                        "bundle-id": "\(bundle)",
                    ])
                }
            }
            try? await Task.sleep(for: Self.retentionSweepInterval(retained.map(\.days)))
        }
    }

    /// A quarter of the shortest retention, so a copy stays at most a quarter longer than asked,
    /// between a second and an hour; a minute while no handler asks for retention, so a reload
    /// that brings one is taken within a minute.
    static func retentionSweepInterval(_ retentionDays: [Double]) -> Duration {
        guard let shortest = retentionDays.min() else { return .seconds(60) }
        let seconds = min(3_600, max(1, shortest * 86_400 / 4))
        return .milliseconds(Int64(seconds * 1_000))
    }

    /// How long a settled document's history is kept: `history_days`, or longer while a handler's
    /// `DocRouteInboxRetentionDays` is longer, since the retention sweep finds the copies to
    /// remove by their ledger rows: pruned first, a copy would stay in the sandbox for good. A
    /// day more than the longest retention, for the sweep's own interval.
    static func historyKeptDays(historyDays: Int, retentionDays: [Double]) -> Double {
        max(Double(historyDays), (retentionDays.max() ?? 0) + 1)
    }
}
