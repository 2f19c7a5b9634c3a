import DocRouteProtocol
import Foundation
import Synchronization

extension DaemonActivity {
    /// A long piece of work in progress, for `status`'s `progress` object.
    package struct Progress: Sendable, Hashable {
        /// `scan` (files a start-up or overflow scan found), `intake` (a burst of arrivals) or
        /// `drain` (a handler's backlog since it subscribed).
        package var phase: String
        /// The handler whose backlog drains (`drain` only).
        package var handler: String?
        /// Items finished.
        package var done: Int
        /// Items known so far (grows while files keep arriving).
        package var total: Int
        /// Items per second over the last few seconds.
        package var ratePerSecond: Double
        /// Seconds left at that rate; nil until there is a rate.
        package var etaSeconds: Double?

        /// The `progress` object of a `status` reply.
        package var json: JSONValue {
            var object: [String: JSONValue] = [
                "phase": .string(phase), "done": .integer(Int64(done)), "total": .integer(Int64(total)),
                "ratePerSecond": .real((ratePerSecond * 10).rounded() / 10),
            ]
            if let handler { object["handler"] = .string(handler) }
            if let etaSeconds { object["etaSeconds"] = .real((etaSeconds * 10).rounded() / 10) }
            return .object(object)
        }
    }

    /// The work to show a progress bar for: the intake's files first, else the handler backlog
    /// with the most left; nil when nothing is under way.
    package func progress(at now: ContinuousClock.Instant = .now) -> Progress? {
        state.withLock { state in
            if let intake = state.intake, !intake.isFinished {
                return Progress(phase: intake.phase, handler: nil, done: intake.done, total: intake.total,
                                ratePerSecond: intake.rate(at: now), etaSeconds: intake.estimatedSecondsLeft(at: now))
            }
            let drain = state.drains.filter { !$0.value.isFinished }.max { left, right in
                (left.value.total - left.value.done, right.key) < (right.value.total - right.value.done, left.key)
            }
            return drain.map { handler, tracker in
                Progress(phase: tracker.phase, handler: handler, done: tracker.done, total: tracker.total,
                         ratePerSecond: tracker.rate(at: now), etaSeconds: tracker.estimatedSecondsLeft(at: now))
            }
        }
    }

    /// A handler entry's operator fields: `deliveredToday`, and `lastError` (with `lastErrorAt`)
    /// when something failed for it since start.
    package func handlerFields(_ handler: String, now: Date = Date()) -> [String: JSONValue] {
        state.withLock { state in
            var fields: [String: JSONValue] = ["deliveredToday": .integer(Int64(state.tally.deliveredToday(handler, at: now)))]
            if let error = state.lastError[handler] {
                fields["lastError"] = .string(error.message)
                fields["lastErrorAt"] = .string(UTCTimestamp(error.at).rfc3339)
            }
            return fields
        }
    }

    /// An inbox entry's operator fields: `waiting` (seen, not yet delivered), `quarantined`
    /// (since start) and, for a Maildir, `unreadableMessages` (left in `new/`, since start).
    package func inboxFields(_ index: Int) -> [String: JSONValue] {
        state.withLock { state in
            var fields: [String: JSONValue] = [
                "waiting": .integer(Int64(state.waiting[index] ?? 0)), "quarantined": .integer(Int64(state.quarantined[index] ?? 0)),
            ]
            if let unreadable = state.unreadableMessages[index] { fields["unreadableMessages"] = .integer(Int64(unreadable)) }
            let folders = state.foldersWatched[index] ?? (0, 0)
            fields["watchedFolders"] = .integer(Int64(folders.count))
            fields["maxMailboxes"] = .integer(Int64(maxMailboxes))
            if folders.notServed > 0 { fields["foldersNotServed"] = .integer(Int64(folders.notServed)) }
            return fields
        }
    }

    /// Top-level operator fields: `deliveredToday`, `ledger` (per handler: deliveries by state and
    /// `deliveredToday`), and `progress` while something long is under way.
    package func statusFields(now: Date = Date()) -> [String: JSONValue] {
        var fields = state.withLock { state -> [String: JSONValue] in
            var byHandler: [String: JSONValue] = [:]
            for (handler, counts) in state.tally.counts {
                var entry: [String: JSONValue] = [:]
                for (state, count) in counts { entry[state.rawValue] = .integer(Int64(count)) }
                entry["deliveredToday"] = .integer(Int64(state.tally.deliveredToday(handler, at: now)))
                byHandler[handler] = .object(entry)
            }
            return ["deliveredToday": .integer(Int64(state.tally.deliveredToday(at: now))), "ledger": .object(byHandler)]
        }
        if let progress = progress() { fields["progress"] = progress.json }
        return fields
    }
}
