import DocRouteConfiguration
import DocRouteFleet
import Foundation
import Logging

/// What a host in a fleet delivers with besides its own ledger: the intake's backend, which
/// commits inbox files to PostgreSQL, and the dispatcher, which claims the fleet's deliveries
/// for the handlers subscribed here. docrouted makes it with `[fleet]`; the daemon wires it.
package struct FleetDelivery: Sendable {
    package let backend: FleetIntakeBackend
    package let dispatcher: FleetDispatcher

    /// Both halves over one ``FleetQueue``, delivering locally through `local`.
    package init(queue: FleetQueue, local: LedgerBackend, configuration: DaemonConfiguration, fleet: FleetConfiguration, logger: Logger) {
        backend = FleetIntakeBackend(local: local, queue: queue, hostName: fleet.hostName, databaseAddress: fleet.database.text, logger: logger)
        dispatcher = FleetDispatcher(queue: queue, local: local, stateDirectory: configuration.stateDirectory,
                                     leaseSeconds: fleet.leaseSeconds, logger: logger)
    }
}
