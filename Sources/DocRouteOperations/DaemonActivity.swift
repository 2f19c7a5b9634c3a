import DocRouteConfiguration
import DocRouteIntake
import DocRouteLedger
import DocRouteProtocol
import Foundation
import Logging
import NIOPosix
import Synchronization
import SystemPackage

/// What the daemon is doing, for operators: counts kept in memory as events happen (so `status`
/// reads no ledger beyond indexed counts), the Prometheus metrics, and the textfile they are
/// written to.
///
/// The intake pipeline, the dispatcher and the request handlers report to it with one call per
/// event; it never calls back into them. Every method is cheap (a lock, a few dictionary updates)
/// and never blocks on I/O: the metrics file is written later, on its own thread.
package final class DaemonActivity: Sendable {
    /// The daemon's swift-metrics instruments.
    package let metrics: DeliveryMetrics
    /// Writes `metrics_textfile`; nil when the configuration names none.
    package let textfile: MetricsTextfileWriter?
    let inboxCount: Int
    let state: Mutex<State>

    struct State {
        var tally = LedgerTally(statistics: nil, now: Date())
        /// Files seen in each inbox (by index) and not yet settled.
        var waiting: [Int: Int] = [:]
        /// Files quarantined from each inbox since start.
        var quarantined: [Int: Int] = [:]
        /// Maildir messages left in `new/` because they cannot be read (malformed, cut short).
        var unreadableMessages: [Int: Int] = [:]
        /// Per inbox: folders watched, and folders not served because of `max_mailboxes`.
        var foldersWatched: [Int: (count: Int, notServed: Int)] = [:]
        /// When intake first saw each waiting file: the start of its delivery latency.
        var firstSeen: [ArrivalQueue.Arrival: ContinuousClock.Instant] = [:]
        /// The last failure per handler (as its manifest spells it).
        var lastError: [String: (message: String, at: Date)] = [:]
        /// The files waiting now, from the first one seen after the queue was empty.
        var intake: ProgressTracker<ContinuousClock.Instant>?
        /// The files counted in `intake` (by identity: folder and name), so a file queued again
        /// (a retry, the inbox listed again while its copy commits) is counted once, and the
        /// files among them settled: progress goes from seen to settled, each file once.
        var intakeSeen: Set<Int> = []
        var intakeSettled: Set<Int> = []
        /// Each handler's backlog since it subscribed, while it lasts.
        var drains: [String: ProgressTracker<ContinuousClock.Instant>] = [:]
        /// Events sent and not yet acknowledged: handler and when it was sent.
        var sent: [String: (handler: String, at: ContinuousClock.Instant)] = [:]
        var unacknowledged: [String: Int] = [:]
    }

    /// `max_mailboxes`, shown beside each inbox's watched folders.
    let maxMailboxes: Int

    /// - Parameters:
    ///   - configuration: `metrics_textfile` decides whether a file is written.
    ///   - threadPool: where the file is written (the daemon's pool); nil gives the writer a thread of its own.
    ///   - ledgerBytes: measures the ledger's size on disk; asked each time the metrics are
    ///     written (on the writer's thread, never on an event's).
    package init(configuration: DaemonConfiguration, logger: Logger, metrics: DeliveryMetrics = DeliveryMetrics(), threadPool: NIOThreadPool? = nil,
                 ledgerBytes: (@Sendable () -> Int64)? = nil) {
        self.metrics = metrics
        self.inboxCount = configuration.inboxes.count
        self.maxMailboxes = configuration.maxMailboxes
        self.state = Mutex(State())
        self.textfile = configuration.metricsTextfile.map { path in
            MetricsTextfileWriter(path: FilePath(path), pool: threadPool, logger: logger) { [metrics] in
                if let ledgerBytes { metrics.ledgerBytes(ledgerBytes()) }
                return metrics.render()
            }
        }
    }

    /// Counts from the ledger at start, after recovery and before any delivery.
    package func seed(_ statistics: LedgerStatistics?, now: Date = Date()) {
        state.withLock { $0.tally = LedgerTally(statistics: statistics, now: now) }
        textfile?.changed()
    }

    /// Writes the metrics file if anything changed since it was last written (at shutdown).
    package func flush() async {
        await textfile?.flush()
    }

    // MARK: Intake

    /// A file entered the intake queue. It is counted once until it is settled, however often
    /// it is reported or queued again (a retry after a full disk or a change during its copy
    /// queues it anew while it is still counted).
    package func queued(_ arrival: ArrivalQueue.Arrival) {
        let now = ContinuousClock.now
        let waiting = state.withLock { state -> Int? in
            guard state.firstSeen[arrival] == nil else { return nil }
            state.firstSeen[arrival] = now
            state.waiting[arrival.folder.inbox, default: 0] += 1
            if state.intake == nil { state.intake = ProgressTracker(phase: "intake", at: now) }
            if state.intakeSeen.insert(arrival.hashValue).inserted { state.intake?.add() }
            return state.waiting.values.reduce(0, +)
        }
        guard let waiting else { return }
        metrics.intakeWaiting(waiting)
        textfile?.changed()
    }

    /// Files taken off the queue are settled: delivered, quarantined or gone. A file set aside
    /// to be tried again is not settled: it still waits in its inbox (the caller leaves it out).
    /// Progress counts a file done only when it is delivered or quarantined (``record(_:)``,
    /// ``quarantined(inbox:reason:arrival:)``): a copy found delivered by an earlier batch, or
    /// gone, is not a second file.
    package func settled(_ arrivals: [ArrivalQueue.Arrival]) {
        guard !arrivals.isEmpty else { return }
        let now = ContinuousClock.now
        let waiting = state.withLock { state -> Int in
            for arrival in arrivals where state.firstSeen.removeValue(forKey: arrival) != nil {
                state.waiting[arrival.folder.inbox] = max(0, (state.waiting[arrival.folder.inbox] ?? 0) - 1)
                // A mail message is done once read (its attachments are counted as deliveries).
                if arrival.folder.role == .maildirNew { Self.progressDone(arrival, in: &state, at: now) }
            }
            let waiting = state.waiting.values.reduce(0, +)
            if waiting == 0 {
                state.intake = nil
                state.intakeSeen = []
                state.intakeSettled = []
            }
            return waiting
        }
        metrics.intakeWaiting(waiting)
        textfile?.changed()
    }

    /// The fleet as this host last read it (see ``DeliveryMetrics/fleet(reachable:hosts:owed:)``).
    package func fleet(reachable: Bool, hosts: [(name: String, claimed: Int, live: Bool)], owed: [String: Int]) {
        metrics.fleet(reachable: reachable, hosts: hosts, owed: owed)
        textfile?.changed()
    }

    /// Delivered sources taken out of their inboxes and not yet freed (see ``SourceReclaimer``).
    package func sourcesToReclaim(_ count: Int) {
        metrics.sourcesToReclaim(count)
        textfile?.changed()
    }

    /// An inbox listing finished (it queued what it found): the files waiting now are a scan's.
    package func rescanned(_ reason: RescanReason) {
        state.withLock { $0.intake?.phase = "scan" }
        metrics.rescan(reason)
        textfile?.changed()
    }

    /// What became of a batch handed to the backend. `arrivals[i]`, when given, is where
    /// `deliveries[i]` came from (its latency starts when intake first saw it).
    package func delivered(_ deliveries: [DocumentDelivery], _ outcomes: [DocumentDeliveryOutcome], arrivals: [ArrivalQueue.Arrival] = []) {
        record(outcomes.indices.filter { $0 < deliveries.count }.map { index in
            (deliveries[index].bundleIdentifier, outcomes[index], index < arrivals.count ? arrivals[index] : nil)
        })
    }

    /// A package document's outcome, counted like a file's.
    package func packageDelivered(_ bundleIdentifier: String, _ outcome: DocumentDeliveryOutcome, arrival: ArrivalQueue.Arrival) {
        record([(bundleIdentifier, outcome, arrival)])
    }

    private func record(_ outcomes: [(handler: String, outcome: DocumentDeliveryOutcome, arrival: ArrivalQueue.Arrival?)]) {
        let now = ContinuousClock.now
        let date = Date()
        var reports: [(handler: String, outcome: DeliveryMetrics.Outcome, bytes: Int64, latency: Duration?)] = []
        state.withLock { state in
            for (handler, outcome, arrival) in outcomes {
                switch outcome {
                case .committed(_, _, _, let bytes):
                    state.tally.committed(handler, at: date)
                    if let arrival { Self.progressDone(arrival, in: &state, at: now) }
                    let seen = arrival.flatMap { state.firstSeen[$0] }
                    reports.append((handler, .delivered, bytes, seen.map { $0.duration(to: now) }))
                case .alreadyDelivered:
                    reports.append((handler, .alreadyDelivered, 0, nil))
                case .failed(let error):
                    state.lastError[handler] = ("\(error)", date)
                    reports.append((handler, error.isRetryable ? .retrying : .failed, 0, nil))
                }
            }
        }
        for report in reports {
            metrics.delivery(handler: report.handler, outcome: report.outcome, bytes: report.bytes, latency: report.latency)
        }
        textfile?.changed()
    }

    /// A custom-scheme URL was recorded for `handler` (an `open` request).
    package func committedURL(_ handler: String) {
        let date = Date()
        state.withLock { $0.tally.committed(handler, at: date) }
        metrics.delivery(handler: handler, outcome: .delivered)
        textfile?.changed()
    }

    /// One file of the intake's progress is done, once however often it was queued.
    private static func progressDone(_ arrival: ArrivalQueue.Arrival, in state: inout State, at now: ContinuousClock.Instant) {
        let key = arrival.hashValue
        if state.intakeSeen.contains(key) && state.intakeSettled.insert(key).inserted { state.intake?.finish(1, at: now) }
    }

    /// A file from inbox `inbox` went to quarantine.
    package func quarantined(inbox: Int, reason: String, arrival: ArrivalQueue.Arrival? = nil) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.quarantined[inbox, default: 0] += 1
            if let arrival { Self.progressDone(arrival, in: &state, at: now) }
        }
        metrics.quarantine(reason: DeliveryMetrics.quarantineReason(for: reason))
        textfile?.changed()
    }

    /// A Maildir message of inbox `inbox` was left in `new/`, unreadable (reported once).
    package func foldersWatched(inbox: Int, count: Int, notServed: Int) {
        state.withLock { $0.foldersWatched[inbox] = (count, notServed) }
    }

    package func unreadableMessage(inbox: Int) {
        state.withLock { $0.unreadableMessages[inbox, default: 0] += 1 }
    }

    /// Something failed for `handler` that an operator should see in `status`.
    package func failed(_ handler: String, _ message: String) {
        let date = Date()
        state.withLock { $0.lastError[handler] = (message, date) }
    }

    // MARK: Dispatch

    /// `handler` subscribed with `pending` documents owed: its backlog drain starts.
    package func subscribed(_ handler: String, pending: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.drains[handler] = pending > 1 ? ProgressTracker(phase: "drain", total: pending, at: now) : nil
        }
    }

    /// An event for `deliveryID` went out to `handler`.
    package func sent(_ handler: String, deliveryID: String) {
        let now = ContinuousClock.now
        let count = state.withLock { state -> Int in
            if state.sent.updateValue((handler, now), forKey: deliveryID) == nil { state.unacknowledged[handler, default: 0] += 1 }
            return state.unacknowledged[handler] ?? 0
        }
        metrics.unacknowledged(handler: handler, count)
        textfile?.changed()
    }

    /// `handler` acknowledged `deliveryID` (`handled` false: declined it). A decline is the
    /// handler's last error in `status`, with how many it declined and the last one's name.
    package func acknowledged(_ handler: String, deliveryID: String, handled: Bool, originalName: String = "") {
        let now = ContinuousClock.now
        let date = handled ? nil : Date()
        let (latency, count) = state.withLock { state -> (Duration?, Int) in
            state.tally.acknowledged(handler, handled: handled)
            if let date {
                let declined = state.tally.counts[handler]?[.declined] ?? 1
                state.lastError[handler] = ("declined \(declined) document\(declined == 1 ? "" : "s"), last \(originalName) at \(UTCTimestamp(date).rfc3339)", date)
            }
            var latency: Duration?
            if let sent = state.sent.removeValue(forKey: deliveryID) {
                latency = sent.at.duration(to: now)
                state.unacknowledged[handler] = max(0, (state.unacknowledged[handler] ?? 0) - 1)
            }
            if var drain = state.drains[handler] {
                drain.finish(at: now)
                state.drains[handler] = drain.isFinished ? nil : drain
            }
            return (latency, state.unacknowledged[handler] ?? 0)
        }
        metrics.acknowledgement(handler: handler, handled: handled, latency: latency)
        metrics.unacknowledged(handler: handler, count)
        textfile?.changed()
    }

    /// An `open` was refused with `over-limit` (a uid's budget, or what may be owed).
    package func refusedOverLimit() {
        metrics.refusedOverLimit()
        textfile?.changed()
    }

    /// A connection of `handler` closed with `deliveryIDs` unacknowledged: they stay owed. The
    /// backlog's progress ends with the handler's last connection.
    package func disconnected(_ handler: String, deliveryIDs: [String], stillSubscribed: Bool = false) {
        let count = state.withLock { state -> Int in
            for id in deliveryIDs where state.sent.removeValue(forKey: id) != nil {
                state.unacknowledged[handler] = max(0, (state.unacknowledged[handler] ?? 0) - 1)
            }
            if !stillSubscribed { state.drains[handler] = nil }
            return state.unacknowledged[handler] ?? 0
        }
        metrics.unacknowledged(handler: handler, count)
        textfile?.changed()
    }
}
