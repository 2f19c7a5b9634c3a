import CoreMetrics
import DocRouteIntake
import Prometheus
import Synchronization

/// docrouted's metrics, as swift-metrics instruments backed by a Prometheus registry.
///
/// Every instrument is made with this instance's own ``PrometheusMetricsFactory``, so two daemons
/// (or tests) in one process never share counts; `docrouted` also bootstraps the global
/// `MetricsSystem` with the same factory so that anything else using swift-metrics lands in the
/// same text. Label values are bounded: handlers are the registered ones, reasons and outcomes a
/// fixed set.
package final class DeliveryMetrics: Sendable {
    /// What became of a delivery, the `outcome` label of `docroute_deliveries_total`.
    package enum Outcome: String, Sendable, CaseIterable {
        /// Copied durably and recorded; owed to the handler.
        case delivered
        /// The same source had been delivered before a crash; only its removal was left to do.
        case alreadyDelivered = "already_delivered"
        /// Not delivered, and trying again cannot help (the source changed or went away).
        case failed
        /// Not delivered yet; the source stays in its inbox and is tried again.
        case retrying
    }

    /// Metric names, all prefixed `docroute_`.
    package enum Name {
        /// Counter by `handler` and `outcome` (``Outcome``).
        package static let deliveries = "docroute_deliveries_total"
        /// Counter by `handler`: bytes of delivered copies.
        package static let deliveredBytes = "docroute_delivered_bytes_total"
        /// Counter by `handler` and `outcome` (`handled`, `declined`).
        package static let acknowledgements = "docroute_acknowledgements_total"
        /// Counter by `reason` (``DeliveryMetrics/quarantineReason(for:)``).
        package static let quarantined = "docroute_quarantined_total"
        /// Counter by `reason` (``RescanReason``).
        package static let rescans = "docroute_rescans_total"
        /// Gauge: files seen in the inboxes and not yet settled.
        package static let intakeWaiting = "docroute_intake_waiting"
        /// Gauge: delivered sources taken out of their inboxes, not yet freed.
        package static let sourcesToReclaim = "docroute_sources_to_reclaim"
        /// Gauge by `handler`: events sent and not yet acknowledged.
        package static let unacknowledged = "docroute_unacknowledged"
        /// Histogram: first seen in an inbox until durable in the sandbox and the ledger.
        package static let deliveryLatency = "docroute_delivery_latency_seconds"
        /// Histogram by `handler`: event sent until acknowledged.
        package static let acknowledgementLatency = "docroute_ack_latency_seconds"
        /// Gauge: bytes the ledger takes on disk (its file and write-ahead log).
        package static let ledgerBytes = "docroute_ledger_bytes"
        /// Counter: `open` requests refused with `over-limit`.
        package static let overLimit = "docroute_open_over_limit_total"
        /// Gauge, with `[fleet]`: 1 while the fleet's database answers, 0 while it does not.
        package static let fleetReachable = "docroute_fleet_database_reachable"
        /// Gauge by `host`, with `[fleet]`: deliveries the host holds under a lease.
        package static let fleetClaimed = "docroute_fleet_claimed"
        /// Gauge by `host`, with `[fleet]`: 1 while its heartbeat is within its lease.
        package static let fleetHostLive = "docroute_fleet_host_live"
        /// Gauge by `handler`, with `[fleet]`: deliveries committed and claimed by no host.
        package static let fleetOwed = "docroute_fleet_owed"
    }

    /// The registry the instruments report to; ``render()`` emits it.
    package let registry: PrometheusCollectorRegistry
    /// The factory that makes this instance's instruments (and, in docrouted, everyone's).
    package let factory: PrometheusMetricsFactory

    /// Instruments already made, by kind, name and labels: each is made once and reused.
    private let instruments = Mutex([InstrumentKey: any AnyObject & Sendable]())
    /// The hosts and handlers the fleet's gauges were last set for, so one that goes reads 0.
    private let fleetLabels = Mutex((hosts: Set<String>(), handlers: Set<String>()))

    /// Creates the instruments' registry and factory, with latency buckets suited to file delivery
    /// (a few milliseconds for a small durable copy, up to minutes for a slow handler's answer).
    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Name.deliveryLatency] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10), .seconds(30), .seconds(60),
        ]
        factory.durationHistogramBuckets[Name.acknowledgementLatency] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250),
            .seconds(1), .seconds(5), .seconds(30), .seconds(60), .seconds(300), .seconds(1800),
        ]
        self.factory = factory
        // Always present, so a scraper sees zeros rather than nothing before the first file.
        gauge(Name.intakeWaiting, []).record(0)
        gauge(Name.sourcesToReclaim, []).record(0)
        _ = counter(Name.overLimit, [])
        for reason in RescanReason.allCases { _ = counter(Name.rescans, [("reason", reason.rawValue)]) }
    }

    /// Makes this instance's factory the process's `MetricsSystem` factory, so metrics that other
    /// code makes with swift-metrics land in the same registry and file. Once per process.
    package func bootstrapMetricsSystem() {
        MetricsSystem.bootstrap(factory)
    }

    /// The Prometheus text exposition of every instrument.
    package func render() -> [UInt8] {
        Self.addingHelp(to: registry.emitToBuffer())
    }

    /// What each family measures, for its `# HELP` line (node-exporter and Prometheus show it).
    static let help: [String: String] = [
        Name.deliveries: "Deliveries into handlers' sandboxes by handler and outcome (delivered, already_delivered, retrying, failed).",
        Name.deliveredBytes: "Bytes copied into handlers' sandboxes, by handler.",
        Name.acknowledgements: "Handlers' answers to events, by handler and outcome (handled, declined).",
        Name.quarantined: "Files set aside in the quarantine, by reason.",
        Name.rescans: "Inbox listings, by reason (startup, overflow, inbox_recreated, backlog).",
        Name.intakeWaiting: "Files seen in the inboxes and not yet settled.",
        Name.sourcesToReclaim: "Delivered sources taken out of their inboxes and not yet freed.",
        Name.unacknowledged: "Events sent to a handler and not yet acknowledged, by handler.",
        Name.deliveryLatency: "Seconds from first seen in an inbox until durable in the sandbox and the ledger.",
        Name.acknowledgementLatency: "Seconds from an event sent until the handler acknowledged it, by handler.",
        Name.ledgerBytes: "Bytes the delivery ledger takes on disk (its file, write-ahead log and index).",
        Name.overLimit: "Open requests refused with over-limit: a user's budget per minute, or what a handler or a user may leave unacknowledged.",
        Name.fleetReachable: "1 while the fleet's PostgreSQL database answers this host, 0 while it does not.",
        Name.fleetClaimed: "Deliveries each host of the fleet holds under a lease, by host.",
        Name.fleetHostLive: "1 while a host's heartbeat is within its lease, 0 after, by host.",
        Name.fleetOwed: "Deliveries committed to the fleet and claimed by no host, by handler.",
    ]

    /// Puts a `# HELP name text` line before each family's `# TYPE` line (swift-prometheus writes
    /// only the TYPE).
    static func addingHelp(to text: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count + 1024)
        for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if line.starts(with: Array("# TYPE ".utf8)) {
                let name = String(decoding: line.dropFirst(7).prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                if let help = help[name] { output += Array("# HELP \(name) \(help)\n".utf8) }
            }
            output += line
            output.append(UInt8(ascii: "\n"))
        }
        // split kept the text's last newline as an empty last line: drop the extra one.
        if text.last == UInt8(ascii: "\n") || text.isEmpty { output.removeLast() }
        return output
    }

    // MARK: Events

    /// A delivery to `handler` ended with `outcome`; `bytes` and `latency` (first seen in an inbox
    /// until durable) count for delivered ones.
    package func delivery(handler: String, outcome: Outcome, bytes: Int64 = 0, latency: Duration? = nil) {
        counter(Name.deliveries, [("handler", handler), ("outcome", outcome.rawValue)]).increment()
        guard outcome == .delivered else { return }
        counter(Name.deliveredBytes, [("handler", handler)]).increment(by: max(0, bytes))
        if let latency { timer(Name.deliveryLatency, []).recordNanoseconds(Self.nanoseconds(latency)) }
    }

    /// A handler acknowledged a delivery (`handled` false: it declined), `latency` after it was sent.
    package func acknowledgement(handler: String, handled: Bool, latency: Duration?) {
        counter(Name.acknowledgements, [("handler", handler), ("outcome", handled ? "handled" : "declined")]).increment()
        if let latency {
            timer(Name.acknowledgementLatency, [("handler", handler)]).recordNanoseconds(Self.nanoseconds(latency))
        }
    }

    /// A file went to quarantine; `reason` is one of ``quarantineReason(for:)``'s categories.
    package func quarantine(reason: String) {
        counter(Name.quarantined, [("reason", reason)]).increment()
    }

    /// An inbox was listed again.
    package func rescan(_ reason: RescanReason) {
        counter(Name.rescans, [("reason", reason.rawValue)]).increment()
    }

    /// Files seen in the inboxes and not yet settled.
    package func intakeWaiting(_ count: Int) {
        gauge(Name.intakeWaiting, []).record(Int64(count))
    }

    /// Delivered sources taken out of their inboxes and not yet freed.
    package func sourcesToReclaim(_ count: Int) {
        gauge(Name.sourcesToReclaim, []).record(Int64(count))
    }

    /// Bytes the ledger takes on disk.
    package func ledgerBytes(_ bytes: Int64) {
        gauge(Name.ledgerBytes, []).record(bytes)
    }

    /// The fleet as this host last read it: whether the database answered, and, when it did, each
    /// host's claims and liveness and what is owed by handler. A host or handler that no longer
    /// appears reads 0.
    package func fleet(reachable: Bool, hosts: [(name: String, claimed: Int, live: Bool)], owed: [String: Int]) {
        gauge(Name.fleetReachable, []).record(reachable ? 1 : 0)
        guard reachable else { return }
        let gone = fleetLabels.withLock { last in
            let now = (hosts: Set(hosts.map(\.name)), handlers: Set(owed.keys))
            defer { last = now }
            return (hosts: last.hosts.subtracting(now.hosts), handlers: last.handlers.subtracting(now.handlers))
        }
        for host in hosts {
            gauge(Name.fleetClaimed, [("host", host.name)]).record(Int64(host.claimed))
            gauge(Name.fleetHostLive, [("host", host.name)]).record(host.live ? 1 : 0)
        }
        for (handler, count) in owed { gauge(Name.fleetOwed, [("handler", handler)]).record(Int64(count)) }
        for host in gone.hosts {
            gauge(Name.fleetClaimed, [("host", host)]).record(0)
            gauge(Name.fleetHostLive, [("host", host)]).record(0)
        }
        for handler in gone.handlers { gauge(Name.fleetOwed, [("handler", handler)]).record(0) }
    }

    /// An `open` request was refused with `over-limit`.
    package func refusedOverLimit() {
        counter(Name.overLimit, []).increment()
    }

    /// Events sent to a handler and not yet acknowledged.
    package func unacknowledged(handler: String, _ count: Int) {
        gauge(Name.unacknowledged, [("handler", handler)]).record(Int64(count))
    }

    /// A bounded label for a quarantine reason written for people: the reason file keeps the words,
    /// the metric only the category.
    package static func quarantineReason(for reason: String) -> String {
        if reason.contains("no handler claims") { return "no_handler" }
        if reason.contains("hard link") { return "hard_link" }
        if reason.contains("max_file_size") || reason.contains("max_file_allocation") { return "too_large" }
        if reason.contains("symbolic link") { return "symbolic_link" }
        if reason.contains("not a regular file") { return "not_regular_file" }
        return "other"
    }

    // MARK: Instruments

    /// An instrument's kind, name and labels. A struct rather than one string: building the
    /// string (the kind's type name, then each label appended) took several allocations and a
    /// type-name lookup for each of the five instruments a delivered and acknowledged file touches.
    private struct InstrumentKey: Hashable {
        var kind: ObjectIdentifier
        var name: String
        var labels: [String] = []

        init(kind: Any.Type, name: String, labels: [(String, String)]) {
            self.kind = ObjectIdentifier(kind)
            self.name = name
            self.labels.reserveCapacity(labels.count * 2)
            for (label, value) in labels {
                self.labels.append(label)
                self.labels.append(value)
            }
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(0, seconds) &* 1_000_000_000 &+ max(0, attoseconds / 1_000_000_000)
    }

    private func instrument<Instrument: AnyObject & Sendable>(
        _ name: String, _ labels: [(String, String)], make: () -> Instrument
    ) -> Instrument {
        let key = InstrumentKey(kind: Instrument.self, name: name, labels: labels)
        return instruments.withLock { made in
            if let existing = made[key] as? Instrument { return existing }
            let instrument = make()
            made[key] = instrument
            return instrument
        }
    }

    private func counter(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Counter {
        instrument(name, labels) { CoreMetrics.Counter(label: name, dimensions: labels, factory: factory) }
    }

    private func gauge(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Gauge {
        instrument(name, labels) { CoreMetrics.Gauge(label: name, dimensions: labels, factory: factory) }
    }

    private func timer(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Timer {
        instrument(name, labels) { CoreMetrics.Timer(label: name, dimensions: labels, factory: factory) }
    }
}
