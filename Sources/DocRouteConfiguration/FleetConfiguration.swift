import Foundation

/// The `[fleet]` table: this host joins a fleet of docrouted hosts sharing one PostgreSQL database.
/// Absent, nothing of the fleet is used. Every key takes effect at a start only.
package struct FleetConfiguration: Sendable, Hashable {
    /// Where the database is: `database` parsed (its password is never part of it).
    package var database: FleetDatabaseAddress
    /// This host's name in the fleet (`host_name`); the machine's name by default.
    package var hostName: String
    /// The file holding the database password (`password_file`), absolute or, when relative, a
    /// name in `$CREDENTIALS_DIRECTORY` (systemd's `LoadCredential=`). Read at start, never logged.
    package var passwordFile: String?
    /// Seconds a host's heartbeat, and later its claims, stay good (`lease_seconds`); the host
    /// beats every third of it.
    package var leaseSeconds: Int = 30
    /// PEM certificates of the authorities the server's certificate must chain to (`ca_file`),
    /// for `sslmode=verify-ca` and `verify-full`; the system's trust store when nil.
    package var caFile: String?
    /// Days a document's bytes stay in the database after every delivery of it has ended
    /// (`retain_days`): 0, the default, deletes them with the last acknowledgement; otherwise the
    /// fleet's pruning deletes them once they are older (``DocRouteFleet/FleetPruning``).
    package var retainDays: Int = 0

    package init(database: FleetDatabaseAddress, hostName: String, passwordFile: String? = nil, leaseSeconds: Int = 30, caFile: String? = nil) {
        self.database = database
        self.hostName = hostName
        self.passwordFile = passwordFile
        self.leaseSeconds = leaseSeconds
        self.caFile = caFile
    }

    /// The seconds between two heartbeats: a third of the lease, so two may be missed before it runs out.
    package var heartbeatSeconds: Double { Double(leaseSeconds) / 3 }
}
