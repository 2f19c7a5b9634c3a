import DocRouteFleet
import DocRouteLedger
import DocRouteProtocol
import Foundation

extension FleetDelivery {
    /// The reply to `history` on a host in a fleet: this host's ledger's documents merged with
    /// the fleet's (``FleetHistoryMerge``), and `fleet`, whether the fleet's part could be read
    /// (`{"host","readable"}`, with `error` when not: the documents are then this host's alone).
    package func history(_ request: HistoryRequest, local: LedgerBackend) async -> Result<(documents: [JSONValue], fleet: JSONValue), ProtocolError> {
        let query: HistoryQuery
        switch LedgerBackend.historyQuery(request) {
        case .success(let read): query = read
        case .failure(let error): return .failure(error)
        }
        let mine: [DocumentHistory]
        do {
            mine = try await local.histories(query)
        } catch {
            return .failure(ProtocolError(code: .internal, message: "the ledger could not be read: \(error)"))
        }
        let host = queue.hostName
        let database = queue.database
        let ids = mine.compactMap(\.deliveryID)
        let fleetQuery = Self.fleetQuery(query)
        let logger = logger
        do {
            let shared = try await database.withConnection(logger: logger) { connection in
                // A state the fleet does not have (staged, quarantined, skipped): only what this
                // host's ledger found is looked up.
                try await FleetQueue.history(fleetQuery ?? FleetHistoryQuery(deliveryID: UUID(), limit: 1), including: ids,
                                             on: connection, logger: logger)
            }
            let merged = FleetHistoryMerge.merge(local: mine, fleet: shared, hostName: host, limit: query.limit)
            return .success((merged.map(\.json), .object(["host": .string(host), "readable": .bool(true)])))
        } catch {
            logger.info("fleet: history answered from this host's ledger alone; the fleet's part could not be read: \(error.message)")
            return .success((mine.map(\.json), .object([
                "host": .string(host), "readable": .bool(false),
                "error": .string("the fleet's database at \(database.address) could not be read: \(error.message)"),
            ])))
        }
    }

    /// The local query as the fleet's tables answer it; nil for a state only a host's ledger has.
    static func fleetQuery(_ query: HistoryQuery) -> FleetHistoryQuery? {
        var fleet = FleetHistoryQuery(deliveryID: query.deliveryID, name: query.name, path: query.path,
                                      bundleIdentifier: query.bundleIdentifier, since: query.since, until: query.until, limit: query.limit)
        switch query.state {
        case nil: break
        case .owed?: fleet.states = ["owed", "claimed"]
        case .acknowledged?:
            fleet.states = ["acknowledged"]
            fleet.handled = true
        case .declined?:
            fleet.states = ["acknowledged"]
            fleet.handled = false
        case .staged?, .quarantined?, .skipped?: return nil
        }
        return fleet
    }
}
