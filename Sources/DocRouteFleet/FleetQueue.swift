import DocRouteConfiguration
import Foundation
import Logging
import PostgresNIO
import SystemPackage

/// The fleet's deliveries in PostgreSQL: what intake commits and what hosts claim.
///
/// One connection of its own, made when first needed and made anew after one is lost; each
/// failure is a ``FleetError`` said by ``FleetDatabase/explain(_:)``, so a caller tells
/// `unreachable` (wait and try again) from the rest. Calls run one at a time, each to its end:
/// an actor alone would interleave them at every `await`, and a claim must not run inside an
/// intake's open transaction. `LISTEN` runs on a second connection (``wakeUps()``).
package actor FleetQueue {
    nonisolated package let database: FleetDatabase
    nonisolated package let hostName: String
    let logger: Logger
    /// The bytes of a document are kept in chunks of this many bytes (the last one shorter).
    package static let chunkSize = 1 << 20
    /// The channel intake notifies, its payload the handler's bundle identifier.
    package static let channel = "docroute_deliveries"

    var connection: PostgresConnection?
    /// Whether a call holds the connection; the calls waiting for it, in arrival order.
    var busy = false
    var waiting: [CheckedContinuation<Void, Never>] = []
    /// The running call's watchdog: work that moves touches it.
    var watchdog: FleetQueueWatchdog?

    /// Whether a commit returns only once PostgreSQL has it on disk (the server's default).
    package let synchronousCommit: Bool

    /// A queue of its own connection. `synchronousCommit` false is for what a crash of PostgreSQL
    /// may lose without harm, and only that: a commit then returns before its WAL is flushed, and
    /// the server's crash can lose the last ones (for at most three times `wal_writer_delay`, 0.6 s
    /// by default), never half of one, and never one that a later commit of any session waited
    /// for (the WAL is flushed in order). Claims and history events go there; intake's documents
    /// and acknowledgements, on which a source's removal or a handler's answer rests, never do.
    package init(database: FleetDatabase, hostName: String, synchronousCommit: Bool = true, logger: Logger) {
        self.database = database
        self.hostName = hostName
        self.synchronousCommit = synchronousCommit
        self.logger = logger
    }

    /// A queue dropped without ``close()`` closes its connection on the way out; the closing
    /// keeps the connection alive until its channel is shut.
    deinit {
        if let connection { Self.close(connection) }
    }

    /// Closes `connection` without waiting, keeping it until it is closed (PostgresNIO insists
    /// that a connection is closed before it goes).
    nonisolated static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// `lease_seconds` from the configuration.
    var leaseSeconds: Double { Double(database.configuration.leaseSeconds) }

    /// How long a call may see nothing move before its connection counts as lost: a lease, as
    /// for the heartbeat (a host that waits longer has lost its claims anyway).
    var stallLimit: Duration { .seconds(database.configuration.leaseSeconds) }

    /// Closes the connection (at shutdown); a later call would make a new one.
    package func close() async {
        await acquire()
        defer { relinquish() }
        if let connection {
            self.connection = nil
            try? await connection.close()
        }
    }

    func acquire() async {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
    }

    /// Hands the connection to the next waiting call (which stays `busy`), or frees it.
    func relinquish() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Runs `body` alone on the connection (made when there is none); its failure said as a
    /// ``FleetError`` beginning with `what`. A connection that failed by anything but the server's
    /// refusal of a statement is closed and dropped: the next call connects again. A call on
    /// which nothing moves for ``stallLimit`` is `unreachable` (``FleetQueueWatchdog``).
    func exclusive<T: Sendable>(_ what: String, _ body: @escaping (PostgresConnection) async throws -> T) async throws(FleetError) -> T {
        await acquire()
        defer { relinquish() }
        let connection: PostgresConnection
        if let open = self.connection, !open.isClosed {
            connection = open
        } else {
            self.connection = nil
            do {
                connection = try await database.connect(logger: logger, synchronousCommit: synchronousCommit)
            } catch {
                throw FleetError(code: error.code, message: "\(what): \(error.message)", cause: error)
            }
            self.connection = connection
        }
        let watchdog = FleetQueueWatchdog(limit: stallLimit)
        self.watchdog = watchdog
        // The body runs on this actor as before, in a task of its own: when the watchdog fires, the
        // call ends at once (``FleetDeadline``). A query sent on a connection the server cut off
        // while it was idle may never end, even once the connection is closed, and every later
        // call would wait behind it.
        nonisolated(unsafe) let work = body
        let running = Task { [self] () async throws -> T in
            _ = self.hostName
            return try await work(connection)
        }
        defer {
            running.cancel()
            self.watchdog = nil
        }
        do {
            return try await FleetDeadline<T>.run(until: {
                await watchdog.watch(connection)
                return watchdog.hasFired
            }, expired: {}, failure: {
                FleetError(code: .unreachable, message: "the watchdog closed the connection")
            }) {
                try await running.value
            }
        } catch {
            if watchdog.hasFired {
                self.connection = nil
                throw FleetError(code: .unreachable, message: """
                    \(what): PostgreSQL at \(database.address) did not answer within lease_seconds (\(stallLimit.components.seconds) s); \
                    the connection is made anew at the next call
                    """, cause: error)
            }
            let refused = (error as? PSQLError)?.code == .server
            if connection.isClosed || !(refused || error is FleetError) {
                self.connection = nil
                Self.close(connection)
            }
            let explained = database.explain(error)
            throw FleetError(code: explained.code, message: "\(what): \(explained.message)", cause: explained)
        }
    }

    /// Runs `body` between BEGIN and COMMIT; ROLLBACK when it throws.
    func transaction<T: Sendable>(_ connection: PostgresConnection, _ body: () async throws -> T) async throws -> T {
        try await connection.query("BEGIN", logger: logger)
        do {
            let value = try await body()
            try await connection.query("COMMIT", logger: logger)
            return value
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
