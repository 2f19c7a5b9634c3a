import DocRouteConfiguration
import DocRouteFleet
import DocRouteProtocol
import Foundation
import Logging

/// What a host in a fleet delivers with besides its own ledger: the intake's backend, which
/// commits inbox files to PostgreSQL, and the dispatcher, which claims the fleet's deliveries
/// for the handlers subscribed here. docrouted makes it with `[fleet]`; the daemon wires it.
package struct FleetDelivery: Sendable {
    package let backend: FleetIntakeBackend
    package let dispatcher: FleetDispatcher
    /// Launches, on the host the fleet chooses, a handler owed deliveries and connected nowhere.
    package let launcher: FleetLauncher
    let queue: FleetQueue
    let logger: Logger

    /// Both halves over `queue`, delivering locally through `local`; their claims and history
    /// events go over a second queue of the same database whose commits do not wait for the
    /// server's disk (``FleetQueue/init(database:hostName:synchronousCommit:logger:)``).
    package init(queue: FleetQueue, local: LedgerBackend, configuration: DaemonConfiguration, fleet: FleetConfiguration, logger: Logger) {
        self.queue = queue
        self.logger = logger
        let claims = FleetQueue(database: queue.database, hostName: queue.hostName, synchronousCommit: false, logger: logger)
        let history = FleetHistoryWriter(queue: claims, logger: logger)
        backend = FleetIntakeBackend(local: local, queue: queue, history: history, hostName: fleet.hostName,
                                     databaseAddress: fleet.database.text, logger: logger)
        dispatcher = FleetDispatcher(queue: queue, claims: claims, history: history, local: local, stateDirectory: configuration.stateDirectory,
                                     leaseSeconds: fleet.leaseSeconds, window: configuration.maxUnacknowledged, logger: logger)
        launcher = FleetLauncher(queue: queue, logger: logger)
    }
}

extension FleetDelivery {
    /// `status`'s `fleet` object: the hosts, their heartbeats, handlers and claims, and what is
    /// owed; or, when the database does not answer, that it does not and why. With it, the hosts
    /// each handler is subscribed on, for the handlers' `hosts`.
    package func status() async -> FleetStatusReading {
        let database = queue.database
        let host = queue.hostName
        do {
            let view = try await FleetView.read(database: database, hostName: host, logger: logger)
            return FleetStatusReading(json: view.json(hostName: host, database: database.address), hostName: host,
                                      liveHostsByHandler: view.liveHostsByHandler)
        } catch {
            return FleetStatusReading(json: FleetView.json(hostName: host, database: database.address, error: error), hostName: host,
                                      liveHostsByHandler: nil)
        }
    }
}

/// What the metrics take of the fleet, in plain values (Operations does not know the fleet).
package struct FleetFigures: Sendable {
    package var reachable: Bool
    package var hosts: [(name: String, claimed: Int, live: Bool)]
    package var owed: [String: Int]
}

extension FleetDelivery {
    /// The fleet read now, for the metrics.
    package func figures() async -> FleetFigures {
        let database = queue.database
        let host = queue.hostName
        guard let view = try? await FleetView.read(database: database, hostName: host, logger: logger) else {
            return FleetFigures(reachable: false, hosts: [], owed: [:])
        }
        return FleetFigures(reachable: true, hosts: view.hosts.map { ($0.name, $0.claimed, $0.isLive) }, owed: view.owedByHandler)
    }
}
