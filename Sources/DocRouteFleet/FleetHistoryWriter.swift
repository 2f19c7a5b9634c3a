import Logging
import Synchronization

/// Gathers the history events a host records after the fact (`written`, `notified`,
/// `sourceReclaimed`) and writes what gathered in one statement at most every ``interval``: a
/// statement (and a commit) per claim round, per acknowledgement batch and per intake batch cost
/// PostgreSQL two statements a document at a steady trickle. An event is late by the interval at
/// most; a failure only leaves the events out (the host's own ledger has them), as before.
///
/// ``record(_:)`` adds to the waiting events at once, without a task in between, so that a
/// ``flush()`` right after it (at shutdown) writes them: nothing recorded before a flush is left
/// behind it. Writes run one after the other, in the order they were begun, and a flush returns
/// once every write begun before it has ended.
package final class FleetHistoryWriter: Sendable {
    /// How long an event waits for others before they are written together.
    package static let interval: Duration = .milliseconds(100)
    /// Written at once when this many wait, whatever the interval.
    package static let most = 4096

    struct State {
        var waiting: [FleetQueue.HistoryRecord] = []
        /// Whether a flush after ``interval`` is on its way.
        var timed = false
        /// The last write begun; each waits for the one before it.
        var lastWrite: Task<Void, Never>?
    }

    let queue: FleetQueue
    let logger: Logger
    let state = Mutex(State())

    package init(queue: FleetQueue, logger: Logger) {
        self.queue = queue
        self.logger = logger
    }

    /// Adds events, to be written within ``interval`` (at once when ``most`` wait).
    package func record(_ events: [FleetQueue.HistoryRecord]) {
        guard !events.isEmpty else { return }
        let (full, timer) = state.withLock { state -> (Bool, Bool) in
            state.waiting += events
            if state.waiting.count >= Self.most { return (true, false) }
            guard !state.timed else { return (false, false) }
            state.timed = true
            return (false, true)
        }
        if full {
            beginWrite()
        } else if timer {
            Task {
                guard (try? await Task.sleep(for: Self.interval)) != nil else { return }
                self.beginWrite()
            }
        }
    }

    /// Writes what waits now, and returns once it and every write before it have ended (at
    /// shutdown, and when a host settles).
    package func flush() async {
        await beginWrite().value
    }

    /// Takes what waits and writes it after the writes begun before.
    @discardableResult
    func beginWrite() -> Task<Void, Never> {
        state.withLock { state in
            let batch = state.waiting
            state.waiting.removeAll()
            state.timed = false
            let previous = state.lastWrite
            let write = Task { [queue, logger] in
                await previous?.value
                guard !batch.isEmpty else { return }
                do {
                    try await queue.record(batch)
                } catch {
                    logger.debug("fleet: \(batch.count) history event(s) were not recorded in the fleet: \(error)")
                }
            }
            state.lastWrite = write
            return write
        }
    }
}
