import Logging
import PostgresNIO

extension FleetQueue {
    /// Handler bundle ids named by `NOTIFY docroute_deliveries`, as they come, from `LISTEN` on a
    /// connection of its own. "" (look at every handler) is yielded each time `LISTEN` is in place:
    /// first, and after every reconnect, since what was notified while it was down is lost. A lost
    /// connection is made anew after a wait doubling from half a second up to `maximumBackoff`.
    /// An idle `LISTEN` hears nothing of a server cut off by the network, so the connection is
    /// asked `SELECT 1` every lease and closed when that gets no answer within a lease.
    /// Ends when the stream's consumer stops iterating (its task cancelled).
    package nonisolated func wakeUps() -> AsyncStream<String> {
        wakeUps(maximumBackoff: .seconds(30))
    }

    nonisolated func wakeUps(maximumBackoff: Duration) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(4096))
        let database = database
        let logger = logger
        let lease = Duration.seconds(database.configuration.leaseSeconds)
        let task = Task {
            await Self.listen(database: database, logger: logger, probeEvery: lease, maximumBackoff: maximumBackoff, continuation: continuation)
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    static func listen(database: FleetDatabase, logger: Logger, probeEvery lease: Duration, maximumBackoff: Duration,
                       continuation: AsyncStream<String>.Continuation) async {
        var backoff: Duration = .milliseconds(500)
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await database.connect(logger: logger)
                let probing = Task { await probe(connection, every: lease, logger: logger) }
                defer { probing.cancel() }
                do {
                    try await withTaskCancellationHandler {
                        try await connection.listen(on: channel) { notifications in
                            if failures > 0 {
                                logger.notice("fleet: listening for deliveries again", metadata: ["database": "\(database.address)"])
                            }
                            failures = 0
                            backoff = .milliseconds(500)
                            continuation.yield("")
                            for try await notification in notifications { continuation.yield(notification.payload) }
                        }
                    } onCancel: {
                        close(connection)
                    }
                } catch {
                    if !Task.isCancelled { failures += 1 }
                    if !Task.isCancelled {
                        logger.warning("fleet: listening for deliveries stopped: \(database.explain(error).message)", metadata: ["database": "\(database.address)"])
                    }
                }
                try? await connection.close()
            } catch {
                failures += 1
                logger.warning("fleet: cannot listen for deliveries: \(error.message)", metadata: [
                    "code": "\(error.code.rawValue)", "database": "\(database.address)", "attempt": "\(failures)",
                ])
            }
            if Task.isCancelled { break }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, maximumBackoff)
        }
    }

    /// Asks `connection` `SELECT 1` every `lease` until cancelled; closes it when an answer does
    /// not come within a lease (which ends the `LISTEN` on it, and it is made anew).
    static func probe(_ connection: PostgresConnection, every lease: Duration, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: lease)
            } catch {
                return
            }
            let watchdog = FleetQueueWatchdog(limit: lease)
            let watching = Task { await watchdog.watch(connection) }
            defer { watching.cancel() }
            do {
                try await connection.query("SELECT 1", logger: logger)
            } catch {
                close(connection)
                return
            }
        }
    }
}
