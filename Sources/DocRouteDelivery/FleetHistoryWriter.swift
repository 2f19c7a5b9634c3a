import DocRouteFleet
import Logging

/// Gathers the history events a host records after the fact (`written`, `notified`,
/// `sourceReclaimed`) and writes what gathered in one statement at most every ``interval``: a
/// statement (and a commit) per claim round, per acknowledgement batch and per intake batch cost
/// PostgreSQL two statements a document at a steady trickle. An event is late by the interval at
/// most; a failure only leaves the events out (the host's own ledger has them), as before.
package actor FleetHistoryWriter {
    /// How long an event waits for others before they are written together.
    static let interval: Duration = .milliseconds(100)
    /// Written at once when this many wait, whatever the interval.
    static let most = 4096

    let queue: FleetQueue
    let logger: Logger
    var waiting: [FleetQueue.HistoryRecord] = []
    var writer: Task<Void, Never>?

    package init(queue: FleetQueue, logger: Logger) {
        self.queue = queue
        self.logger = logger
    }

    /// Adds events, to be written within ``interval``.
    nonisolated func record(_ events: [FleetQueue.HistoryRecord]) {
        guard !events.isEmpty else { return }
        Task { await self.add(events) }
    }

    func add(_ events: [FleetQueue.HistoryRecord]) {
        waiting += events
        if waiting.count >= Self.most {
            writer?.cancel()
            writer = nil
            let batch = waiting
            waiting.removeAll()
            Task { await self.write(batch) }
        } else if writer == nil {
            writer = Task {
                guard (try? await Task.sleep(for: Self.interval)) != nil else { return }
                await self.flush()
            }
        }
    }

    /// Writes what waits now (at shutdown, and when the interval ends).
    package func flush() async {
        writer = nil
        let batch = waiting
        waiting.removeAll()
        await write(batch)
    }

    func write(_ events: [FleetQueue.HistoryRecord]) async {
        guard !events.isEmpty else { return }
        do {
            try await queue.record(events)
        } catch {
            logger.debug("fleet: \(events.count) history event(s) were not recorded in the fleet: \(error)")
        }
    }
}
