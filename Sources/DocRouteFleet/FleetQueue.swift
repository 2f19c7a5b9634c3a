import DocRouteConfiguration
import Foundation
import Logging
import PostgresNIO
import SystemPackage

/// The fleet's deliveries in PostgreSQL: what intake commits and what hosts claim.
///
/// One connection of its own (made anew when lost, each failure a ``FleetError``), used one call
/// at a time (an actor); `LISTEN` runs on a second connection (``wakeUps()``).
package actor FleetQueue {
    package let database: FleetDatabase
    package let hostName: String
    let logger: Logger

    package init(database: FleetDatabase, hostName: String, logger: Logger) {
        self.database = database
        self.hostName = hostName
        self.logger = logger
    }

    static var notBuilt: FleetError { FleetError(code: .database, message: "not built yet") }

    /// Commits documents, their chunks and their deliveries in one transaction; returns once
    /// committed. Streams bytes chunk by chunk. A document whose (intake host, source identity) is
    /// already committed is not written again (its existing delivery id is kept).
    package func enqueue(_ documents: [FleetDocument]) async throws(FleetError) {
        throw Self.notBuilt
    }

    /// Of these source identities (of this host), the ones committed before, with their delivery ids.
    package func committedSources(_ identities: [String]) async throws(FleetError) -> [String: UUID] {
        throw Self.notBuilt
    }

    /// Claims up to `limit` deliveries for `handler` (owed, or claimed with a lease run out),
    /// oldest first, skipping rows another host is claiming; the lease is `lease_seconds`.
    package func claim(handler: String, limit: Int) async throws(FleetError) -> [FleetClaim] {
        throw Self.notBuilt
    }

    /// Writes a claimed document's bytes to `descriptor` (`pwrite` from offset 0), a chunk at a
    /// time; neither syncs nor closes it.
    package func copyBytes(of documentID: UUID, to descriptor: SystemPackage.FileDescriptor) async throws(FleetError) {
        throw Self.notBuilt
    }

    /// Renews the lease of every delivery this host holds; returns how many.
    package func renewLeases() async throws(FleetError) -> Int {
        throw Self.notBuilt
    }

    /// Records acknowledgements; `handled` false records a decline (still ended). Returns the ids
    /// whose first acknowledgement this was. A document's chunks are deleted once every delivery of
    /// it has ended.
    package func acknowledge(_ deliveryIDs: [UUID], handled: Bool) async throws(FleetError) -> Set<UUID> {
        throw Self.notBuilt
    }

    /// Gives deliveries back to the fleet at once (their handler left this host unacknowledged).
    package func release(_ deliveryIDs: [UUID]) async throws(FleetError) {
        throw Self.notBuilt
    }

    /// Handler bundle ids named by `NOTIFY docroute_deliveries`, as they come; `LISTEN` is made
    /// anew when its connection is lost, and "" is yielded after that (look at every handler).
    package nonisolated func wakeUps() -> AsyncStream<String> {
        AsyncStream { _ in }
    }

    /// Counts per state for `status` and metrics.
    package func tally() async throws(FleetError) -> FleetTally {
        throw Self.notBuilt
    }
}
